"""Hostile front matter and hostile files where skills and memories are read.

A "billion laughs" YAML document (anchors and aliases nesting nine deep) in a SKILL.md the model
writes and installs, in a planted `skills/*/SKILL.md` that `list` reads, and in a planted memory
file that `memory_query list` indexes, is refused with a coded error naming the file, fast and in
little memory; the other skills and memories are still listed. A FIFO or a link to /dev/zero where
a skill or memory file should be neither hangs a call nor is read forever.

Each case runs in a child process with a deadline and an address-space cap.
"""

from __future__ import annotations

import pytest

from tests.deadline import run_with_deadline

# Nine levels of nine "lol"s: 9**9 of them once the aliases are expanded (the classic alias bomb).
LEVELS = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 9))

PRELUDE = """
import sys
from pathlib import Path
from toolbench import Profile, Workbench
ws = Path(sys.argv[1])
profile = Profile.default().edit(allow=["builtin:skills.manage", "builtin:memory.query",
                                        "builtin:workspace.write_file"])
def good_skill(folder, name):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\\nname: {name}\\ndescription: fine\\n---\\n\\n# {name}\\n")
"""


def _bomb_note() -> str:
    """A memory file whose description is the bomb's ninth level."""
    return f"---\nname: bomb-note\n{LEVELS}description: *l8\ntype: project\nscope: project\n---\n\nboom\n"


def _bomb_skill() -> str:
    """A SKILL.md whose name and description are the bomb's ninth level."""
    return f"---\n{LEVELS}name: *l8\ndescription: *l8\n---\n\n# Bomb\n"


def test_installing_a_model_written_alias_bomb_is_refused_fast(tmp_path):
    script = PRELUDE + """
with Workbench(ws, profile=profile) as b:
    inv = b.invocation()
    w = inv.call("workspace_write_file", {"path": "work/bomb/SKILL.md", "content": sys.argv[2]})
    assert not w.is_error, w.content
    before = sorted(p.name for p in (ws / "skills").rglob("*")) if (ws / "skills").exists() else None
    r = inv.call("skills_manage", {"action": "install", "source": "work/bomb"})
    after = sorted(p.name for p in (ws / "skills").rglob("*")) if (ws / "skills").exists() else None
    report([r.error_code, "work/bomb/SKILL.md" in r.content, str(ws) in r.content, before == after])
"""
    code, named, leaked, unchanged = run_with_deadline(script, args=(str(tmp_path / "ws"), _bomb_skill()),
                                                       deadline=10, memory_mb=1024)
    assert code == "skills.front_matter_invalid"
    assert named and not leaked and unchanged


def test_listing_skills_reports_the_bomb_and_lists_the_others(tmp_path):
    script = PRELUDE + """
good_skill(ws / "skills" / "alpha", "alpha")
(ws / "skills" / "bomb").mkdir(parents=True)
(ws / "skills" / "bomb" / "SKILL.md").write_text(sys.argv[2])
good_skill(ws / "skills" / "omega", "omega")
with Workbench(ws, profile=profile) as b:
    r = b.invocation().call("skills_manage", {"action": "list"})
    skills = r.structured["skills"]
    report([r.is_error, [s["name"] for s in skills], [s.get("code") for s in skills],
            [s["description"] for s in skills], str(ws) in r.content])
"""
    is_error, names, codes, descriptions, leaked = run_with_deadline(
        script, args=(str(tmp_path / "ws"), _bomb_skill()), deadline=10, memory_mb=1024)
    assert not is_error and not leaked
    assert names == ["alpha", "bomb", "omega"]
    assert codes == [None, "skills.front_matter_invalid", None]
    assert descriptions == ["fine", "", "fine"]


def test_listing_memories_reports_the_bomb_and_lists_the_others(tmp_path):
    script = PRELUDE + """
project = ws / ".toolbench" / "memory" / "project"
project.mkdir(parents=True)
(project / "bomb-note.md").write_text(sys.argv[2])
(project / "good-note.md").write_text("---\\nname: good-note\\ndescription: Good\\ntype: project\\n"
                                      "scope: project\\n---\\n\\nfine\\n")
with Workbench(ws, profile=profile) as b:
    r = b.invocation().call("memory_query", {"action": "list"})
    report([r.is_error, [e["slug"] for e in r.structured["entries"]],
            [(p["path"], p["code"]) for p in r.structured["problems"]], str(ws) in r.content])
"""
    is_error, slugs, problems, leaked = run_with_deadline(script, args=(str(tmp_path / "ws"), _bomb_note()),
                                                          deadline=10, memory_mb=1024)
    assert not is_error and not leaked
    assert slugs == ["good-note"]
    assert problems == [[".toolbench/memory/project/bomb-note.md", "memory.front_matter_invalid"]]


PLANT = """
import os
def plant(path, kind):
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        os.symlink("/dev/zero", path)
    else:  # a sparse regular file of 4 GiB: reading it whole would take all the memory there is
        with open(path, "wb") as f:
            f.truncate(4 << 30)
"""
KINDS = ["fifo", "zero", "huge"]


@pytest.mark.parametrize("where", ["project/x.md", "global/daily/.archive/2025/2025-01-01.md"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_device_or_huge_memory_file_is_reported_not_read(tmp_path, kind, where):
    script = PRELUDE + PLANT + """
memory = ws / ".toolbench" / "memory"
plant(memory / sys.argv[3], sys.argv[2])
(memory / "project").mkdir(parents=True, exist_ok=True)
(memory / "project" / "good-note.md").write_text("---\\nname: good-note\\ndescription: Good\\ntype: project\\n"
                                                 "scope: project\\n---\\n\\nfine\\n")
with Workbench(ws, profile=profile) as b:
    r = b.invocation().call("memory_query", {"action": "list", "include_daily": True})
    report([r.is_error, [e["slug"] for e in r.structured["entries"]],
            [(p["path"], p["code"]) for p in r.structured["problems"]]])
"""
    is_error, slugs, problems = run_with_deadline(script, args=(str(tmp_path / "ws"), kind, where),
                                                  deadline=10, memory_mb=1024)
    assert not is_error
    assert slugs == ["good-note"]
    assert problems == [[f".toolbench/memory/{where}", "memory.file_unreadable"]]


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_device_or_huge_skill_file_neither_hangs_nor_is_read_whole(tmp_path, kind):
    script = PRELUDE + PLANT + """
good_skill(ws / "skills" / "alpha", "alpha")
plant(ws / "skills" / "bad-skill" / "SKILL.md", sys.argv[2])
plant(ws / "work" / "bad-skill" / "SKILL.md", sys.argv[2])
with Workbench(ws, profile=profile) as b:
    inv = b.invocation()
    listed = inv.call("skills_manage", {"action": "list"})
    validated = inv.call("skills_manage", {"action": "validate", "name": "bad-skill"})
    installed = inv.call("skills_manage", {"action": "install", "source": "work/bad-skill"})
    report([listed.is_error, {s["name"]: s.get("code") for s in listed.structured["skills"]},
            validated.structured["ok"], installed.error_code, str(ws) in installed.content + validated.content])
"""
    is_error, names, valid, code, leaked = run_with_deadline(script, args=(str(tmp_path / "ws"), kind),
                                                            deadline=10, memory_mb=1024)
    assert not is_error and names["alpha"] is None and valid is False and not leaked
    assert names.get("bad-skill", "absent") is not None  # a skill listed with a bad SKILL.md carries its code
    assert code is not None and code.startswith("skills.")
