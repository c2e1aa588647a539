"""The runtime side of `mcp.manage`: `McpPort` over the bench's `McpManager`.

One is made per builtin call (cheap: the manager is made only when a method needs it). The
configs that `mcp.manage` registered are kept per manager, so an `update` can merge a patch
into them; a server the bench registered in Python (an in-process server, a custom
transport) has no config here, so a patch to it must bring a whole transport (`command` or
`url`) or only switch `enabled` (`mcp.server_not_editable` otherwise).

`stop` disables the server (the manager keeps no "stopped but enabled" state); `restart`
re-enables a stopped one and reconnects it. An inline `test` (a config, no id) runs on a
scratch manager of its own, closed after, so the server never joins the bench's, not even for
the snapshot of an invocation made meanwhile.

Nothing the model wrote starts or connects without a person: every method that would start a
server from a config `mcp.manage` registered (or an inline one) first asks through `approve`
(the call's `ctx.approve`, the bench's approval handler), showing exactly what would run
(`launch_of`, built from the very keywords the manager is given: transport, command, args, cwd,
env, url, header names). Every start asks again, a restart of an agreed server too: the program
may read files the model can rewrite in between (a script in the workspace, a module on the
cwd), so no earlier yes covers what runs now. Servers the bench registered in Python or from an
mcp.json are the user's own and start without asking.
"""

from __future__ import annotations

import contextlib
import shlex
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..core.errors import ToolbenchError, ToolError
from ..protocols.snapshot import Snapshot
from ..tools.base import Approve
from ..tools.mcp_manage import config_of
from ..tools.registry import INJECTED

if TYPE_CHECKING:
    from ..core.loop import LoopThread
    from ..mcp import McpManager, McpServerInfo

_TRANSPORT_FIELDS = ("transport", "command", "args", "cwd", "env", "url", "headers")
_SECRET_MAPS = ("env", "headers")  # their values may be credentials: shown as keys only
_TRACE = 20  # messages `diagnose` shows
# The configs mcp.manage registered, by manager then server id (gone with the manager).
_CONFIGS: weakref.WeakKeyDictionary[McpManager, dict[str, dict[str, Any]]] = weakref.WeakKeyDictionary()
# The keywords of `McpManager.add` a launch shows (`launch_of`); anything else would start unseen.
_SHOWN: Final = frozenset({"id", "enabled", "timeout", "command", "args", "cwd", "env", "url", "headers"})
_REASON_CHARS: Final = 300
START: Final = "mcp.start"  # the approval action of a server start or connection


def launch_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """What starting a canonical config runs, from the keywords `McpManager.add` is given for it
    (`_fields`): the host program with its arguments, working folder and environment (stdio), or
    the address it connects to and the header names (http)."""
    fields = _fields(config)
    unshown = set(fields) - _SHOWN
    if unshown:  # a keyword the person would not see must not reach the manager
        raise ToolbenchError("bench.misuse", f"mcp.manage would start a server with {sorted(unshown)} unshown")
    if config.get("transport") == "stdio":
        return {"transport": "stdio", "command": fields.get("command"), "args": list(fields.get("args") or ()),
                "cwd": fields.get("cwd"), "env": dict(fields.get("env") or {})}
    return {"transport": "http", "url": fields.get("url"), "headers": sorted(fields.get("headers") or {})}


def _reason(launch: Mapping[str, Any], workspace: Path) -> str:
    """The launch in one line; a folder inside the workspace is named relative to it (the model
    reads this line too), and a line cut short says so."""
    if launch["transport"] == "stdio":
        line = shlex.join([str(launch["command"]), *map(str, launch["args"])])
        line = line if len(line) <= _REASON_CHARS else line[:_REASON_CHARS] + f"… ({len(line):,} characters in all)"
        cwd = launch["cwd"]
        if cwd and Path(cwd).is_relative_to(workspace):
            cwd = f"workspace/{Path(cwd).relative_to(workspace).as_posix()}".rstrip("/.")
        where = f" in {cwd}" if cwd else ""
        env = f" with environment {', '.join(launch['env'])}" if launch["env"] else ""
        return f"start `{line}` on the host{where}{env}"
    url = str(launch["url"])
    return f"connect to the MCP server at {url if len(url) <= _REASON_CHARS else url[:_REASON_CHARS] + '…'}"


@contextlib.contextmanager
def _coded() -> Iterator[None]:
    """The manager's developer errors become results the model reads, with the same codes."""
    try:
        yield
    except ToolbenchError as exc:
        raise ToolError(exc.code, exc.message) from exc
    except TypeError as exc:  # a field of the wrong type reached a transport
        raise ToolError("mcp.config_invalid", str(exc)) from exc


