"""`workspace.commit` (publish a workspace file as the invocation's output) and `workspace.finish`.

The published output lives in the invocation state under `workspace.output`:
`{"path", "mode", "text", "sha256", "reason"}` of the last commit, with `text` the output so
far (replace sets it to the file's text, append adds the file's text to it). Both tools are
chat-scene only (the session scene drops them, table 9.13).
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from ...core.descriptors import ToolDescriptor
from ...core.ids import ToolId
from ..base import BuiltinTool, ToolContext, ToolOutput
from .files import decode, read_bytes
from .paths import Workspace

OUTPUT_KEY: Final = "workspace.output"
FINISHED_KEY: Final = "workspace.finished"
DEFAULT_PATH: Final = "output/main.md"

COMMIT_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.commit"),
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
    res = ws.file(args.get("path", DEFAULT_PATH))
    data = read_bytes(ws, res)
    text = decode(res, data)
    mode = args.get("mode", "replace")
    previous = ctx.state.get(OUTPUT_KEY)
    output = (previous["text"] if previous and mode == "append" else "") + text
    ctx.state[OUTPUT_KEY] = {"path": res.display, "mode": mode, "text": output,
                             "sha256": hashlib.sha256(data).hexdigest(), "reason": args.get("reason")}
    return ToolOutput(
        content=f"Committed `{res.display}` ({len(text)} characters, {mode}); the output now has {len(output)} "
                "characters.",
        structured={"path": res.display, "mode": mode, "chars": len(text), "outputChars": len(output),
                    "sha256": hashlib.sha256(data).hexdigest(), "reason": args.get("reason")},
        resource_refs=(res.display,),
    )


def finish(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ctx.state[FINISHED_KEY] = True
    committed = ctx.state.get(OUTPUT_KEY)
    note = f" Published output: `{committed['path']}`." if committed else " Nothing was committed."
    return ToolOutput(content="Finished." + note,
                      structured={"finished": True, "reason": args.get("reason"),
                                  "committedPath": committed["path"] if committed else None})


TOOLS = (BuiltinTool(COMMIT_DESCRIPTOR, commit), BuiltinTool(FINISH_DESCRIPTOR, finish))
