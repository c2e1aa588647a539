"""Per-server roots: which folders toolbench declares to one server as the client's roots.

A registration's `roots` (`add(..., roots=...)`, the `roots` key of an `mcp.json` entry):

- `"workspace"` (the default): the workspace roots the profile makes visible (the manager's
  roots provider), read at each `roots/list`; a profile change is announced to these servers
  only (`roots_changed`). A manager without a provider declares none.
- `False`: no roots capability to this server at all. Servers that trade the folders they were
  started with for the client's roots (`@modelcontextprotocol/server-filesystem`) keep theirs.
- a list of folders: declared, and answered as their `file://` URIs, for as long as the
  registration lasts. `~` is expanded; a relative path is taken from the `mcp.json` file's
  folder (like `cwd`), or from the current folder for `add()`; a `file://` URI is read as its
  path. Missing folders are declared all the same (a server may create them) and the server's
  `warnings` say so while they are missing (`mcp.roots_missing`): server-filesystem, for one,
  skips a root that does not exist.

It applies to every transport, so it sits on the registration, not on a transport class.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import unquote, urlparse

from ._mcp_json import ConfigEntry, config_invalid

WORKSPACE: Final = "workspace"
RootsSetting = Literal["workspace", False] | tuple[Path, ...]
"""A normalised `roots`: `"workspace"`, `False`, or absolute folder paths in the order given."""
RootsValue = Literal["workspace", False] | Sequence[str | os.PathLike[str]] | None
"""What `add(roots=...)` takes (None is the default, `"workspace"`)."""
_ALLOWED = '"workspace" (the workspace roots, the default), false (declare no roots) or a list of folder paths'


def roots_setting(value: Any, *, base: Path | None = None) -> RootsSetting:
    """`value` normalised (idempotent); `mcp.config_invalid` says what is allowed (the caller
    names the server). `base` is the folder a relative path is taken from (default: the current one)."""
    if value is None or (isinstance(value, str) and value == WORKSPACE):
        return WORKSPACE
    if value is False:
        return False
    if isinstance(value, str | bytes | os.PathLike) or not isinstance(value, Sequence):
        hint = "; a single folder is a list of one" if isinstance(value, str | os.PathLike) else ""
        raise config_invalid(f"`roots` must be {_ALLOWED}, not {_kind(value)}{hint}")
    paths = [_folder(item, f"roots[{index}]", base) for index, item in enumerate(value)]
    return tuple(dict.fromkeys(paths))


def config_roots(entry: ConfigEntry) -> RootsSetting:
    """The `roots` of an `mcp.json` entry: placeholders expanded, relative paths from its folder."""
    return roots_setting(entry.value("roots"), base=entry.base)


def declares(setting: RootsSetting, provider: bool) -> bool:
    """Whether a server on `setting` is declared roots (`provider`: the manager has workspace roots)."""
    return provider if setting == WORKSPACE else setting is not False


def follows_workspace(setting: RootsSetting) -> bool:
    """Whether a server on `setting` is told when the workspace roots change."""
    return setting == WORKSPACE


def missing_folders(setting: RootsSetting) -> list[Path]:
    """The folders of a roots list that are not folders now (a stat each; none for the others)."""
    return [] if isinstance(setting, str) or setting is False else [p for p in setting if not p.is_dir()]


def _folder(item: Any, where: str, base: Path | None) -> Path:
    if not isinstance(item, str | os.PathLike) or not str(item).strip():
        raise config_invalid(f"`{where}` must be a folder path (a non-empty string), not {_kind(item)}")
    text = os.fspath(item)
    if not isinstance(text, str):
        raise config_invalid(f"`{where}` must be a folder path (a string), not bytes")
    if text.startswith("file://"):
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise config_invalid(f"`{where}` is a file:// URI of another host; give a local folder")
        text = unquote(parsed.path)
    try:
        path = Path(text).expanduser()
    except RuntimeError as exc:  # `~name` of no known user
        raise config_invalid(f"`{where}` starts with `~` but that home folder is not known here") from exc
    if not path.is_absolute():
        path = (base if base is not None else Path.cwd()) / path
    return Path(os.path.normpath(path))


def _kind(value: Any) -> str:
    """The kind of a bad value, never the value (it may come from the environment)."""
    if isinstance(value, str):
        return "a string other than \"workspace\""
    return "true" if value is True else type(value).__name__
