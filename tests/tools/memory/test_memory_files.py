"""Memory files the store did not write: a note whose front matter is refused, or that is no
regular file, is reported by `list` (path and code, no host path), left out of the index and
never written over; the other notes are listed as before."""

from __future__ import annotations

import os

import pytest
from memory_support import note


def _project(bench):
    folder = bench.workspace / ".toolbench" / "memory" / "project"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


GOOD = "---\nname: good-note\ndescription: Good\ntype: project\nscope: project\n---\n\nfine\n"
BAD = {
    "not-yaml": ("---\nname: bad-note\ndescription: [unclosed\n---\n\nx\n", "memory.front_matter_invalid"),
    "alias": ("---\nname: bad-note\nd: &d x\ndescription: *d\n---\n\nx\n", "memory.front_matter_invalid"),
    "not-utf8": (b"---\nname: bad-note\ndescription: \xff\n---\n\nx\n", "memory.file_unreadable"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_note_is_reported_and_the_others_listed(bench, mem, case):
    text, code = BAD[case]
    folder = _project(bench)
    (folder / "good-note.md").write_text(GOOD)
    bad = folder / "bad-note.md"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    listing = mem("list")
    assert not listing.is_error, listing.content
    assert [e["slug"] for e in listing.structured["entries"]] == ["good-note"]
    assert [(p["path"], p["code"]) for p in listing.structured["problems"]] == [
        (".toolbench/memory/project/bad-note.md", code)]
    assert str(bench.workspace) not in listing.content and code in listing.content


def test_a_note_that_turns_bad_leaves_the_index_and_its_file_is_not_written_over(bench, inv, mem):
    assert not mem("write", **note("turns-bad", scope="project", type="project")).is_error
    path = _project(bench) / "turns-bad.md"
    planted = "---\nname: turns-bad\ndescription: &d x\n---\n\nuser text\n"
    path.write_text(planted)
    fresh = bench.invocation()  # a new invocation reconciles the index with the files
    listing = fresh.call("memory_manage", {"action": "list"})
    assert listing.structured["entries"] == []
    assert [p["code"] for p in listing.structured["problems"]] == ["memory.front_matter_invalid"]
    again = fresh.call("memory_manage", {"action": "write", **note("turns-bad", scope="project", type="project")})
    assert again.error_code == "memory.slug_exists"
    assert path.read_text() == planted


def test_a_link_out_of_the_store_is_refused_not_followed(bench, mem, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: secret\ndescription: Secret\ntype: project\n---\n\nthe secret\n")
    os.symlink(secret, _project(bench) / "secret.md")
    listing = mem("list")
    assert listing.structured["entries"] == []
    assert [p["code"] for p in listing.structured["problems"]] == ["memory.file_unreadable"]
    assert mem("search", query="secret").structured["matches"] == []


def test_a_memory_folder_linked_out_of_the_workspace_is_neither_read_nor_written(bench, mem, tmp_path):
    # `.toolbench/memory/project` planted as a link to a host folder full of notes.
    host = tmp_path / "host-notes"
    host.mkdir()
    (host / "secret.md").write_text("---\nname: secret\ndescription: Secret\ntype: project\n---\n\nthe secret\n")
    project = bench.workspace / ".toolbench" / "memory" / "project"
    project.parent.mkdir(parents=True, exist_ok=True)
    project.symlink_to(host)
    listing = mem("list")
    assert not listing.is_error and listing.structured["entries"] == []
    assert "the secret" not in listing.content
    written = mem("write", **note("new-note", scope="project", type="project"))
    assert written.error_code == "memory.folder_outside_workspace", written.content
    assert sorted(p.name for p in host.iterdir()) == ["secret.md"]


def test_a_memory_store_linked_out_of_the_workspace_is_refused(bench, mem, tmp_path):
    host = tmp_path / "host-store"
    host.mkdir()
    (bench.workspace / ".toolbench").mkdir(exist_ok=True)
    (bench.workspace / ".toolbench" / "memory").symlink_to(host)
    assert mem("list").error_code == "memory.folder_outside_workspace"
    assert list(host.iterdir()) == []