def _fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """`McpManager.add` keywords for a canonical config (see `toolbench.tools.mcp_port`)."""
    fields: dict[str, Any] = {"id": config["id"], "enabled": config.get("enabled", True)}
    if "timeoutMs" in config:
        fields["timeout"] = config["timeoutMs"] / 1000
    keys = ("command", "args", "cwd", "env") if config.get("transport") == "stdio" else ("url", "headers")
    fields.update({k: config[k] for k in keys if k in config})
    return fields


def _shown(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if config is None:
        return None
    return {k: ({name: "<redacted>" for name in v} if k in _SECRET_MAPS else v) for k, v in config.items()}


class McpManagePort:
    """`McpPort` for one call of an invocation made on `snapshot`."""

    def __init__(self, manager: Callable[[], McpManager], workspace: Path, loop: LoopThread,
                 snapshot: Snapshot) -> None:
        self._get_manager = manager  # the bench's manager, made on first use
        self._workspace = workspace
        self._loop = loop
        self._snapshot = snapshot

    @property
    def writable(self) -> bool:
        snapshot = self._snapshot  # read on use: one port per invocation, most never ask
        child = any(b.tool_id in INJECTED for b in snapshot.bindings)  # task.return: a delegated child
        return snapshot.scene == "chat" and not child

    @property
    def _manager(self) -> McpManager:
        return self._get_manager()

    def _configs(self) -> dict[str, dict[str, Any]]:
        return _CONFIGS.setdefault(self._manager, {})

    async def _agree(self, config: Mapping[str, Any], approve: Approve | None) -> None:
        """Return once a person agreed to start `config` now."""
        launch = launch_of(config)
        reason = _reason(launch, self._workspace)
        if approve is None:
            raise ToolError("tool.approval_required", f"Starting this server needs the user's approval "
                            f"({reason}) and no one can give it here. Do not retry it; ask the user.")
        await approve(START, reason, launch)

    async def _agree_registered(self, server_id: str, approve: Approve | None) -> None:
        """The same for a registered server about to (re)connect: asked only when mcp.manage made it."""
        config = self._configs().get(server_id)
        if config is not None:
            await self._agree(config, approve)

    def _info(self, server_id: str) -> McpServerInfo:
        with _coded():
            return self._manager.info(server_id)

    def _view(self, info: McpServerInfo, *, stopped: bool = False, manager: McpManager | None = None,
              config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        manager = manager or self._manager
        config = config if config is not None else self._configs().get(info.id)
        schemas = {d.id: d.input_schema for d in manager.descriptors() if d.id.provider == info.provider}
        with _coded():
            trace = manager.trace(info.id, _TRACE)
        return {
            "id": info.id, "name": info.name, "state": info.state, "enabled": info.state != "disabled",
            "transport": info.transport, "diagnosticCode": info.diagnostic_code, "diagnostic": info.diagnostic,
            "pid": info.pid, "timeoutMs": round(info.timeout * 1000), "serverInfo": info.server_info,
            "serverConfig": _shown(config), "stopped": stopped,
            "tools": [{"name": t.name, "toolId": None if t.tool_id is None else str(t.tool_id),
                       "offered": t.offered, "permission": t.permission, "description": t.description,
                       "problemCode": t.problem_code,
                       "inputSchema": None if t.tool_id is None else schemas.get(t.tool_id)} for t in info.tools],
            "stderrTail": list(info.stderr_tail),
            "trace": [{"direction": m.direction, "kind": m.kind, "method": m.method, "text": m.text} for m in trace],
        }

    async def servers(self) -> list[dict[str, Any]]:
        return [self._view(info) for info in self._manager.servers]

    async def read(self, server_id: str) -> dict[str, Any]:
        return self._view(self._info(server_id))

    def validate(self, config: Mapping[str, Any]) -> dict[str, Any]:
        from ..mcp._config import ServerOptions  # the one place registrations are checked

        with _coded():
            ServerOptions.of(config["id"], **_fields(config))
        return _shown(config) or {}

    async def create(self, config: Mapping[str, Any], *, overwrite: bool, approve: Approve | None) -> dict[str, Any]:
        self.validate(config)  # a bad config leaves an existing server alone
        manager, server_id = self._manager, config["id"]
        stopped = False
        exists = any(server_id in (s.id, s.name) for s in manager.servers)
        if exists and not overwrite:
            raise ToolError("mcp.server_exists", f"An MCP server `{server_id}` already exists; use `update`, "
                            "or `conflict: \"overwrite\"` to replace it.")
        if config.get("enabled", True):  # asked before the old one goes: a refusal leaves it running
            await self._agree(config, approve)
        if exists:
            stopped = await self.delete(server_id)
        with _coded():
            info = await manager.aadd(config["id"], **_fields(config))
        self._configs()[info.id] = dict(config)
        return self._view(info, stopped=stopped)

    async def update(self, server_id: str, patch: Mapping[str, Any], *, approve: Approve | None) -> dict[str, Any]:
        info = self._info(server_id)
        if patch.get("id", info.id) != info.id:
            raise ToolError("tool.invalid_arguments", f"`update` does not allow changing server id `{info.id}`; "
                            "create a new server and delete this one.")
        old = self._configs().get(info.id)
        new_transport = any(k in patch for k in ("command", "url"))
        if old is None and not new_transport:
            if set(patch) - {"enabled", "id"}:
                raise ToolError("mcp.server_not_editable", f"`{info.name}` was registered by the bench; a patch "
                                "may switch `enabled` or bring a whole transport (`command` or `url`).")
            return await self.set_enabled(info.id, patch.get("enabled", info.state != "disabled"), approve=approve)
        base = dict(old or {"id": info.id, "enabled": info.state != "disabled",
                            "timeoutMs": round(info.timeout * 1000)})
        kind = patch.get("transport") or ("stdio" if "command" in patch else "http" if "url" in patch else None)
        if kind is not None and kind != base.get("transport"):  # another transport: the old one's fields go
            base = {k: v for k, v in base.items() if k not in _TRANSPORT_FIELDS}
            base["transport"] = kind
        # the transport's fields are checked again on the merged whole
        merged = config_of({**base, **patch, "id": info.id}, self._workspace)
        return await self.create(merged, overwrite=True, approve=approve)

    async def delete(self, server_id: str) -> bool:
        info = self._info(server_id)
        with _coded():
            await self._manager.aremove(info.id)
        self._configs().pop(info.id, None)
        return info.state == "active"

    async def set_enabled(self, server_id: str, enabled: bool, *, approve: Approve | None) -> dict[str, Any]:
        manager, before = self._manager, self._info(server_id)
        if enabled and before.state == "disabled":
            await self._agree_registered(before.id, approve)
        with _coded():
            info = await (manager.aenable(before.id) if enabled else manager.adisable(before.id))
        if info.id in self._configs():
            self._configs()[info.id]["enabled"] = enabled
        return self._view(info, stopped=not enabled and before.state == "active")

    async def tools(self, server_id: str) -> dict[str, Any]:
        info = self._info(server_id)
        if info.state != "active":  # listing never starts or reconnects anything
            return self._view(info)
        with _coded():
            [info] = await self._manager.arefresh(info.id)
        return self._view(info)

    async def test(self, server_id: str, *, approve: Approve | None) -> dict[str, Any]:
        info = self._info(server_id)
        if info.state == "disabled":
            config = self._configs().get(info.id)
            if config is None:
                raise ToolError("mcp.server_unavailable", f"`{info.name}` is disabled; enable it to test it.")
            return await self.try_config(config, approve=approve)
        await self._agree_registered(info.id, approve)
        with _coded():
            [info] = await self._manager.arefresh(info.id)
        return self._view(info)

    async def try_config(self, config: Mapping[str, Any], *, approve: Approve | None) -> dict[str, Any]:
        from ..mcp import McpManager

        self.validate(config)
        await self._agree(config, approve)
        scratch = McpManager(self._loop, self._workspace / ".toolbench" / "mcp" / "scratch",
                             root=self._workspace)
        try:
            with _coded():
                info = await scratch.aadd(config["id"], **{**_fields(config), "enabled": True})
            return self._view(info, manager=scratch, config=config)
        finally:
            await scratch.aclose()

    async def restart(self, server_id: str, *, approve: Approve | None) -> dict[str, Any]:
        info = self._info(server_id)
        if info.state == "disabled":
            return await self.set_enabled(info.id, True, approve=approve)  # enabling connects it afresh
        await self._agree_registered(info.id, approve)
        with _coded():
            [after] = await self._manager.arefresh(info.id, restart=True)
        return self._view(after, stopped=info.state == "active")

    async def stop(self, server_id: str) -> dict[str, Any]:
        return await self.set_enabled(server_id, False, approve=None)  # stopping starts nothing
