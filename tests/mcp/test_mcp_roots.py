"""Per-server roots: what toolbench declares and answers to each server (`roots="workspace"`, the
default; `roots=False`; a list of folders), from `add()` and from `mcp.json`.

The reference `@modelcontextprotocol/server-filesystem` replaces the folders it was started with
by the client's roots, so a server started on a folder outside the workspace refuses every read
there while toolbench declares the workspace (the bug these settings fix). Those scenarios run
in a child process under a deadline (a node server that stops answering fails the test, never
freezes the suite); the child waits, bounded, until the server has applied what it was told."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from deadline import run_with_deadline
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import ListRoots, Resolve
from mcp.types import ListRootsResult
from mcp_support import child_pids, fault_server, no_new_children, wait_until
from node_servers import ensure_node_servers

from toolbench import Workbench
from toolbench.core.errors import ToolError
from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.mcp import McpManager

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


def test_roots_false_keeps_the_folder_the_server_was_started_with(folders: tuple[Path, Path]) -> None:
    workspace, data = folders
    out = scenario(folders, roots=False)
    assert out["capabilities"] == [] and not out["told"]
    assert out["settled"].startswith("Client does not support MCP Roots")
    assert str(data.resolve()) in out["allowed"] and str(workspace.resolve()) not in out["allowed"]
    assert (out["is_error"], out["content"]) == (False, "outside the workspace")


def test_roots_naming_the_folder_serve_it(folders: tuple[Path, Path]) -> None:
    workspace, data = folders
    out = scenario(folders, roots=[str(data)])
    assert out["capabilities"] == ["roots"] and out["told"]
    assert out["settled"].startswith("Updated allowed directories from MCP roots: 1 valid")
    assert str(data.resolve()) in out["allowed"] and str(workspace.resolve()) not in out["allowed"]
    assert (out["is_error"], out["content"]) == (False, "outside the workspace")


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


# -- what each setting declares and answers, in process (these sessions speak 2026-07-28) ----------


def ask_roots() -> ListRoots:  # at module level: the tool's annotations are evaluated here
    return ListRoots()


def roots_server() -> MCPServer:
    """`roots` lists the client's roots (a ListRoots resolver: the framework asks the client, in
    whichever protocol the session speaks); `declared` says whether the client declared roots."""
    server = MCPServer("roots-probe", log_level="WARNING")

    @server.tool()
    def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
        return json.dumps([str(root.uri) for root in listed.roots])

    @server.tool()
    def declared(ctx: Context) -> bool:
        capabilities = ctx.client_capabilities
        return capabilities is not None and capabilities.roots is not None

    return server


def uris(*paths: Path) -> list[str]:
    return [path.resolve().as_uri() for path in paths]


def listed(loop: LoopThread, manager: McpManager, name: str) -> Any:
    return json.loads(loop.run(manager.call(ToolId.parse(f"mcp/{name}:roots"), {})).content)


def declared(loop: LoopThread, manager: McpManager, name: str) -> bool:
    return bool(json.loads(loop.run(manager.call(ToolId.parse(f"mcp/{name}:declared"), {})).content))


@pytest.fixture
def make(loop: LoopThread, tmp_path: Path) -> Iterator[Callable[..., McpManager]]:
    """`make(roots=provider)`: managers on `tmp_path`, closed after, leaving no process behind."""
    baseline = child_pids()
    made: list[McpManager] = []

    def build(**options: Any) -> McpManager:
        made.append(McpManager(loop, tmp_path / "mcp-logs", **options))
        return made[-1]

    yield build
    for manager in made:
        manager.close()
    assert no_new_children(baseline), "a server process outlived the manager"


def test_each_setting_declares_and_answers_its_own_roots(make: Callable[..., McpManager], loop: LoopThread,
                                                          tmp_path: Path) -> None:
    workspace = [tmp_path / "ws" / "work", tmp_path / "ws" / "output"]
    data = tmp_path / "data"
    data.mkdir()
    manager = make(roots=lambda: list(workspace))
    for name, roots in (("ws", "workspace"), ("listed", [data, str(data / "sub")]), ("off", False)):
        assert manager.add(name, server=roots_server(), roots=roots).state == "active"
    assert [manager.info(n).client_capabilities for n in ("ws", "listed", "off")] == [("roots",), ("roots",), ()]
    assert [declared(loop, manager, n) for n in ("ws", "listed", "off")] == [True, True, False]
    assert listed(loop, manager, "ws") == uris(*workspace)
    assert listed(loop, manager, "listed") == uris(data, data / "sub")
    with pytest.raises(ToolError) as caught:  # the server needs roots it was not offered: its own refusal
        listed(loop, manager, "off")
    assert caught.value.code == "mcp.server_error"
    assert caught.value.structured["serverError"]["data"] == {"requiredCapabilities": {"roots": {}}}


def test_the_workspace_roots_are_read_at_each_request_and_a_list_stays(make: Callable[..., McpManager],
                                                                      loop: LoopThread, tmp_path: Path) -> None:
    workspace = [tmp_path / "work"]
    manager = make(roots=lambda: list(workspace))
    manager.add("ws", server=roots_server())  # the default
    manager.add("listed", server=roots_server(), roots=[tmp_path / "data"])
    workspace.append(tmp_path / "output")  # a profile change, as the bench's provider sees it
    assert listed(loop, manager, "ws") == uris(tmp_path / "work", tmp_path / "output")
    assert listed(loop, manager, "listed") == uris(tmp_path / "data")


def test_a_list_is_declared_by_a_manager_without_workspace_roots(make: Callable[..., McpManager], loop: LoopThread,
                                                                 tmp_path: Path) -> None:
    manager = make()  # no roots provider: "workspace" declares nothing
    manager.add("ws", server=roots_server())
    manager.add("listed", server=roots_server(), roots=[tmp_path])
    assert manager.info("ws").client_capabilities == () and not declared(loop, manager, "ws")
    assert manager.info("listed").client_capabilities == ("roots",)
    assert listed(loop, manager, "listed") == uris(tmp_path)


def not_offered(manager: McpManager, name: str) -> list[str]:
    return [w.message for w in manager.info(name).warnings if w.code == "mcp.capability_not_offered"]


def test_roots_false_is_asked_for_so_no_warning_nags_about_it(make: Callable[..., McpManager]) -> None:
    manager = make()  # no workspace roots either: only the servers on them miss roots
    manager.add("off", server=roots_server(), roots=False)
    manager.add("ws", server=roots_server())
    [off], [ws] = not_offered(manager, "off"), not_offered(manager, "ws")
    assert "roots" not in off and "sampling, elicitation" in off
    assert "roots" in ws and "no workspace roots" in ws
    manager.on_sampling(lambda request: "ok")
    manager.on_elicitation(lambda request: {"action": "decline"})
    manager.refresh()
    assert not_offered(manager, "off") == []  # all it was not told is what the user asked it not to be
    assert manager.info("off").client_capabilities == ("sampling", "elicitation")
    assert [w.code for w in manager.warnings if w.subject == "off"] == []


def test_a_refresh_does_not_reconnect_a_server_for_the_roots_it_goes_without(make: Callable[..., McpManager],
                                                                            tmp_path: Path) -> None:
    manager = make(roots=lambda: [tmp_path])
    manager.add("off", server=roots_server(), roots=False)
    manager.add("listed", server=roots_server(), roots=[tmp_path])

    def handshakes(name: str) -> int:
        return sum(1 for m in manager.trace(name) if m.direction == "sent" and m.method == "server/discover")

    assert {name: handshakes(name) for name in ("off", "listed")} == {"off": 1, "listed": 1}
    manager.refresh()  # nothing changed for them: listed again, not reconnected
    assert {name: handshakes(name) for name in ("off", "listed")} == {"off": 1, "listed": 1}
    manager.refresh(restart=True)
    assert {name: handshakes(name) for name in ("off", "listed")} == {"off": 2, "listed": 2}


def test_missing_folders_are_declared_and_warned_about_until_they_exist(make: Callable[..., McpManager],
                                                                       loop: LoopThread, tmp_path: Path) -> None:
    later = tmp_path / "made-later"
    manager = make()
    manager.add("listed", server=roots_server(), roots=[tmp_path, later])
    assert manager.info("listed").client_capabilities == ("roots",)
    assert listed(loop, manager, "listed") == uris(tmp_path, later)  # a server may create it
    [warning] = [w for w in manager.warnings if w.code == "mcp.roots_missing"]
    assert warning.subject == "listed" and str(later) in warning.message and f"{tmp_path}," not in warning.message
    later.mkdir()
    assert [w for w in manager.warnings if w.code == "mcp.roots_missing"] == []


# -- roots_changed: only the servers on the workspace roots are told ----------------------------
# The notification exists in handshake-era sessions only (2026-07-28 has no client notifications,
# and in-process sessions always speak it), so these use a line-based stdio server that speaks
# the handshake era and sends `roots/list` back during its `roots` call.


def changes_sent(manager: McpManager, name: str) -> int:
    return sum(1 for m in manager.trace(name)
               if m.direction == "sent" and m.method == "notifications/roots/list_changed")


def test_roots_changed_tells_only_the_servers_on_the_workspace_roots(make: Callable[..., McpManager],
                                                                     loop: LoopThread, tmp_path: Path) -> None:
    manager = make(roots=lambda: [tmp_path / "work"])
    settings: dict[str, Any] = {"ws": "workspace", "listed": [tmp_path / "data"], "off": False}
    for name, roots in settings.items():
        info = manager.add(name, command=fault_server("asks_anyway"), roots=roots, timeout=20)
        assert info.state == "active", info.diagnostic
    asked = {name: json.loads(loop.run(manager.call(ToolId.parse(f"mcp/{name}:roots"), {})).content)
             for name in settings}
    assert asked["ws"] == {"roots": [{"uri": uris(tmp_path / "work")[0], "name": "work"}]}
    assert asked["listed"] == {"roots": [{"uri": uris(tmp_path / "data")[0], "name": "data"}]}
    assert "code" in asked["off"] and "roots" not in asked["off"]  # refused: it was never declared
    loop.run(manager.aroots_changed())  # returns once every notification is sent
    assert {name: changes_sent(manager, name) for name in settings} == {"ws": 1, "listed": 0, "off": 0}


def test_a_profile_change_reaches_the_workspace_servers_of_a_bench(make_bench: Callable[..., Workbench],
                                                                  tmp_path: Path) -> None:
    bench = make_bench()
    for name, roots in (("ws", "workspace"), ("listed", [tmp_path / "data"])):
        assert bench.mcp.add(name, command=fault_server("asks_anyway"), roots=roots, timeout=20).state == "active"
    fewer = tuple(r for r in bench.profile.workspace.visible_roots if r != "tmp")
    bench.profile = bench.profile.edit(workspace={"visible_roots": fewer,
                                                  "writable_roots": [r for r in ("work", "output") if r in fewer]})
    assert wait_until(lambda: changes_sent(bench.mcp, "ws") == 1)
    assert changes_sent(bench.mcp, "listed") == 0  # left out before any was sent, not still on its way
