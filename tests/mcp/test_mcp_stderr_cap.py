"""A stdio server's stderr is kept in a capped log: a server that writes without end cannot fill
the disk, and its newest lines are what the log keeps."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from mcp_support import wait_until

from toolbench.mcp import McpManager
from toolbench.mcp._procs import LOG_MAX_BYTES, CappedLog

FLOOD = textwrap.dedent("""
    import sys
    from mcp.server.mcpserver import MCPServer
    line = "x" * 1023 + "\\n"
    for n in range(12 * 1024):  # 12 MiB of stderr before the server starts
        sys.stderr.write(line)
    sys.stderr.write("last words\\n")
    sys.stderr.flush()
    server = MCPServer("flood")

    @server.tool()
    def ping() -> str:
        return "pong"

    server.run("stdio")
""")


def test_a_flood_of_stderr_keeps_at_most_two_capped_files(manager: McpManager, tmp_path: Path) -> None:
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    info = manager.add("flood", command=[sys.executable, str(script)], timeout=30)
    assert info.state == "active", info.diagnostic  # type: ignore[attr-defined]
    log = info.log_path  # type: ignore[attr-defined]
    assert log is not None
    assert wait_until(lambda: "last words" in manager.info("flood").stderr_tail)
    kept = [p for p in log.parent.iterdir() if p.name.startswith(log.name)]
    assert sum(p.stat().st_size for p in kept) <= 2 * LOG_MAX_BYTES
    assert len(kept) <= 2


def test_the_capped_log_rotates_and_keeps_the_newest_output(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "s.log", max_bytes=100)
    for n in range(50):
        log.writer.write(f"line {n:02d}\n")
    log.close(wait=5)
    newest = (tmp_path / "s.log").read_text()
    assert newest.endswith("line 49\n") and len(newest) <= 100
    older = tmp_path / "s.log.1"  # present when the pipe delivered the lines in several reads
    assert not older.exists() or older.stat().st_size <= 100
