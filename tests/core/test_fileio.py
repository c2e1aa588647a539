"""The file primitives: a temp file is unique, created exclusively and never followed; writers of
one path in one process each publish their own bytes whole; a failure leaves no temp file."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from tests.deadline import run_with_deadline
from toolbench import ToolbenchError
from toolbench.core import fileio

ROUND = re.compile(r"\.?round-(\d+)-")  # toolbench/runtime/store.py `_ROUND`: it finds temp files too


def _temps(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


@pytest.mark.parametrize("write", [fileio.write_atomic, fileio.write_once])
def test_a_link_at_the_old_temp_name_is_not_followed(tmp_path, write) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / f".f.txt.{os.getpid()}.tmp").symlink_to(victim)
    write(folder / "f.txt", "new")
    assert victim.read_text() == "keep"
    assert not (folder / "f.txt").is_symlink() and (folder / "f.txt").read_text() == "new"


@pytest.mark.parametrize("write", [fileio.write_atomic, fileio.write_once])
def test_a_taken_temp_name_is_skipped_not_followed(tmp_path, monkeypatch, write) -> None:
    # Every temp name is random; when one is taken (here: by a link out), another is drawn.
    victim = tmp_path / "victim"
    victim.write_text("keep")
    tokens = iter(["taken", "free"])
    monkeypatch.setattr(fileio, "_token", lambda: next(tokens))
    (tmp_path / ".f.txt.taken.tmp").symlink_to(victim)
    write(tmp_path / "f.txt", "new")
    assert victim.read_text() == "keep" and (tmp_path / "f.txt").read_text() == "new"
    assert _temps(tmp_path) == [".f.txt.taken.tmp"]


def test_replace_at_skips_a_taken_temp_name_and_replaces_a_link_as_an_entry(tmp_path, monkeypatch) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / ".f.txt.taken.tmp").symlink_to(victim)
    (folder / "f.txt").symlink_to(victim)  # the target itself a link: replaced, not followed
    tokens = iter(["taken", "free"])
    monkeypatch.setattr(fileio, "_token", lambda: next(tokens))
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        st = fileio.replace_at(fd, "f.txt", b"new", durable=False)
    finally:
        os.close(fd)
    assert victim.read_text() == "keep" and not (folder / "f.txt").is_symlink()
    assert (folder / "f.txt").read_bytes() == b"new" and os.stat(folder / "f.txt").st_ino == st.st_ino
    assert _temps(folder) == [".f.txt.taken.tmp"]


def test_temp_names_are_hidden_tmp_and_keep_the_round_prefix(tmp_path, monkeypatch) -> None:
    seen: list[str] = []
    real = os.replace

    def spy(src, dst, *args, **kwargs):
        seen.append(os.path.basename(src))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(fileio.os, "replace", spy)
    fileio.write_atomic(tmp_path / "round-012-call_0001.txt", "x")
    fileio.write_atomic(tmp_path / ("n" * 255), "x")  # a longest name still gets a temp name
    match = ROUND.match(seen[0])
    assert seen[0].startswith(".") and seen[0].endswith(".tmp") and match is not None and match.group(1) == "012"
    assert len(os.fsencode(seen[1])) <= 255
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("write", [fileio.write_atomic, fileio.write_once])
def test_a_failed_write_raises_storage_write_failed_and_leaves_no_temp(tmp_path, monkeypatch, write) -> None:
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(fileio.os, "replace" if write is fileio.write_atomic else "link", full)
    with pytest.raises(ToolbenchError) as info:
        write(tmp_path / "f.txt", "x")
    assert info.value.code == "storage.write_failed"
    assert os.listdir(tmp_path) == []


def test_write_once_refuses_an_existing_file(tmp_path) -> None:
    fileio.write_once(tmp_path / "f", "a")
    with pytest.raises(ToolbenchError) as info:
        fileio.write_once(tmp_path / "f", "b")
    assert info.value.code == "storage.already_exists"
    assert (tmp_path / "f").read_text() == "a" and os.stat(tmp_path / "f").st_mode & 0o222 == 0
    assert _temps(tmp_path) == []


def test_two_threads_writing_the_same_paths_each_publish_whole_bytes(tmp_path) -> None:
    result = run_with_deadline("""
        import os, sys, threading
        from pathlib import Path
        from toolbench.core.fileio import write_atomic
        sys.setswitchinterval(1e-5)
        folder = Path(sys.argv[1])
        texts = {"A": b"A" * 200_000, "B": b"B" * 120_000}
        errors = []
        def writer(letter):
            for i in range(150):
                try:
                    write_atomic(folder / f"f{i}", texts[letter], durable=False)
                except Exception as exc:
                    errors.append(repr(exc))
        threads = [threading.Thread(target=writer, args=(k,)) for k in texts]
        for t in threads: t.start()
        for t in threads: t.join()
        torn = sum((folder / f"f{i}").read_bytes() not in texts.values() for i in range(150))
        report({"torn": torn, "errors": errors[:3], "temps": [n for n in os.listdir(folder) if n.endswith(".tmp")]})
    """, args=(str(tmp_path),), deadline=60)
    assert result == {"torn": 0, "errors": [], "temps": []}
