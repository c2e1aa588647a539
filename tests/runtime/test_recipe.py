"""BenchRecipe: what another bench (a cluster worker, a workspace copy) needs to be this one,
and the workspace's files packed without the runtime's records, the sign-in tokens or what a
hostile workspace planted."""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deadline import run_with_deadline
from toolbench import Profile, ToolbenchError, Workbench
from toolbench.runtime.recipe import BenchRecipe
from toolbench.runtime.workspace_pack import unpack


def shout(text: str) -> str:
    return text.upper()


def refuse(request: object) -> bool:
    return False


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    b = Workbench(tmp_path / "ws", Profile.default().edit(allow=["builtin:workspace.read_file",
                                                               "extension/lab:shout", "builtin:dice.roll"]), seed=5)
    (b.workspace / "work" / "notes.md").parent.mkdir(exist_ok=True)
    (b.workspace / "work" / "notes.md").write_text("dragons\n", encoding="utf-8")
    b.register_tool("lab", shout, input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    yield b
    b.close()


def test_a_built_bench_is_the_same_bench_in_its_own_folder(bench: Workbench) -> None:
    bench.set_permission("builtin:dice.roll", "ask")
    bench.on_approval(refuse)
    chat = bench.workspace.parent / "chat.jsonl"
    chat.write_text('{"role": "user", "name": "Ann", "content": "hello"}\n', encoding="utf-8")
    bench.load_chat(chat)
    bench.mcp.add("later", command=["mcp-server-time"], connect=False, enabled=False)
    recipe = pickle.loads(pickle.dumps(BenchRecipe.of(bench)))  # it travels as a pickle does
    copy = recipe.build()
    try:
        assert copy.workspace != bench.workspace
        assert [str(d.id) for d in copy.catalog()] == [str(d.id) for d in bench.catalog()]
        assert copy.permission("builtin:dice.roll") == "ask"
        assert copy.profile == bench.profile
        inv = copy.invocation()
        assert inv.call("shout", {"text": "hi"}).content == "HI"
        assert "dragons" in inv.call("workspace_read_file", {"path": "work/notes.md"}).content
        assert inv.call("dice_roll", {"formula": "1d6"}).error_code == "tool.approval_denied"  # its handler came too
        [server] = copy.mcp.servers
        assert server.name == "later" and server.state == "disabled"
        [options] = copy.mcp.registrations()
        assert options.transport.cwd == os.getcwd()  # a worker starts elsewhere: the folder is fixed
        assert copy._kernel.chat is not None and copy._kernel.chat == bench._kernel.chat
    finally:
        copy.close()
    assert not copy.workspace.exists()  # the copy's folder goes with it


def test_a_build_that_fails_closes_what_it_made(bench: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    made: list[str] = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    recipe = BenchRecipe.of(bench)
    broken = BenchRecipe(**{**recipe.__dict__, "permissions": (("builtin:nope.nope", "ask"),)})
    with pytest.raises(ToolbenchError):
        broken.build()
    assert len(made) == 1 and not Path(made[0]).exists()  # the copy's folder went with it


def test_a_hostile_workspace_packs_only_its_plain_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "work").mkdir(parents=True)
    (ws / "work" / "kept.md").write_text("kept", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret", encoding="utf-8")
    (ws / "work" / "abs").symlink_to(secret)  # an absolute link out
    (ws / "work" / "up").symlink_to("../../secret.txt")  # a relative one
    (ws / "work" / "inside").symlink_to("kept.md")  # a link that stays in: kept
    os.mkfifo(ws / "work" / "pipe")  # opened, it would block the packer forever
    (ws / ".toolbench" / "mcp").mkdir(parents=True)
    (ws / ".toolbench" / "mcp" / "tokens.json").write_text('{"access_token": "s3cret"}', encoding="utf-8")
    (ws / "tool-results").mkdir()
    (ws / "tool-results" / "r.txt").write_text("old result", encoding="utf-8")
    (ws / "work" / ".toolbench").mkdir()  # only the top-level runtime folder is left out
    (ws / "work" / ".toolbench" / "mine.md").write_text("a user's own", encoding="utf-8")
    found = run_with_deadline(f"""
from pathlib import Path
from toolbench.runtime.workspace_pack import pack, unpack
into = Path({str(tmp_path / "into")!r})
unpack(pack(Path({str(ws)!r})), into)
report(sorted(str(p.relative_to(into)) + ("@" if p.is_symlink() else "") for p in into.rglob("*")))
""", deadline=30)
    assert found == ["work", "work/.toolbench", "work/.toolbench/mine.md", "work/inside@", "work/kept.md"]


def test_a_crafted_tar_cannot_write_outside(tmp_path: Path) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("../escaped.txt", "/tmp/abs-escaped.txt", "ok.txt"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    unpack(buffer.getvalue(), tmp_path / "into")
    into = tmp_path / "into"
    # `..` and the link out are refused; an absolute name lands inside, its slash stripped.
    assert sorted(str(p.relative_to(into)) for p in into.rglob("*")) == ["ok.txt", "tmp", "tmp/abs-escaped.txt"]
    assert not (tmp_path / "escaped.txt").exists()



def test_installed_sources_are_added_again_where_the_recipe_is_built_not_pickled(tmp_path: Path) -> None:
    from plugin_support import installed_sources

    profile = Profile.default().edit(allow=["remote/api:search"])
    with installed_sources(tmp_path / "site", {"remote": "tb_sources:Remote"}), \
            Workbench(tmp_path / "ws", profile) as bench:
        assert bench.add_installed_sources() == []
        recipe = BenchRecipe.of(bench)
        assert recipe.sources == () and recipe.installed == ("remote = tb_sources:Remote",)
        assert not [what for what, _, _ in recipe.parts() if what.startswith("tool source")]
        with recipe.build(tmp_path / "copy") as built:
            assert built.invocation("chat").call("search", {}).content == "found"
    with pytest.raises(ToolbenchError) as missing:  # where the package is not installed
        recipe.build(tmp_path / "elsewhere")
    assert missing.value.code == "bench.misuse" and "remote = tb_sources:Remote" in missing.value.message
