"""Per-server roots: what toolbench declares and answers to each server (`roots="workspace"`, the
default; `roots=False`; a list of folders), from `add()` and from `mcp.json`.

The reference `@modelcontextprotocol/server-filesystem` replaces the folders it was started with
by the client's roots, so a server started on a folder outside the workspace refuses every read
there while toolbench declares the workspace (the bug these settings fix). Those scenarios run
in a child process under a deadline (a node server that stops answering fails the test, never
freezes the suite); the child waits, bounded, until the server has applied what it was told."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deadline import run_with_deadline
from real_servers import ensure_node_servers

# One bench, one filesystem server started on `data` (outside the workspace): report what it
# allows and what a read of `data/note.txt` gives. argv: workspace, data, node bin, setting.
SCENARIO = r"""
import json, sys, threading, time
from pathlib import Path
from toolbench import Profile, Workbench

workspace, data, node_bin, setting = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
profile = Profile.default().edit(allow=["mcp/fs:read_text_file", "mcp/fs:list_allowed_directories"],
                                 max_calls_per_run=1000, max_rounds=1000)
bench = Workbench(workspace, profile=profile)
try:
    if "config" in setting:
        [info] = bench.mcp.load_config(setting["config"])
    else:
        extra = {} if setting["roots"] == "default" else {"roots": setting["roots"]}
        info = bench.mcp.add("fs", command=[str(node_bin / "mcp-server-filesystem"), str(data)], id="fs",
                             timeout=30, **extra)
    assert info.state == "active", (info.diagnostic_code, info.diagnostic, info.stderr_tail)
    inv = bench.invocation()
    names = {str(b.tool_id): b.call_name for b in inv.snapshot.bindings}

    def allowed():
        return inv.call(names["mcp/fs:list_allowed_directories"], {}).content

    def settled():  # the server logs this once it applied the client's roots, or kept its own folders
        marks = ("Updated allowed directories from MCP roots", "No valid root directories", "Client does not support")
        return next((line for line in bench.mcp.info("fs").stderr_tail if line.startswith(marks)), None)

    tick, deadline = threading.Event(), time.monotonic() + 20
    while settled() is None:
        assert time.monotonic() < deadline, bench.mcp.info("fs").stderr_tail
        tick.wait(0.05)
    read = inv.call(names["mcp/fs:read_text_file"], {"path": str(data / "note.txt")})
    told = any(m.method == "roots/list" for m in bench.mcp.trace("fs"))  # the server asked for roots
    report({"capabilities": list(bench.mcp.info("fs").client_capabilities), "told": told, "settled": settled(),
            "allowed": allowed(), "is_error": read.is_error, "code": read.error_code, "content": read.content})
finally:
    bench.close()
"""


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """The workspace, and a data folder beside it (outside it) holding `note.txt`."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "note.txt").write_text("outside the workspace\n", encoding="utf-8")
    return tmp_path / "ws", data


def scenario(folders: tuple[Path, Path], **setting: Any) -> dict[str, Any]:
    workspace, data = folders
    node = ensure_node_servers()
    args = (str(workspace), str(data), str(node), json.dumps(setting))
    out: dict[str, Any] = run_with_deadline(SCENARIO, args=args, deadline=120)
    return out


def test_with_the_default_roots_the_server_refuses_its_own_folder(folders: tuple[Path, Path]) -> None:
    workspace, data = folders
    # the server trades its folder for the workspace roots toolbench answers: the reported bug
    out = scenario(folders, roots="default")
    assert out["capabilities"] == ["roots"] and out["told"]
    assert out["settled"].startswith("Updated allowed directories from MCP roots: 5 valid")
    assert str((workspace / "work").resolve()) in out["allowed"]
    assert str(data.resolve()) not in out["allowed"]
    assert (out["is_error"], out["code"]) == (True, "mcp.tool_error")
    assert "Access denied" in out["content"]


@pytest.mark.xfail(strict=True, reason="roots is not a registration field yet: every server gets the workspace")
def test_roots_false_keeps_the_folder_the_server_was_started_with(folders: tuple[Path, Path]) -> None:
    workspace, data = folders
    out = scenario(folders, roots=False)
    assert out["capabilities"] == [] and not out["told"]
    assert out["settled"].startswith("Client does not support MCP Roots")
    assert str(data.resolve()) in out["allowed"] and str(workspace.resolve()) not in out["allowed"]
    assert (out["is_error"], out["content"]) == (False, "outside the workspace")


@pytest.mark.xfail(strict=True, reason="roots is not a registration field yet: every server gets the workspace")
def test_roots_naming_the_folder_serve_it(folders: tuple[Path, Path]) -> None:
    workspace, data = folders
    out = scenario(folders, roots=[str(data)])
    assert out["capabilities"] == ["roots"] and out["told"]
    assert out["settled"].startswith("Updated allowed directories from MCP roots: 1 valid")
    assert str(data.resolve()) in out["allowed"] and str(workspace.resolve()) not in out["allowed"]
    assert (out["is_error"], out["content"]) == (False, "outside the workspace")


@pytest.mark.xfail(strict=True, reason="mcp.json entries have no roots key yet")
@pytest.mark.parametrize("roots", [False, ["../data"]], ids=["false", "relative-list"])
def test_the_same_settings_from_mcp_json(folders: tuple[Path, Path], roots: Any) -> None:
    workspace, data = folders
    config = workspace.parent / "conf" / "mcp.json"
    config.parent.mkdir()
    command = str(ensure_node_servers() / "mcp-server-filesystem")
    config.write_text(json.dumps({"mcpServers": {"fs": {"command": command, "args": [str(data)], "id": "fs",
                                                        "roots": roots}}}), encoding="utf-8")
    out = scenario(folders, config=str(config))
    assert out["capabilities"] == ([] if roots is False else ["roots"])
    assert (out["is_error"], out["content"]) == (False, "outside the workspace")
