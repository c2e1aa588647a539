"""Registrations: what `McpManager.add` and `mcp.json` ask for, normalised and checked.

`ServerOptions` is one registration as asked (name, transport, id, timeout, enabled, roots): `add`
and `aadd` build it from their keywords (`ServerFields`, declared once), the `mcp.json` loader
from each entry. `register` turns it into the `ServerSpec` the manager keeps, with its id: stable
across restarts for the same configuration, a slug of the display name (lowercase `[a-z0-9-]`)
made unique within the manager with `-2`, `-3`, ..., or the `id=` given. Tool ids are
`mcp/<id>:<tool>`; the display name seeds the call names the model sees.

`mcp.json` entries are `{command, args, env, cwd, envFile}` (stdio) or `{url, headers,
oauth}` (streamable HTTP; `oauth` as `_oauth` reads it); `type` (or `transport`) picks the
transport class (`_transport_types`: the built-in ones, then those registered or installed),
and without one `command` means stdio and `url` streamable HTTP. `sse` and other types are
refused (`mcp.config_invalid`). Placeholders are expanded (see `_mcp_json`); Python registrations are
taken literally, but for `~` in `roots` folders. `roots` (any transport) is the folders declared to
that server as the client's roots (see `_roots`).

An `mcp.json` file is read by `read_mcp_json` alone (the loader, `toolbench check`'s smoke
calls and the command line's masking of expanded values all go through it): a regular file of
at most `CONFIG_BYTES`, UTF-8 JSON nested at most `CONFIG_DEPTH` levels (a real one has 5; a
deeper one would overflow the recursive readers after it). Anything else is one
`mcp.config_invalid` line, never a hang on a FIFO or a RecursionError.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack, cast

from ..core.errors import ToolbenchError
from ..core.fileio import read_regular_file
from ._mcp_json import ConfigEntry, config_invalid
from ._oauth import OAuth
from ._roots import WORKSPACE, RootsSetting, RootsValue, config_roots, roots_setting
from ._transport import HttpTransport, InProcessTransport, McpTransport, StdioTransport
from ._transport_types import transport_type, transport_types

DEFAULT_TIMEOUT = 60.0
CONFIG_BYTES = 4 << 20  # an mcp.json is a few KB
CONFIG_DEPTH = 32  # levels of objects and arrays (module docstring)
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class ServerFields(TypedDict, total=False):
    """The keywords of `McpManager.add` / `aadd` (besides `name` and `connect`).

    One of `command` (stdio; with `args`, `env`, `cwd`), `url` (streamable HTTP; with `headers`
    and `oauth`), `server` (an in-process `MCPServer` or `Server`) or `transport` (any
    `McpTransport`); `roots` with any of them (`"workspace"`, `False` or a list of folders: see
    `_roots`)."""

    command: str | Sequence[str]
    args: Sequence[str]
    env: Mapping[str, str]
    cwd: str | Path
    url: str
    headers: Mapping[str, str]
    oauth: OAuth
    server: Any
    transport: McpTransport
    id: str
    timeout: float
    enabled: bool
    roots: RootsValue


# Which keywords build which transport, and the ones that go with it.
_TRANSPORT_KEYS = {"command": ("args", "env", "cwd"), "url": ("headers", "oauth"), "server": (), "transport": ()}


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """One registration as asked: checked when made (`mcp.config_invalid` names the server)."""

    name: str
    transport: McpTransport
    id: str | None = None  # None: a slug of the name, made unique when registered
    timeout: float = DEFAULT_TIMEOUT  # seconds for connecting + listing, and for each call
    enabled: bool = True
    roots: RootsSetting = WORKSPACE  # normalised when made (`_roots.roots_setting`)

    def __post_init__(self) -> None:
        _check_name(self.name)
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) \
                or timeout <= 0:
            raise _bad(self.name, f"`timeout` must be a positive number of seconds, not {timeout!r}")
        object.__setattr__(self, "timeout", float(timeout))
        if self.id is not None and (not isinstance(self.id, str) or not _ID_RE.fullmatch(self.id)):
            raise _bad(self.name, f"id `{self.id}` must match {_ID_RE.pattern}")
        if not isinstance(self.transport, McpTransport):
            raise _bad(self.name, f"`transport` must be an McpTransport, not {type(self.transport).__name__}")
        if not isinstance(self.enabled, bool):
            raise _bad(self.name, "`enabled` / `disabled` must be true or false")
        with _about(self.name):
            object.__setattr__(self, "roots", roots_setting(self.roots))

    @classmethod
    def of(cls, name: str, **fields: Unpack[ServerFields]) -> ServerOptions:
        """The options `add(name, **fields)` asks for; an unknown keyword is a TypeError."""
        unknown = sorted(set(fields) - ServerFields.__optional_keys__)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)} for an MCP server")
        _check_name(name)
        raw = cast(Mapping[str, Any], fields)  # read by key below; the TypedDict types the callers
        given = [key for key in _TRANSPORT_KEYS if raw.get(key) is not None]
        with _about(name):
            if len(given) != 1:
                raise config_invalid("give exactly one of `command` (stdio), `url` (streamable HTTP), `server` "
                                     "(in-process) or `transport`" + (f"; got {', '.join(given)}" if given else ""))
            transport = _transport(given[0], raw)
            roots = roots_setting(fields.get("roots"))
        return cls(name, transport, id=fields.get("id"), timeout=fields.get("timeout", DEFAULT_TIMEOUT),
                   enabled=fields.get("enabled", True), roots=roots)

    def register(self, taken_ids: set[str] | frozenset[str]) -> ServerSpec:
        """The spec under this registration's id; `mcp.server_exists` when `id=` is taken."""
        if self.id is None:
            return ServerSpec(allocate_id(self.name, taken_ids), self.name, self.transport, self.timeout, self.roots)
        if self.id in taken_ids:
            raise ToolbenchError("mcp.server_exists", f"an MCP server with id `{self.id}` is registered already")
        return ServerSpec(self.id, self.name, self.transport, self.timeout, self.roots)


