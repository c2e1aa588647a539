"""A disk write that fails gives its documented error: a workspace write becomes a recoverable
`workspace.io_error` result; a `tool-results/` file that cannot be written raises
`storage.write_failed` out of `inv.call` (storage failures raise) and leaves no half file.
The failure is injected at the low-level calls of `toolbench.core.fileio`."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from toolbench import ToolbenchError
from toolbench.core import fileio

BIG = "x" * 5_000


def _fail_under(monkeypatch, name: str, marker: str, suffix: str = "") -> list[str]:
    """Make `os.<name>` fail with ENOSPC for destinations containing `marker`, ending in `suffix`."""
    real = getattr(os, name)
    refused: list[str] = []

    def failing(src, dst, *args, **kwargs):
        if marker in str(dst) and str(dst).endswith(suffix):
            refused.append(str(dst))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(fileio.os, name, failing)
    return refused


def _stray(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


def _reloads(make_bench, bench, inv, profile) -> None:
    bench.flush()
    fresh = make_bench("ws", profile=profile).open_invocation(inv.id)
    assert [r.to_json() for r in fresh.records] == [r.to_json() for r in inv.records]
    assert fresh.budget() == inv.budget()


def test_a_failing_workspace_write_is_a_recoverable_io_error(make_bench, profile_with, monkeypatch):
    profile = profile_with("builtin:workspace.read_file", "builtin:workspace.write_file")
    bench = make_bench(profile=profile)
    inv = bench.invocation("session")
    assert not inv.call("workspace_write_file", {"path": "work/a.md", "content": "old\n"}).is_error
    assert not inv.call("workspace_read_file", {"path": "work/a.md"}).is_error

    refused = _fail_under(monkeypatch, "replace", "a.md")
    result = inv.call("workspace_write_file", {"path": "work/a.md", "content": "new\n"})
    assert result.is_error and result.error_code == "workspace.io_error"
    assert refused
    assert (bench.workspace / "work" / "a.md").read_text() == "old\n"  # untouched
    assert _stray(bench.workspace / "work") == []

    monkeypatch.undo()
    assert not inv.call("workspace_write_file", {"path": "work/a.md", "content": "new\n"}).is_error
    assert (bench.workspace / "work" / "a.md").read_text() == "new\n"
    assert [r.result.error_code for r in inv.records] == [None, None, "workspace.io_error", None]
    _reloads(make_bench, bench, inv, profile)


@pytest.mark.parametrize("failing", [".txt", ".json"])  # the readable file, or the audit file after it
def test_an_unwritable_tool_results_file_raises_and_leaves_no_half_file(make_bench, profile_with, monkeypatch,
                                                                         failing):
    profile = profile_with("extension/e:big", external_result_inline_char_limit=1_000)
    bench = make_bench()
    bench.register_tool("e", lambda: BIG, name="big")
    bench.profile = profile
    inv = bench.invocation("session")
    first = inv.call("big", {})
    assert first.structured["externalized"] is True
    results = bench.workspace / "tool-results" / inv.id

    refused = _fail_under(monkeypatch, "link", f"tool-results/{inv.id}/round-002", failing)
    with pytest.raises(ToolbenchError) as info:
        inv.call("big", {})
    assert info.value.code == "storage.write_failed"
    assert len(refused) == 1
    assert sorted(p.name for p in results.iterdir() if "round-002" in p.name) == []  # nothing half written
    assert _stray(results) == []

    monkeypatch.undo()
    third = inv.call("big", {})
    assert third.structured["externalized"] is True
    assert (bench.workspace / third.structured["path"]).read_text().replace("\n", "") == BIG
    assert [r.round for r in inv.records] == [1, 3]  # the failed call has no record
    _reloads(make_bench, bench, inv, profile)
