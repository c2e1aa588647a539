"""`read_regular_file`, the one bounded reader of the files a user names (an mcp.json, a
profile, a replay source): a regular file only, never a block on a FIFO or a device, a cap."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.deadline import run_with_deadline
from toolbench.core.fileio import read_regular_file


def test_a_regular_file_and_a_link_to_one_are_read_whole(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 100_000)
    (tmp_path / "link").symlink_to(tmp_path / "f")
    assert read_regular_file(tmp_path / "f", 100_000) == b"x" * 100_000
    assert read_regular_file(str(tmp_path / "link"), 100_000) == b"x" * 100_000
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular_file(tmp_path / "empty", 10) == b""


def test_a_file_over_the_limit_is_refused_not_cut(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 11)
    with pytest.raises(OSError) as caught:
        read_regular_file(tmp_path / "f", 10)
    assert caught.value.errno == errno.EFBIG


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError) as caught:
        read_regular_file(tmp_path, 10)
    assert caught.value.errno == errno.EISDIR


def test_a_missing_file_is_the_systems_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "none", 10)


def test_a_fifo_and_a_device_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    seen = run_with_deadline("""
import errno, sys
from toolbench.core.fileio import read_regular_file
out = []
for path in sys.argv[1:]:
    try:
        read_regular_file(path, 1 << 20)
        out.append("read")
    except OSError as exc:
        out.append(errno.errorcode[exc.errno])
report(out)
""", args=(str(fifo), "/dev/zero"), deadline=20)
    assert seen == ["EINVAL", "EINVAL"]
