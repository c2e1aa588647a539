"""`skills.manage`: the cases are LiveAgent's own (`services/skills/tests.rs`: install with
backup, archive install, zip slip, validate-and-package round trip, delete, failed overwrite
keeps the old skill, staging drained, hidden folders skipped by list)."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from toolbench import Profile, Workbench


def _skill(root: Path, name: str, description: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
    return folder


@pytest.fixture
def ws(tmp_path):
    with Workbench(workspace=tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:skills.manage"])) as b:
        inv = b.invocation()
        yield b.workspace, lambda **a: inv.call("skills_manage", a)


def test_install_with_backup_keeps_the_old_copy(ws):
    root, call = ws
    _skill(root / "work/a", "sample-skill", "Old")
    _skill(root / "work/b", "sample-skill", "New")
    first = call(action="install", source="work/a/sample-skill", conflict="fail")
    assert not first.is_error and first.structured["installed"][0]["backup"] is None
    second = call(action="install", source="work/b/sample-skill")
    assert not second.is_error and second.structured["installed"][0]["backup"]
    assert "New" in (root / "skills/sample-skill/SKILL.md").read_text()
    assert any((root / "skills/.backups").iterdir())
    assert list((root / "skills/.staging").glob("*")) == []  # drained (and removed when empty)
    assert call(action="install", source="work/a/sample-skill", conflict="fail").error_code == "skills.exists"


def test_install_from_a_skill_archive(ws):
    root, call = ws
    buf = root / "work/archive-skill.skill"
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive-skill/SKILL.md", "---\nname: archive-skill\ndescription: Archive install\n---\n\n# A\n")
    res = call(action="install", source="work/archive-skill.skill", conflict="fail")
    assert not res.is_error, res.content
    assert (root / "skills/archive-skill/SKILL.md").is_file()
    assert [s["name"] for s in call(action="list").structured["skills"]] == ["archive-skill"]


@pytest.mark.parametrize("entry", ["../evil.txt", "/abs.txt", "a/../../evil.txt"])
def test_archive_escapes_are_refused(ws, entry):
    root, call = ws
    with zipfile.ZipFile(root / "work/bad.zip", "w") as zf:
        zf.writestr(entry, "bad")
    assert call(action="install", source="work/bad.zip").error_code == "skills.archive_unsafe"
    assert not (root / "evil.txt").exists() and not (root / "skills/evil.txt").exists()


def test_archive_links_and_bombs_are_refused(ws):
    root, call = ws
    link = zipfile.ZipInfo("s/link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(root / "work/link.zip", "w") as zf:
        zf.writestr(link, "/etc/passwd")
    assert call(action="install", source="work/link.zip").error_code == "skills.archive_unsafe"
    with zipfile.ZipFile(root / "work/bomb.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("s/SKILL.md", b"\0" * (51 * 1024 * 1024))
    assert call(action="install", source="work/bomb.zip").error_code == "skills.archive_too_large"
    (root / "work/junk.zip").write_bytes(b"not a zip")
    assert call(action="install", source="work/junk.zip").error_code == "skills.archive_invalid"


def test_failed_overwrite_leaves_the_live_skill(ws):
    root, call = ws
    _skill(root / "work/good", "stable-skill", "Stable")
    assert not call(action="install", source="work/good/stable-skill").is_error
    _skill(root / "work/bad", "different-name", "Bad")
    res = call(action="install", source="work/bad/different-name", name="stable-skill", conflict="overwrite")
    assert res.error_code == "skills.invalid"
    assert "Stable" in (root / "skills/stable-skill/SKILL.md").read_text()


def test_validate_and_package_round_trip(ws):
    root, call = ws
    _skill(root / "skills", "package-skill", "Package test")
    assert call(action="validate", name="package-skill").structured["ok"] is True
    res = call(action="package", name="package-skill")
    assert not res.is_error
    assert zipfile.ZipFile(io.BytesIO(Path(res.structured["archive"]).read_bytes())).namelist() == [
        "package-skill/SKILL.md"]


@pytest.mark.parametrize(("text", "ok"), [
    ("---\nname: m-skill\ndescription: x\nmetadata:\n  short-description: nested\n---\n", True),
    ("---\nname: m-skill\ndescription: \u591a\u8bed\u8a00\n---\n# \u591a\n", True),
    ("---\nname: m-skill\ndescription: x\nextra: 1\n---\n", False),
    ("---\nname: m-skill\ndescription: a <b>\n---\n", False),
    ("---\nname: other\ndescription: x\n---\n", False),
    ("---\nname: m-skill\n---\n", False),
    ("no front matter", False),
])
def test_validate_follows_upstream_rules(ws, text, ok):
    root, call = ws
    (root / "skills/m-skill").mkdir(parents=True)
    (root / "skills/m-skill/SKILL.md").write_text(text)
    assert call(action="validate", name="m-skill").structured["ok"] is ok


def test_validate_flags_scripts_without_shebang_and_forbidden_docs(ws):
    root, call = ws
    folder = _skill(root / "skills", "s-skill", "x")
    (folder / "run.sh").write_text("echo hi\n")
    (folder / "README.md").write_text("docs\n")
    assert len(call(action="validate", name="s-skill").structured["errors"]) == 2


@pytest.mark.parametrize("name", ["Upper", "a--b", "-a", "con", "a" * 65, "a_b"])
def test_bad_names_are_refused(ws, name):
    _, call = ws
    assert call(action="delete", name=name).error_code == "skills.name_invalid"


def test_create_then_read_and_delete(ws):
    _, call = ws
    res = call(action="create", name="Multilingual Create Skill", description="\u521b\u5efa",
               body="# \u4e2d\u6587 Skill", files=[{"path": "refs/a.md", "content": "hi"}])
    assert not res.is_error, res.content
    assert res.structured["name"] == "multilingual-create-skill"
    assert "\u4e2d\u6587" in call(action="read", path="skill://multilingual-create-skill").content
    assert call(action="read", path="skill:multilingual-create-skill/refs/a.md").content == "hi"
    assert call(action="create", name="multilingual-create-skill", description="x").error_code == "skills.exists"
    assert call(action="create", name="x-skill", description="x",
                files=[{"path": "../e", "content": ""}]).error_code == "skills.path_invalid"
    assert not call(action="delete", name="multilingual-create-skill").is_error
    assert call(action="delete", name="multilingual-create-skill").error_code == "skills.not_found"


def test_list_skips_hidden_folders_and_unsupported_sources_are_coded(ws):
    root, call = ws
    _skill(root / "skills", "active-skill", "Active")
    _skill(root / "skills/.backups", "backup-skill", "Backup")
    assert [s["name"] for s in call(action="list").structured["skills"]] == ["active-skill"]
    assert call(action="install", source="https://x/y.zip").error_code == "skills.source_unsupported"
    assert call(action="clawhub_search").error_code == "skills.action_unsupported"


def test_other_tools_still_see_skills_read_only(tmp_path):
    profile = Profile.default().edit(allow=["builtin:workspace.write_file"])
    with Workbench(workspace=tmp_path / "ws", profile=profile) as b:
        _skill(b.workspace / "skills", "ro-skill", "x")
        res = b.invocation().call("workspace_write_file", {"path": "skills/ro-skill/x.md", "content": "x"})
        assert res.error_code == "workspace.path_not_writable"


def _listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def _zip(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zf.writestr(zipfile.ZipInfo(name), data)
    return path


def _patched(path: Path, entries: list[tuple[str, bytes]], patch) -> Path:
    """A zip of `entries` whose raw bytes `patch` rewrites (a bad CRC, the encrypted flag)."""
    _zip(path, entries)
    path.write_bytes(patch(path.read_bytes()))
    return path


def _flip_crc(data: bytes) -> bytes:
    # The local header's CRC-32 is at offset 14, the central directory's at 16 of its record.
    out = bytearray(data)
    central = data.index(b"PK\x01\x02")
    for at in (14, central + 16):
        out[at] ^= 0xFF
    return bytes(out)


def _set_encrypted(data: bytes) -> bytes:
    out = bytearray(data)
    central = data.index(b"PK\x01\x02")
    for at in (6, central + 8):  # general-purpose flag bit 0 in the local and central headers
        out[at] |= 0x01
    return bytes(out)


SKILL_MD = b"---\nname: zipped\ndescription: x\n---\n\n# Z\n"
MALFORMED = {
    "duplicate": lambda p: _zip(p, [("zipped/SKILL.md", SKILL_MD), ("zipped/SKILL.md", SKILL_MD)]),
    "file-then-folder": lambda p: _zip(p, [("zipped/SKILL.md", SKILL_MD), ("zipped/ref", b"x"),
                                           ("zipped/ref/a.md", b"y")]),
    "dot-entry": lambda p: _zip(p, [("zipped/SKILL.md", SKILL_MD), (".", b"x")]),
    "long-name": lambda p: _zip(p, [("zipped/SKILL.md", SKILL_MD), ("zipped/" + "n" * 256, b"x")]),
    "bad-crc": lambda p: _patched(p, [("zipped/SKILL.md", SKILL_MD)], _flip_crc),
    "encrypted": lambda p: _patched(p, [("zipped/SKILL.md", SKILL_MD)], _set_encrypted),
}


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_archive_is_coded_and_leaves_the_root_as_it_was(ws, case):
    root, call = ws
    _skill(root / "skills", "kept-skill", "Kept")
    before = _listing(root / "skills")
    (root / "work").mkdir(exist_ok=True)
    MALFORMED[case](root / "work" / "bad.zip")
    res = call(action="install", source="work/bad.zip")
    assert res.error_code == "skills.archive_invalid", res.content
    assert str(root) not in res.content and "/tmp" not in res.content
    assert _listing(root / "skills") == before


@pytest.mark.parametrize("name", ["../escape", "skills/nested", "a\\b", ".hidden", "a..b", "x_y"])
def test_create_refuses_names_outside_the_rule_instead_of_rewriting_them(ws, name):
    root, call = ws
    _skill(root / "skills", "kept-skill", "Kept")
    before = _listing(root / "skills")
    assert call(action="create", name=name, description="x").error_code == "skills.name_invalid"
    assert _listing(root / "skills") == before
    assert not (root / "escape").exists() and not (root / "skills/escape").exists()


@pytest.mark.parametrize(("name", "made"), [("My Skill", "my-skill"), ("  Tidy  Notes ", "tidy-notes"),
                                            ("UPPER", "upper")])
def test_create_folds_case_and_spaces_as_upstream_does(ws, name, made):
    _, call = ws
    res = call(action="create", name=name, description="x")
    assert not res.is_error, res.content
    assert res.structured["name"] == made
