"""The durable roster of `bench.agents`: each roster child's identity, last mode, last status and
private context, in one file of the workspace's state folder (`.toolbench/agents/roster.json`).

Upstream keeps identities and runs per conversation in SQLite and hydrates them when its store
is first ready (store.ts `ready()`, `loadRunState`); toolbench keeps them per workspace, since
its roster lives with the bench. The service writes the file whenever a child's run ends, and a
reopened bench reads it once, when it first needs the roster.

    {"schemaVersion": 1, "children": [{"id": "sage", "name": "Sage", "role": null,
      "identity": null, "template": "general", "mode": "readonly", "status": "completed",
      "context": {"schemaVersion": 1, "protocol": "openai", "system": "...", "messages": [...]}}]}

The file's `schemaVersion` is the roster's form: another one, a torn or corrupt file reads as
no roster, with an `agent.roster_unreadable` notice (nothing raises). So does a file a hostile
workspace planted: it is read as every runtime file is (`read_runtime_file`: a regular file
beneath the workspace, at most ROSTER_MAX_BYTES), and the notice's `cause` is the storage code
(a FIFO, a link out of the workspace, a huge file). The save renames a new file over the name,
so it replaces such an entry without opening it. A context's own
`schemaVersion` is the form of its messages: another one is dropped (the child resumes with a
fresh context under its stored identity, as upstream's `contextSchemaVersion` check).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ...core.agents import MODES, check_agent_id
from ...core.errors import ToolbenchError
from ...core.fileio import encode_text
from ...tools.workspace.runtime_files import read_runtime_file, write_runtime_file
from ..store import RUNTIME_DIR

ROSTER_VERSION: Final = 1  # the file's form
CONTEXT_VERSION: Final = 1  # the form of a stored context (provider messages, a system prompt)
ROSTER_PATH: Final = f"{RUNTIME_DIR}/agents/roster.json"
ROSTER_MAX_BYTES: Final = 16 << 20  # thousands of children with long contexts; more is not a roster


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the bench did instead of failing (a coded line for the developer); `cause` is
    the code of the storage error under it, if one was."""

    code: str
    message: str
    cause: str | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """A child's private context: what a resume sends again, in the protocol that made it."""

    protocol: str | None
    system: str
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class StoredChild:
    """One child as the file keeps it; `context` is None when there is none of this version."""

    id: str
    identity: dict[str, str | None]
    mode: str
    status: str
    context: Context | None


class _Context(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schemaVersion: Literal[1]
    protocol: str | None
    system: str
    messages: list[dict[str, Any]]


class _Child(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str | None
    role: str | None
    identity: str | None
    template: str
    mode: str
    status: str
    context: dict[str, Any] | None  # read apart: a context of another version is dropped, not an error

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_agent_id(value)

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        return value


class _Roster(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schemaVersion: Literal[1]
    children: list[_Child]


def load(workspace: Path) -> tuple[list[StoredChild], Notice | None]:
    """The stored children, in the order they were made, and a notice when the file could not be
    read (then no children: the bench starts a fresh roster). No file: none, no notice."""
    try:
        raw = read_runtime_file(workspace, ROSTER_PATH, limit=ROSTER_MAX_BYTES)
    except ToolbenchError as exc:  # storage.*: not a regular file, a link out, too large, unreadable
        return [], _unreadable(exc.message, exc.code)
    if raw is None:
        return [], None
    try:
        roster = _Roster.model_validate_json(raw)
        children = [_stored(c) for c in roster.children]
    except (ValidationError, ValueError) as exc:  # torn, not JSON, another form, a bad context
        return [], _unreadable(str(exc).splitlines()[0])
    if len({c.id.casefold() for c in children}) != len(children):
        return [], _unreadable("two children share an id")
    return children, None


def save(workspace: Path, children: Sequence[StoredChild]) -> Notice | None:
    """Replace the file with `children` (atomically); a notice instead of an error when it cannot
    be written, or a context is not JSON (the roster stays in memory)."""
    data = {"schemaVersion": ROSTER_VERSION, "children": [_row(c) for c in children]}
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # a message that is not JSON
        return Notice("agent.roster_write_failed", f"{ROSTER_PATH} was not written ({type(exc).__name__}: {exc})")
    try:
        write_runtime_file(workspace, ROSTER_PATH, encode_text(text + "\n"))
    except ToolbenchError as exc:  # storage.*: a folder on its way is a link out, the disk refused
        return Notice("agent.roster_write_failed", f"{ROSTER_PATH} was not written ({exc.message})", exc.code)
    return None


def _unreadable(why: str, cause: str | None = None) -> Notice:
    return Notice("agent.roster_unreadable", f"{ROSTER_PATH} could not be read ({why[:200]}); the roster starts "
                  "empty and the next child's run replaces the file", cause)


def _stored(child: _Child) -> StoredChild:
    identity = {"name": child.name, "role": child.role, "identity": child.identity, "template": child.template}
    context = None
    if child.context is not None and child.context.get("schemaVersion") == CONTEXT_VERSION:
        kept = _Context.model_validate(child.context)  # this version's context must be whole
        context = Context(kept.protocol, kept.system, tuple(kept.messages))
    return StoredChild(child.id, identity, child.mode, child.status, context)


def _row(child: StoredChild) -> dict[str, Any]:
    context = child.context
    return {"id": child.id, **child.identity, "mode": child.mode, "status": child.status,
            "context": None if context is None else {
                "schemaVersion": CONTEXT_VERSION, "protocol": context.protocol, "system": context.system,
                "messages": list(context.messages)}}
