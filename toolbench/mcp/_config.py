"""Server registrations: what `McpManager.add` and `mcp.json` accept, normalised and checked.

A registration (`ServerSpec`) is a frozen value. Its id is stable across restarts for the same
configuration: a slug of the display name (lowercase `[a-z0-9-]`), made unique within the
manager with `-2`, `-3`, ..., or the `id=` given. Tool ids are `mcp/<id>:<tool>`; the display
name seeds the call names the model sees.

`mcp.json` placeholders are expanded as the common clients do, in `command`, `args`, `env`
values, `cwd`, `url`, `headers` values and `envFile`: `${env:NAME}` (VS Code, Cursor), `${NAME}`
and `${NAME:-default}` (Claude Code; the default also replaces an empty value), `${userHome}`
and `${pathSeparator}` / `${/}`. A bare `$NAME` stays as written (no client expands it), and one
level only: a value holding `${...}` is not expanded again. An unset variable without a default,
`${input:...}` (VS Code prompts; toolbench cannot) and unknown forms are `mcp.config_invalid`.
`envFile` (VS Code, Cursor) names a dotenv file (`KEY=VALUE`, `export`, quotes, `#` comments)
read for a stdio server: its variables go under `env`, which wins on a clash.
"""

from __future__ import annotations

import json
import math
import os
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
    env: Mapping[str, str] | None = field(default=None, repr=False)  # over the SDK's safe defaults; may hold secrets
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = field(default=None, repr=False)
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
    `enabled`, `timeout` (seconds), `id` and `envFile` (stdio). Other keys other clients use
    (`autoApprove`, ...) are ignored. Placeholders are expanded (see the module docstring); a
    relative `cwd` or `envFile` is taken from the file's folder. Every bad entry is named in one
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
    for key in ("command", "args", "env", "cwd", "url", "headers"):
        if key in kwargs:
            kwargs[key] = _expand_value(name, key, kwargs[key])
    env_file = entry.get("envFile")
    if env_file is not None:
        if not isinstance(env_file, str) or "command" not in kwargs:
            raise _bad(name, "`envFile` is a path, for a stdio `command` only")
        path = Path(expand(env_file, name=name, where="envFile"))
        if base is not None and not path.is_absolute():
            path = base / path
        env = kwargs.get("env")
        if env is not None and not isinstance(env, Mapping):
            raise _bad(name, "`env` must be an object of strings")
        kwargs["env"] = {**read_env_file(name, path), **(env or {})}
    if base is not None and isinstance(kwargs.get("cwd"), str) and not Path(kwargs["cwd"]).is_absolute():
        kwargs["cwd"] = str(base / kwargs["cwd"])
    enabled, disabled = entry.get("enabled", True), entry.get("disabled", False)
    if not isinstance(enabled, bool) or not isinstance(disabled, bool):
        raise _bad(name, "`enabled` / `disabled` must be true or false")
    kwargs["enabled"] = enabled and not disabled
    # Check the shape now, so one bad entry fails the whole file before anything connects.
    make_spec(taken_ids=frozenset(), **{k: v for k, v in kwargs.items() if k != "enabled"})
    return kwargs


_PLACEHOLDER = re.compile(r"\$\{([^{}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def expand(text: str, *, name: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with its placeholders replaced (see the module docstring); `mcp.config_invalid`
    names the server, the field and the variable (never a value) when one cannot be."""
    env = os.environ if environ is None else environ

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        if body == "userHome":
            return str(Path.home())
        if body in ("/", "pathSeparator"):
            return os.sep
        if body.startswith("input:"):
            raise _bad(name, f"`{where}` uses `${{{body}}}`, a value VS Code prompts for; toolbench cannot "
                       "prompt: set an environment variable and write `${env:NAME}`")
        var, has_default, default = body.partition(":-")
        var = var.removeprefix("env:")
        if not _VAR_NAME.fullmatch(var):
            raise _bad(name, f"`{where}` uses `${{{body}}}`, not a placeholder toolbench knows "
                       "(`${env:NAME}`, `${NAME}`, `${NAME:-default}`, `${userHome}`)")
        value = env.get(var)
        if has_default and not value:
            return default
        if value is None:
            raise _bad(name, f"`{where}` uses `${{{body}}}` but the environment variable {var} is not set "
                       f"(set it, or give a default: `${{{var}:-default}}`)")
        return value

    return _PLACEHOLDER.sub(one, text)


def _expand_value(name: str, where: str, value: Any) -> Any:
    """Expand the strings of a field: a string, a list of strings, or an object's values."""
    if isinstance(value, str):
        return expand(value, name=name, where=where)
    if isinstance(value, Mapping):
        return {k: _expand_value(name, f"{where}.{k}", v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand_value(name, f"{where}[{i}]", v) for i, v in enumerate(value)]
    return value


def read_env_file(name: str, path: Path) -> dict[str, str]:
    """The variables of a dotenv file: `KEY=VALUE` lines, `export KEY=VALUE`, single or double
    quotes (double ones read `\\n` as a newline), `#` comments; values are taken literally."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(name, f"cannot read envFile {path}: {exc}") from exc
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _VAR_NAME.fullmatch(key):
            raise _bad(name, f"envFile {path} line {number} is not KEY=VALUE")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1].replace("\\n", "\n") if value[0] == '"' else value[1:-1]
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]  # a comment after an unquoted value
        out[key] = value
    return out
