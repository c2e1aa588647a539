"""`mcp.manage`: the model-facing MCP manager (LiveAgent's `McpManager`, reference §7.3).

Actions (upstream's names): `list`, `read`, `tools`, `diagnose` and `validate` read;
`create`, `update`, `delete`, `enable`, `disable` write, and `test`, `restart`, `stop` act on
a running server. Writes and `test` / `restart` / `stop` are refused outside the chat scene
and in delegated children (`mcp.manage_scope`), as upstream allows writes only in chat scope;
toolbench adds `test`, since it starts a process. The reads start nothing (`tools` lists an
active server afresh, any other as it is). Whatever would start a program on the host or
connect to an address the model gave asks the user first (`ctx.approve`, see the runtime's
`mcp_port`): with nobody to ask it is `tool.approval_required` and nothing starts. Writes
are id-level: `create` adds one server (`conflict: "overwrite"` replaces one with that id),
`update` merges a `patch` into one server's config; nothing replaces the whole set. A config
has no `roots` (the schema is closed, so a call that gives them is `tool.invalid_arguments`):
every server the model registers or rebuilds is told the workspace roots, the default, and a
model cannot point one at host folders outside the workspace; `roots` are the user's to set.

A change takes effect for the next invocation: the current one's snapshot is frozen when it
is made, so a new server's tools are not callable in it. This tool never calls a server's
own tools; those are the `mcp/...` tools. The work is done by the runtime through
`ctx.mcp` (`McpPort`); this module checks the arguments and shapes the answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .base import Approve, BuiltinTool, ToolContext
from .mcp_port import McpPort

READS: Final = ("list", "read", "tools", "diagnose", "validate")
WRITES: Final = ("create", "update", "delete", "enable", "disable")
RUNTIME: Final = ("test", "restart", "stop")
ACTIONS: Final = READS + WRITES + RUNTIME
# Chat scope only: the writes and every action that can start a process or change a running one.
SCOPED: Final = (*WRITES, *RUNTIME)
MAX_IDS: Final = 50
MAX_ID_CHARS: Final = 200  # ids are echoed in answers: a longer one is refused, never quoted whole

_STR = {"type": "string"}
_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_FIELDS: dict[str, Any] = {
    "enabled": {"type": "boolean"},
    "transport": {"type": "string", "enum": ["stdio", "http", "sse"],
                  "description": "stdio (command) or http (url); sse is not supported here."},
    "command": _STR, "args": {"type": "array", "items": _STR}, "cwd": _STR, "env": _MAP,
    "url": _STR, "headers": _MAP,
    "timeoutMs": {"type": "integer", "minimum": 1, "description": "Connect, list and call timeout."},
    "messageUrl": _STR,
}
_ID = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}
_SERVER = {"type": "object", "properties": {"id": _ID, **_FIELDS},
           "required": ["id"], "additionalProperties": False}
# `id` is in the patch only so that a rename gets a clear refusal (upstream: ids are fixed).
_PATCH = {"type": "object", "properties": {"id": _ID, **_FIELDS}, "additionalProperties": False}
_BOOL = {"type": "boolean"}
# The fields that do not go with each transport.
_OF_TRANSPORT: Final = {"stdio": ("url", "headers"), "http": ("command", "args", "cwd", "env")}

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("mcp.manage"),
    description=(
        "Manage the MCP servers: `list` them with their runtime state, `read` or `diagnose` one, list its "
        "`tools`, `validate` a config, `create` / `update` (a `patch`) / `delete` one, `enable` / `disable`, "
        "`test` (connect and list its tools), `restart` or `stop` it. Changes apply from the next turn's "
        "tool list, not the current one. It does not call a server's tools."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "server_id": {**_ID, "description": "The server's id (or name)."},
            "server_ids": {"type": "array", "items": _ID, "maxItems": MAX_IDS},
            "server": _SERVER,
            "patch": _PATCH,
            "conflict": {"type": "string", "enum": ["fail", "overwrite"],
                         "description": "create: what to do when the id exists (default fail)."},
            "include_disabled": _BOOL, "include_tools": _BOOL, "include_schema": _BOOL, "include_stderr": _BOOL,
        },
        "required": ["action"],
        "additionalProperties": False,
    },
)


def _port(ctx: ToolContext) -> McpPort:
    if ctx.mcp is None:
        raise ToolError("mcp.manage_unavailable", "MCP management is not available here.")
    return ctx.mcp


def _need(args: Mapping[str, Any], key: str, action: str) -> Any:
    value = args.get(key)
    if value is None:
        raise ToolError("tool.invalid_arguments", f"`{action}` needs `{key}`.")
    return value


def _targets(args: Mapping[str, Any], action: str) -> list[str]:
    """`server_id` and `server_ids` together, deduplicated in order; at least one."""
    ids = ([args["server_id"]] if args.get("server_id") else []) + list(args.get("server_ids") or [])
    ids = list(dict.fromkeys(ids))
    if not ids:
        raise ToolError("tool.invalid_arguments", f"`{action}` needs `server_id` or `server_ids`.")
    return ids


def resolve_cwd(cwd: str, workspace: Path) -> str:
    """A server's working folder as an absolute path, as upstream resolves it before saving or
    testing: `file://` URLs and `workspace:<relative>` are read, a relative path is taken from
    the workspace. Idempotent."""
    if cwd.startswith("file://"):
        cwd = unquote(urlparse(cwd).path)
    elif cwd.startswith("workspace:"):
        cwd = cwd.removeprefix("workspace:").lstrip("/")
    path = Path(cwd)
    return str(path if path.is_absolute() else workspace / path)


def config_of(server: Mapping[str, Any], workspace: Path, *, patch: bool = False) -> dict[str, Any]:
    """The canonical config of an upstream `server` (or `patch`): only the fields given, `cwd`
    resolved, and `transport` checked against the fields it goes with. Idempotent."""
    config = {k: v for k, v in server.items() if v is not None}
    if isinstance(config.get("cwd"), str) and config["cwd"]:
        config["cwd"] = resolve_cwd(config["cwd"], workspace)
    kind = config.get("transport")
    if kind == "sse" or "messageUrl" in config:
        raise ToolError("mcp.config_invalid", "The sse transport (and `messageUrl`) is not supported; "
                        "use stdio (`command`) or http (`url`).")
    if "command" in config and "url" in config:
        raise ToolError("mcp.config_invalid", "Give `command` (stdio) or `url` (http), not both.")
    if not patch and kind is None:
        kind = config["transport"] = "stdio" if "command" in config else "http" if "url" in config else None
        if kind is None:
            raise ToolError("mcp.config_invalid", "A server needs `command` (stdio) or `url` (http).")
    stray = [k for k in _OF_TRANSPORT.get(kind or "", ()) if k in config]
    if stray:
        raise ToolError("mcp.config_invalid", f"{', '.join(f'`{k}`' for k in stray)} do not go with a {kind} server.")
    return config


def _view(server: dict[str, Any], args: Mapping[str, Any], *, tools: bool) -> dict[str, Any]:
    """A server as the model reads it: tools, schemas and stderr only when asked."""
    view = {k: v for k, v in server.items() if k not in ("tools", "stderrTail", "trace", "stopped")}
    if tools or args.get("include_tools") or args.get("include_schema"):
        schema = bool(args.get("include_schema"))
        view["tools"] = [{k: v for k, v in t.items() if schema or k != "inputSchema"} for t in server["tools"]]
    else:
        view["toolCount"] = len(server["tools"])
    if args.get("include_stderr"):
        view["stderrTail"] = server["stderrTail"]
    return view


async def manage(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    action = args["action"]
    port = _port(ctx)
    if action in SCOPED and not port.writable:
        raise ToolError("mcp.manage_scope", f"`{action}` is only allowed in a chat invocation of the main agent; "
                        "here the MCP manager reads only.")
    result = await _run(port, action, args, ctx.workspace, ctx.approve)
    return ToolOutput(content=json.dumps(result, ensure_ascii=False, indent=2), structured=result)


async def _run(port: McpPort, action: str, args: dict[str, Any], workspace: Path,
               approve: Approve | None) -> dict[str, Any]:
    if action == "list":
        wanted = set(_targets(args, action)) if args.get("server_id") or args.get("server_ids") else None
        servers = [s for s in await port.servers()
                   if (wanted is None or s["id"] in wanted or s["name"] in wanted)
                   and (wanted is not None or args.get("include_disabled") or s["enabled"])]
        return {"action": action, "servers": [_view(s, args, tools=False) for s in servers]}
    if action in ("read", "tools", "diagnose"):
        ids = _targets(args, action)
        # `tools` lists afresh (upstream's test path), never calls one
        read = port.tools if action == "tools" else port.read
        servers = [await read(sid) for sid in ids]
        if action == "diagnose":
            args = {**args, "include_stderr": True}
        views = [_view(s, args, tools=action != "diagnose" or bool(args.get("include_tools"))) for s in servers]
        if action == "diagnose":
            for view, server in zip(views, servers, strict=True):
                view["trace"] = server["trace"]
        return {"action": action, "servers": views}
    if action == "validate":  # static, and an answer either way (upstream: ok false, not an error)
        try:
            config = port.validate(config_of(_need(args, "server", action), workspace))
        except ToolError as exc:
            if exc.code != "mcp.config_invalid":
                raise
            return {"action": action, "valid": False, "code": exc.code, "problem": exc.message}
        return {"action": action, "valid": True, "serverConfig": config}
    if action == "test" and args.get("server") is not None:  # an inline config: tried, never kept
        server = await port.try_config(config_of(args["server"], workspace), approve=approve)
        return {"action": action, "servers": [_view(server, args, tools=False)], "persisted": False}
    if action == "create":
        config = config_of(_need(args, "server", action), workspace)
        server = await port.create(config, overwrite=args.get("conflict") == "overwrite", approve=approve)
        return {"action": action, "server": _view(server, args, tools=False), "changed": True,
                "stopped": server.get("stopped", False), "appliesFrom": "next invocation"}
    if action == "update":
        server_id = _need(args, "server_id", action)
        patch = config_of(_need(args, "patch", action), workspace, patch=True)
        server = await port.update(server_id, patch, approve=approve)
        return {"action": action, "server": _view(server, args, tools=False), "changed": True,
                "stopped": server.get("stopped", False), "appliesFrom": "next invocation"}
    if action == "delete":
        ids = _targets(args, action)
        stopped = [await port.delete(sid) for sid in ids]
        return {"action": action, "deleted": ids, "changed": True, "stopped": any(stopped),
                "appliesFrom": "next invocation"}
    servers = []
    for sid in _targets(args, action):
        if action in ("enable", "disable"):
            servers.append(await port.set_enabled(sid, action == "enable", approve=approve))
        elif action == "test":
            servers.append(await port.test(sid, approve=approve))
        elif action == "restart":
            servers.append(await port.restart(sid, approve=approve))
        else:
            servers.append(await port.stop(sid))
    result: dict[str, Any] = {"action": action, "servers": [_view(s, args, tools=False) for s in servers]}
    if action != "test":
        result |= {"changed": True, "stopped": any(s.get("stopped", False) for s in servers),
                   "appliesFrom": "next invocation"}
    return result


TOOLS = (BuiltinTool(DESCRIPTOR, manage),)
