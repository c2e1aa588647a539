"""`todo.write`: the invocation's task list, replaced whole by every call (LiveAgent §6).

The list lives in the invocation's state (`inv.todos` reads it); nothing is persisted. A failed
call leaves the list as it was.
"""

from __future__ import annotations

from typing import Any, Final

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .base import BuiltinTool, ToolContext
from .state import StateKey

STATUSES: Final = ("pending", "in_progress", "completed")

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("todo.write"),
    parent_only=True,  # LiveAgent never offers TodoWrite to a sub-agent child
    description=(
        "Write your task list for this task. Each call replaces the whole list (send every item, an empty "
        "list clears it). Mark at most one item in_progress at a time; `activeForm` is the item as an ongoing "
        "action, e.g. `Running the tests`."),
    input_schema={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": "What to do."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1,
                                       "description": "The item as an ongoing action."},
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
)


def validate(todos: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The items, checked in upstream order: non-blank text, then at most one in progress."""
    for i, item in enumerate(todos, 1):
        for key in ("content", "activeForm"):
            if not str(item[key]).strip():
                raise ToolError("tool.invalid_arguments", f"`todos[{i - 1}].{key}` is blank; describe the item.")
    active = sum(1 for item in todos if item["status"] == "in_progress")
    if active > 1:
        raise ToolError("todo.too_many_in_progress",
                        f"{active} items are in_progress; at most one may be. Mark the others pending or completed.",
                        structured={"in_progress": active})
    return [{"content": t["content"], "status": t["status"], "activeForm": t["activeForm"]} for t in todos]


def render(todos: list[dict[str, str]]) -> str:
    if not todos:
        return "Todo list cleared."
    done = sum(1 for t in todos if t["status"] == "completed")
    lines = [f"Todos updated: {done}/{len(todos)} completed."]
    lines += [f"{i}. [{t['status']}] {t['content']}" for i, t in enumerate(todos, 1)]
    return "\n".join(lines)


TODOS: StateKey[list[dict[str, str]]] = StateKey("todo.items", list)  # the invocation's list (`inv.todos`)


def write(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    todos = validate(args["todos"])
    ctx.state.set(TODOS, todos)
    return ToolOutput(content=render(todos), structured={"kind": "todo_write", "todos": todos})


TOOLS = (BuiltinTool(DESCRIPTOR, write),)
