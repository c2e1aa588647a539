"""How one `mcp.json` server entry is read: placeholders, relative paths and `envFile`.

Placeholders are expanded as the common clients do, in the fields a transport reads (`command`,
`args`, `env` values, `cwd`, `url`, `headers` values, `envFile`) and in `roots` (`_roots`): `${env:NAME}` (VS Code,
Cursor), `${NAME}` and `${NAME:-default}` (Claude Code; the default also replaces an empty
value), `${userHome}` and `${pathSeparator}` / `${/}`. A bare `$NAME` stays as written (no client
expands it), and one level only: a value holding `${...}` is not expanded again. An unset
variable without a default, `${input:...}` (VS Code prompts; toolbench cannot) and unknown forms
are `mcp.config_invalid`. `envFile` (VS Code, Cursor) names a dotenv file (`KEY=VALUE`,
`export`, quotes, `#` comments).

Errors here name the field, never a value, and not the server: the loader adds the server's name.
What a command line prints (a server's diagnostic, an OS error naming an expanded path) may
still hold a value: `expanded_values` gives it the placeholder to show instead of each.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ToolbenchError
from ..core.fileio import read_regular_file

_PLACEHOLDER = re.compile(r"\$\{([^{}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SHOWN_CHARS = 4  # the shortest expanded value `expanded_values` hides
ENV_FILE_BYTES = 1 << 20  # a dotenv file is a few lines


def config_invalid(problem: str) -> ToolbenchError:
    """`mcp.config_invalid` for one registration (the caller names the server)."""
    return ToolbenchError("mcp.config_invalid", problem)


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One `mcpServers` entry as a transport class reads it (`from_config`).

    `base` is the folder of the file it came from (None for a parsed document): relative paths
    are taken from there."""

    fields: Mapping[str, Any]
    base: Path | None = None

    def has(self, key: str) -> bool:
        """Whether the entry sets `key`: a null or an empty value (`{}`, `[]`, `""`) counts as
        unset, as the clients read it (an HTTP entry with `"env": {}` is an HTTP entry)."""
        value = self.fields.get(key)
        return value is not None and not (isinstance(value, str | list | dict) and not value)

    def value(self, key: str) -> Any:
        """The field with its placeholders expanded (strings, lists of strings, objects' values)."""
        return _expand_value(key, self.fields.get(key))

    def path(self, key: str) -> str | None:
        """A path field, expanded, relative to the file's folder."""
        value = self.value(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise config_invalid(f"`{key}` must be a path")
        if self.base is not None and not Path(value).is_absolute():
            return str(self.base / value)
        return value

    def env_file(self) -> dict[str, str] | None:
        """The variables of the `envFile` the entry names (None without one); an error names
        the file as the entry writes it, never its expanded path."""
        path = self.path("envFile")
        return None if path is None else read_env_file(path, shown=str(self.fields["envFile"]))


def expand(text: str, *, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with its placeholders replaced (see the module docstring); `mcp.config_invalid`
    names the field and the variable (never a value) when one cannot be."""
    env = os.environ if environ is None else environ
    return _PLACEHOLDER.sub(lambda match: _lookup(match.group(1), where, env)[0], text)


def expanded_values(document: Any, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the placeholders in `document`'s strings take from the environment (a variable's
    value, `${userHome}`), each mapped to its placeholder as written: what a command line shows
    instead of the value, so a token never reaches a terminal or a CI log. Values from a
    default (written in the file) and values under `SHOWN_CHARS` characters (too short to hide
    without hiding ordinary text) are left out; a placeholder that cannot be expanded is skipped."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    stack = [document]
    while stack:  # in document order (the first placeholder of a value names it), without recursion
        item = stack.pop()
        if isinstance(item, str):
            for match in _PLACEHOLDER.finditer(item):
                try:
                    value, from_env = _lookup(match.group(1), "", env)
                except ToolbenchError:
                    continue
                if from_env and len(value) >= SHOWN_CHARS:
                    out.setdefault(value, match.group(0))
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return out


def _lookup(body: str, where: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """The value of the placeholder `${body}`, and whether it came from the environment."""
    if body == "userHome":
        return str(Path.home()), True
    if body in ("/", "pathSeparator"):
        return os.sep, False
    if body.startswith("input:"):
        raise config_invalid(f"`{where}` uses `${{{body}}}`, a value VS Code prompts for; toolbench cannot "
                             "prompt: set an environment variable and write `${env:NAME}`")
    var, has_default, default = body.partition(":-")
    var = var.removeprefix("env:")
    if not _VAR_NAME.fullmatch(var):
        raise config_invalid(f"`{where}` uses `${{{body}}}`, not a placeholder toolbench knows "
                             "(`${env:NAME}`, `${NAME}`, `${NAME:-default}`, `${userHome}`)")
    value = env.get(var)
    if has_default and not value:
        return default, False
    if value is None:
        raise config_invalid(f"`{where}` uses `${{{body}}}` but the environment variable {var} is not set "
                             f"(set it, or give a default: `${{{var}:-default}}`)")
    return value, True


def _expand_value(where: str, value: Any) -> Any:
    if isinstance(value, str):
        return expand(value, where=where)
    if isinstance(value, Mapping):
        return {k: _expand_value(f"{where}.{k}", v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand_value(f"{where}[{i}]", v) for i, v in enumerate(value)]
    return value


def read_env_file(path: str | Path, *, shown: str | None = None) -> dict[str, str]:
    """The variables of a dotenv file: `KEY=VALUE` lines, `export KEY=VALUE`, single or double
    quotes (double ones read `\\n` as a newline), `#` comments; values are taken literally.

    A regular file of at most `ENV_FILE_BYTES`. Errors name it as `shown` (the path as the
    config writes it; default `path`)."""
    where = f"`envFile` {shown if shown is not None else path}"
    try:
        text = read_regular_file(path, ENV_FILE_BYTES).decode("utf-8")
    except OSError as exc:
        raise config_invalid(f"cannot read {where}: {exc.strerror or type(exc).__name__}") from exc
    except UnicodeDecodeError as exc:
        raise config_invalid(f"cannot read {where}: not UTF-8 text") from exc
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _VAR_NAME.fullmatch(key):
            raise config_invalid(f"{where} line {number} is not KEY=VALUE")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1].replace("\\n", "\n") if value[0] == '"' else value[1:-1]
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]  # a comment after an unquoted value
        out[key] = value
    return out
