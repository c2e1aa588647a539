"""Server registrations: what `McpManager.add` and `mcp.json` accept, normalised and checked.

A registration (`ServerSpec`) is a frozen value. Its id is stable across restarts for the same
configuration: a slug of the display name (lowercase `[a-z0-9-]`), made unique within the
manager with `-2`, `-3`, ..., or the `id=` given. Tool ids are `mcp/<id>:<tool>`; the display
name seeds the call names the model sees.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.errors import ToolbenchError

TransportKind = Literal["stdio", "http", "memory"]

DEFAULT_TIMEOUT = 60.0
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamablehttp"}


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One registered server: how to reach it, under which id and name."""

    id: str
    name: str
    transport: TransportKind
    command: tuple[str, ...] = ()  # executable then arguments (stdio)
    env: Mapping[str, str] | None = None  # merged over the SDK's safe default environment
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None
    server: Any = field(default=None, compare=False, repr=False)  # an in-process MCPServer / Server
    timeout: float = DEFAULT_TIMEOUT

    @property
    def provider(self) -> str:
        return f"mcp/{self.id}"


def slugify(name: str) -> str:
    """The id seed of a display name: lowercase, runs outside `[a-z0-9]` become one `-`."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "server"


def allocate_id(name: str, taken: set[str] | frozenset[str]) -> str:
    """The first of `slug`, `slug-2`, `slug-3`, ... not in `taken`."""
    base = slugify(name)
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _bad(name: str, problem: str) -> ToolbenchError:
    return ToolbenchError("mcp.config_invalid", f"MCP server `{name}`: {problem}")


def _str_map(name: str, what: str, value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _bad(name, f"`{what}` must be an object of strings, not {type(value).__name__}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str | int | float) or isinstance(item, bool):
            raise _bad(name, f"`{what}` entry `{key}` must be a string")
        out[key] = str(item)
    return out


def make_spec(
    name: Any,
    *,
    taken_ids: set[str] | frozenset[str],
    command: str | Sequence[str] | None = None,
    args: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    server: Any = None,
    id: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ServerSpec:
    """A checked registration, or `ToolbenchError("mcp.config_invalid")` naming what is wrong.

    `command` is a list (`[executable, *arguments]`) or one executable; `args` are appended."""
    if not isinstance(name, str) or not name.strip():
        raise ToolbenchError("mcp.config_invalid", "an MCP server needs a non-blank name")
    given = [k for k, v in (("command", command), ("url", url), ("server", server)) if v is not None]
    if len(given) != 1:
        raise _bad(name, "give exactly one of `command` (stdio), `url` (streamable HTTP) or `server` (in-process)"
                   + (f"; got {', '.join(given)}" if given else ""))
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise _bad(name, f"`timeout` must be a positive number of seconds, not {timeout!r}")
    if id is None:
        reg_id = allocate_id(name, taken_ids)
    else:
        if not isinstance(id, str) or not _ID_RE.fullmatch(id):
            raise _bad(name, f"id `{id}` must match {_ID_RE.pattern}")
        if id in taken_ids:
            raise ToolbenchError("mcp.server_exists", f"an MCP server with id `{id}` is registered already")
        reg_id = id
    if headers and url is None:
        raise _bad(name, "`headers` apply to a `url` server only")
    if command is not None:
        argv = [command] if isinstance(command, str) else list(command)
        argv += list(args or ())
        if not argv or not all(isinstance(a, str) for a in argv) or not argv[0].strip():
            raise _bad(name, "`command` must be a non-empty executable, with string arguments")
        return ServerSpec(
            id=reg_id, name=name, transport="stdio", command=tuple(argv), env=_str_map(name, "env", env),
            cwd=None if cwd is None else str(cwd), timeout=float(timeout),
        )
    if args or env or cwd:
        raise _bad(name, "`args`, `env` and `cwd` apply to a stdio `command` only")
    if url is not None:
        if not isinstance(url, str) or not re.match(r"^https?://", url):
            raise _bad(name, f"`url` must start with http:// or https://, not {url!r}")
        return ServerSpec(id=reg_id, name=name, transport="http", url=url,
                          headers=_str_map(name, "headers", headers), timeout=float(timeout))
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if not isinstance(server, MCPServer | Server):
        raise _bad(name, f"`server` must be an mcp MCPServer or Server, not {type(server).__name__}")
    return ServerSpec(id=reg_id, name=name, transport="memory", server=server, timeout=float(timeout))


def parse_mcp_json(source: str | Path | Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `add()` keyword arguments of each server in an `mcp.json` document, in file order.

    Accepts a path or the parsed document: `{"mcpServers": {name: {command, args, env, cwd} |
    {url, headers}}}`, each entry optionally with `type` (`stdio`, `http`), `disabled` or
    `enabled`, `timeout` (seconds) and `id`. Other keys other clients use (`autoApprove`, ...) are
    ignored. A relative `cwd` is taken from the file's folder. Every bad entry is named in one
    `ToolbenchError("mcp.config_invalid")`."""
    base: Path | None = None
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ToolbenchError("mcp.config_invalid", f"cannot read MCP config {path}: {exc}") from exc
        base = path.parent
    else:
        data = source
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        raise ToolbenchError("mcp.config_invalid", 'an MCP config is {"mcpServers": {name: {...}}}')
    entries: list[dict[str, Any]] = []
    problems: list[str] = []
    for name, entry in servers.items():
        try:
            entries.append(_entry_kwargs(str(name), entry, base))
        except ToolbenchError as exc:
            problems.append(exc.message)
    if problems:
        raise ToolbenchError("mcp.config_invalid", "; ".join(problems))
    return entries


def _entry_kwargs(name: str, entry: Any, base: Path | None) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise _bad(name, "each server entry must be an object")
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and kind != "stdio" and str(kind).lower() not in _HTTP_TYPES:
        raise _bad(name, f"transport `{kind}` is not supported; use stdio (command) or http (url)")
    kwargs: dict[str, Any] = {"name": name}
    for key in ("command", "args", "env", "cwd", "url", "headers", "id", "timeout"):
        if key in entry and entry[key] is not None:
            kwargs[key] = entry[key]
    if "args" in kwargs and (isinstance(kwargs["args"], str) or not isinstance(kwargs["args"], Sequence)):
        raise _bad(name, "`args` must be a list of strings")
    if base is not None and isinstance(kwargs.get("cwd"), str) and not Path(kwargs["cwd"]).is_absolute():
        kwargs["cwd"] = str(base / kwargs["cwd"])
    enabled, disabled = entry.get("enabled", True), entry.get("disabled", False)
    if not isinstance(enabled, bool) or not isinstance(disabled, bool):
        raise _bad(name, "`enabled` / `disabled` must be true or false")
    kwargs["enabled"] = enabled and not disabled
    # Check the shape now, so one bad entry fails the whole file before anything connects.
    make_spec(taken_ids=frozenset(), **{k: v for k, v in kwargs.items() if k != "enabled"})
    return kwargs
