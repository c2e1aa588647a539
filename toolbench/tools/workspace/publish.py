"""Publishing the invocation's output: `workspace.commit`, `workspace.finish`, and auto-publish.

The published output lives in the invocation state (`state.output`), a JSON object
(the runtime copies it into the run log, so it survives a reopen): `path`, `mode`, `text`
(the output so far: replace sets it to the file's text, append adds the file's text to it),
`sha256` (of the file just published), `source` (`commit` or `auto`), `round`, `callId`,
`reason`. `PublishedOutput` is its typed view (`inv.output`). Both tools are chat-scene only
(the session scene drops them, table 9.13).

Auto-publish, the whole rule (reference §6.3, table 9.10), is here:
* a successful shell that changed a text file makes the last one it changed the round's
  candidate (`note_shell_outcome`, read and hashed right then); a failed, timed-out or
  cancelled shell clears any pending candidate;
* at the end of each round (`settle_round`, the shell's round-end hook) a chat-scene invocation
  publishes the candidate (mode replace, source `auto`) unless that round committed
  explicitly; the candidate never outlives its round.
The finish rule (reference §4.4; upstream tool_execution.rs): in a foreground run
(`profile.run.finish_requires_commit`) `workspace.finish` before any explicit commit of this
invocation is refused with the recoverable `agent.foreground_commit_required`; an auto-publish
does not count. The output JSON keeps `commits` (explicit commits so far), so the rule holds
after a reopen too.
"Text file" [I]: a UTF-8 file named `*.md`, `*.markdown` or `*.txt` (any case). Upstream's
shell test publishes `output/Moved.MD` though the same command wrote `state.json` after it, so
data files such as JSON are not candidates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ...core.descriptors import Scene, ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext
from ..state import InvocationState
from .files import decode, open_file
from .paths import Workspace

DEFAULT_PATH: Final = "output/main.md"
TEXT_SUFFIXES: Final = frozenset({".md", ".markdown", ".txt"})


@dataclass(frozen=True, slots=True)
class PublishedOutput:
    """The invocation's published output (`inv.output`).

    `text` is the whole output so far; `path` and `sha256` name the file published last (the
    sha256 of its bytes); `source` says how: `commit` (an explicit `workspace.commit`) or
    `auto` (the round's auto-publish of the text file a shell changed last); `round` and
    `call_id` name the commit call, or the shell call that changed the file; `commits` counts
    the explicit commits so far (the finish rule reads it)."""

    path: str
    text: str
    sha256: str
    source: Literal["commit", "auto"]
    mode: Literal["replace", "append"]
    round: int
    call_id: str
    reason: str | None = None
    commits: int = 0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PublishedOutput:
        return cls(path=data["path"], text=data["text"], sha256=data["sha256"], source=data.get("source", "commit"),
                   mode=data.get("mode", "replace"), round=int(data.get("round", 0)),
                   call_id=str(data.get("callId", "")), reason=data.get("reason"), commits=commits_of(data))


def commits_of(output: dict[str, Any] | None) -> int:
    """Explicit commits an invocation made, from its output JSON (older logs: one if it was a commit)."""
    if output is None:
        return 0
    return int(output.get("commits", 1 if output.get("source") == "commit" else 0))


def is_text_name(name: str) -> bool:
    """Whether a file of this name can be an auto-publish candidate (module doc)."""
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in TEXT_SUFFIXES


def note_shell_outcome(ctx: ToolContext, ws: Workspace, ok: bool, changed: Sequence[str] | None) -> None:
    """A shell call's effect on the round's candidate. `changed`: workspace paths, oldest first."""
    if not ok:
        ctx.state.publish_candidate = None
        return
    for path in reversed(changed or ()):
        try:
            with open_file(ws, path) as f:
                data = f.read(ws)
            res = f.res
            text = decode(res, data)
        except ToolError:  # gone again, over the size limit, or not UTF-8: not text to publish
            continue
        ctx.state.publish_candidate = {"path": res.display, "text": text, "sha256": hashlib.sha256(data).hexdigest(),
                                    "round": ctx.round, "callId": ctx.call_id}
        return


def settle_round(state: InvocationState, round_no: int, scene: Scene) -> None:
    """The shell's round-end hook: publish the round's candidate (in the chat scene, when the
    round made no explicit commit), and drop it either way."""
    candidate = state.publish_candidate
    if candidate is None or candidate["round"] != round_no:
        return
    state.publish_candidate = None
    output = state.output
    if scene != "chat" or (output is not None and output.get("source") == "commit"
                           and output.get("round") == round_no):
        return
    state.output = {"path": candidate["path"], "mode": "replace", "text": candidate["text"],
                         "sha256": candidate["sha256"], "reason": None, "source": "auto", "round": round_no,
                         "callId": candidate["callId"], "commits": commits_of(output)}

COMMIT_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.commit"),
    parent_only=True,
    description=(
        f"Publish a workspace text file as your answer (default `{DEFAULT_PATH}`). `mode: replace` (default) "
        "makes the file's text the whole output; `append` adds it after what was published before. "
        "Write the file first, then commit it; call finish when you are done."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": f"File to publish. Default `{DEFAULT_PATH}`."},
            "mode": {"type": "string", "enum": ["replace", "append"], "description": "Default `replace`."},
            "reason": {"type": "string", "description": "Why this is published (kept in the records)."},
        },
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
)

FINISH_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.finish"),
    description="End your work on this request. Must be the last call of its round; commit your output first.",
    input_schema={
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "A short note on why you are done."}},
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
    completes_round=True,
)


def commit(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    with open_file(ws, args.get("path", DEFAULT_PATH)) as f:
        data = f.read(ws)
    res = f.res
    text = decode(res, data)
    mode = args.get("mode", "replace")
    previous = ctx.state.output
    output = (previous["text"] if previous and mode == "append" else "") + text
    ctx.state.output = {"path": res.display, "mode": mode, "text": output,
                             "sha256": hashlib.sha256(data).hexdigest(), "reason": args.get("reason"),
                             "source": "commit", "round": ctx.round, "callId": ctx.call_id,
                             "commits": commits_of(previous) + 1}
    return ToolOutput(
        content=f"Committed `{res.display}` ({len(text)} characters, {mode}); the output now has {len(output)} "
                "characters.",
        structured={"path": res.display, "mode": mode, "chars": len(text), "outputChars": len(output),
                    "sha256": hashlib.sha256(data).hexdigest(), "reason": args.get("reason")},
        resource_refs=(res.display,),
    )


def finish(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    committed = ctx.state.output
    can_commit = ctx.call_name_of("builtin:workspace.commit") is not None  # else the rule could never be met
    if ctx.profile.run.finish_requires_commit and can_commit and commits_of(committed) == 0:
        raise ToolError("agent.foreground_commit_required",
                        "Foreground runs must call workspace.commit successfully before workspace.finish: write "
                        f"your answer (default `{DEFAULT_PATH}`), commit it, then finish.")
    ctx.state.finished = True
    note = f" Published output: `{committed['path']}`." if committed else " Nothing was committed."
    return ToolOutput(content="Finished." + note,
                      structured={"finished": True, "reason": args.get("reason"),
                                  "committedPath": committed["path"] if committed else None})


TOOLS = (BuiltinTool(COMMIT_DESCRIPTOR, commit), BuiltinTool(FINISH_DESCRIPTOR, finish))