def _transport(key: str, fields: Mapping[str, Any]) -> McpTransport:
    stray = [k for keys in _TRANSPORT_KEYS.values() for k in keys if k not in _TRANSPORT_KEYS[key] and fields.get(k)]
    if stray:
        raise config_invalid(f"{', '.join(f'`{k}`' for k in stray)} do not go with `{key}`")
    if key == "command":
        return StdioTransport(fields["command"], fields.get("args") or (), fields.get("env"), fields.get("cwd"))
    if key == "url":
        return HttpTransport(fields["url"], fields.get("headers"), fields.get("oauth"))
    if key == "server":
        return InProcessTransport(fields["server"])
    transport: McpTransport = fields["transport"]  # checked by ServerOptions
    return transport


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One registered server: its id, display name, transport, timeout and roots."""

    id: str
    name: str
    transport: McpTransport
    timeout: float = DEFAULT_TIMEOUT
    roots: RootsSetting = WORKSPACE

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


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ToolbenchError("mcp.config_invalid", "an MCP server needs a non-blank name")


def _bad(name: str, problem: str) -> ToolbenchError:
    return ToolbenchError("mcp.config_invalid", f"MCP server `{name}`: {problem}")


@contextmanager
def _about(name: str) -> Iterator[None]:
    """Name the server in the `mcp.config_invalid` errors raised inside (a transport's)."""
    try:
        yield
    except ToolbenchError as exc:
        if exc.code != "mcp.config_invalid":
            raise
        raise _bad(name, exc.message) from exc


_INFERRED = {"command": "stdio", "url": "http"}  # an entry without a `type`


def parse_mcp_json(source: str | Path | Mapping[str, Any], *, timeout: float | None = None) -> list[ServerOptions]:
    """The registration of each server in an `mcp.json` document, in file order.

    Accepts a path or the parsed document: `{"mcpServers": {name: {...}}}`, each entry a
    transport's fields (see the module docstring), optionally with `disabled` or `enabled`,
    `timeout` (seconds), `id` and `roots`. Other keys other clients use (`autoApprove`, ...) are
    ignored. A relative `cwd`, `envFile` or `roots` folder is taken from the file's folder.
    `timeout` is the seconds of the entries that give none (default `DEFAULT_TIMEOUT`). Every bad
    entry is named in one `ToolbenchError("mcp.config_invalid")`."""
    base: Path | None = None
    if isinstance(source, str | Path):
        data = read_mcp_json(source)
        base = Path(source).parent
    else:
        data = source
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        raise ToolbenchError("mcp.config_invalid", 'an MCP config is {"mcpServers": {name: {...}}}')
    entries: list[ServerOptions] = []
    problems: list[str] = []
    for name, entry in servers.items():
        try:
            entries.append(_entry_options(str(name), entry, base, DEFAULT_TIMEOUT if timeout is None else timeout))
        except ToolbenchError as exc:
            problems.append(exc.message)
    if problems:
        raise ToolbenchError("mcp.config_invalid", "; ".join(problems))
    return entries


def read_mcp_json(path: str | Path) -> Any:
    """The JSON document of the `mcp.json` file at `path`, read as the module docstring says;
    `mcp.config_invalid` names the file and why it cannot be read."""
    try:
        data = read_regular_file(path, CONFIG_BYTES)
    except OSError as exc:
        raise _unreadable(path, exc.strerror or str(exc)) from exc
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _unreadable(path, "not UTF-8 text") from exc
    except RecursionError as exc:  # json.loads recurses per level
        raise _unreadable(path, f"nested deeper than {CONFIG_DEPTH} levels") from exc
    except ValueError as exc:
        raise _unreadable(path, f"not JSON ({exc})") from exc
    if _deeper_than(document, CONFIG_DEPTH):
        raise _unreadable(path, f"nested deeper than {CONFIG_DEPTH} levels")
    return document


def _unreadable(path: str | Path, why: str) -> ToolbenchError:
    return ToolbenchError("mcp.config_invalid", f"cannot read MCP config {path}: {why}")


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` levels (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _entry_options(name: str, entry: Any, base: Path | None, default_timeout: float) -> ServerOptions:
    with _about(name):
        if not isinstance(entry, Mapping):
            raise config_invalid("each server entry must be an object")
        kind = entry.get("type", entry.get("transport"))
        if kind is None:
            inferred = [_INFERRED[k] for k in _INFERRED if entry.get(k) is not None]
            if len(inferred) != 1:
                raise config_invalid("give exactly one of `command` (stdio) or `url` (streamable HTTP)")
            kind = inferred[0]
        reader = transport_type(str(kind))
        if reader is None:
            raise config_invalid(f"transport `{kind}` is not supported; use stdio (command), http (url) or one of "
                                 f"{', '.join(transport_types())} (mcp.register_transport_type adds one)")
        transport = reader.from_config(ConfigEntry(entry, base))
        enabled, disabled = entry.get("enabled", True), entry.get("disabled", False)
        if not isinstance(enabled, bool) or not isinstance(disabled, bool):
            raise config_invalid("`enabled` / `disabled` must be true or false")
        roots = config_roots(ConfigEntry(entry, base))
    timeout = entry.get("timeout")
    return ServerOptions(name, transport, id=entry.get("id"), enabled=enabled and not disabled,
                         timeout=default_timeout if timeout is None else timeout, roots=roots)
