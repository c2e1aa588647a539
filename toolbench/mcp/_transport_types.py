"""The `mcp.json` `type`s toolbench reads, and the transport class each names.

Built in: `stdio` and streamable HTTP (`http`, `streamable-http`, ...; `sse` is not one). A
transport of one's own (an `McpTransport` subclass with a `from_config(entry)` classmethod)
joins with `toolbench.mcp.register_transport_type("ws", WebSocketTransport)`, or from an
installed package through the entry-point group `toolbench.transports`:

    [project.entry-points."toolbench.transports"]
    ws = "tb_ws:WebSocketTransport"

The group is read once, the first time a type that is neither built in nor registered is
looked up, so `import toolbench` loads none of them; then `toolbench check --mcp-config`, the
loader and the app read such entries as they read `stdio`. An entry point that cannot be used
(its import fails, it is no transport class, it names a built-in type) is skipped and said in
`transport_notices()`, never raised.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any, Final, Protocol

from ..core.errors import ToolbenchError
from ._mcp_json import ConfigEntry
from ._transport import HttpTransport, McpTransport, StdioTransport

GROUP: Final = "toolbench.transports"
NAME: Final = re.compile(r"[a-z][a-z0-9._-]{0,40}")


class FromConfig(Protocol):
    def from_config(self, entry: ConfigEntry) -> McpTransport: ...


BUILTIN: Mapping[str, FromConfig] = MappingProxyType({
    "stdio": StdioTransport,
    "http": HttpTransport,
    "streamable-http": HttpTransport,
    "streamable_http": HttpTransport,
    "streamablehttp": HttpTransport,
})

_lock: Final = threading.RLock()  # a plugin may register itself while the group loads
_added: dict[str, FromConfig] = {}
_notices: list[str] = []
_loaded = False


def register_transport_type(name: str, cls: Any) -> None:
    """Let `mcp.json` entries of `"type": name` be read by `cls.from_config(entry)` (a
    `ConfigEntry`: `value`, `path`, `env_file`); replaces an earlier registration of `name`."""
    problem = _problem(name, cls)
    if problem is not None:
        raise ToolbenchError("bench.misuse", problem)
    with _lock:
        _added[name] = cls


def unregister_transport_type(name: str) -> None:
    with _lock:
        _added.pop(name, None)


def transport_type(kind: str) -> FromConfig | None:
    """The class that reads entries of `kind` (any case), or None."""
    kind = kind.lower()
    found = BUILTIN.get(kind) or _added.get(kind)
    if found is None and not _loaded:
        _load()
        found = _added.get(kind)
    return found


def transport_types() -> tuple[str, ...]:
    """Every type an `mcp.json` entry may name: the built-in ones, then the added ones."""
    _load()
    return (*BUILTIN, *_added)


def transport_notices() -> tuple[str, ...]:
    """The installed transports that were skipped, and why (`mcp.transport_plugin_skipped: ...`)."""
    _load()
    return tuple(_notices)


def reset() -> None:
    """Forget the registered and installed types (a test; a notebook after a `pip install`)."""
    global _loaded
    with _lock:
        _added.clear()
        _notices.clear()
        _loaded = False


def _problem(name: object, cls: object) -> str | None:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return f"a transport type is a lowercase name ([a-z][a-z0-9._-]*), not {name!r}"
    if name in BUILTIN:
        return f"the transport type `{name}` is built in"
    if not (isinstance(cls, type) and issubclass(cls, McpTransport) and callable(getattr(cls, "from_config", None))):
        return f"`{name}` needs an McpTransport subclass with a from_config(entry) classmethod, not {cls!r}"
    return None


def _load() -> None:
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True
        try:
            found = list(entry_points(group=GROUP))
        except Exception as exc:  # a broken distribution's metadata: nothing is installed then
            _notices.append(f"mcp.transport_plugin_skipped: the `{GROUP}` entry points cannot be read ({exc})")
            return
        for point in found:
            try:
                cls = point.load()
            except Exception as exc:  # its import failed: the others still load
                _notices.append(f"mcp.transport_plugin_skipped: `{point.name}` ({point.value}) failed to import: "
                                f"{type(exc).__name__}: {exc}")
                continue
            problem = _problem(point.name, cls)
            if problem is not None:
                _notices.append(f"mcp.transport_plugin_skipped: {problem}")
            elif point.name not in _added:  # one registered in code wins over an installed one
                _added[point.name] = cls
