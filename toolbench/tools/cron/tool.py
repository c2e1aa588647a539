"""`cron.create`, `cron.read`, `cron.update`, `cron.delete`, `cron.list_logs` (LiveAgent §7.1).

The tools edit the task store; `bench.cron.run_due(now)` runs what is due.
"""

from __future__ import annotations

from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext
from .tasks import LOGS_DEFAULT, LOGS_MAX, MAX_TIMEOUT, TYPES, CronStore, CronTask, check_expression, check_task

_TASK_ID = {"type": "string", "minLength": 1, "description": "The task's id, e.g. `task-0001`."}
_FIELDS: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1},
    "description": {"type": "string"},
    "cron": {"type": "string", "description": "Six fields, seconds first: `second minute hour day month weekday`, "
             "e.g. `0 0 9 * * 1-5` (09:00 on weekdays)."},
    "type": {"type": "string", "enum": list(TYPES), "description": "shell runs `script`; prompt queues `prompt`."},
    "enabled": {"type": "boolean"},
    "remaining_executions": {"type": ["integer", "null"], "minimum": 0,
                             "description": "Runs left; null or omitted is unlimited; at 0 the task is disabled."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT, "description": "Default 300."},
    "script": {"type": "string", "description": "shell: the bash script."},
    "prompt": {"type": "string", "description": "prompt: the message to send when due."},
    "workdir": {"type": "string", "description": "shell: the working folder (guest path; empty or default `/`)."},
}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _descriptor(name: str, description: str, schema: dict[str, Any], *, read_only: bool = False) -> ToolDescriptor:
    return ToolDescriptor(id=ToolId.builtin(f"cron.{name}"), description=description, input_schema=schema,
                          read_only=read_only)


CREATE = _descriptor("create", "Create a scheduled task: a shell script or a prompt, on a six-field cron schedule.",
                     _schema(_FIELDS, ["name", "cron", "type"]))
READ = _descriptor("read", "Read one scheduled task by `task_id`, or list them all when it is omitted.",
                   _schema({"task_id": _TASK_ID}, []), read_only=True)
UPDATE = _descriptor("update", "Change fields of a scheduled task.",
                     _schema({"task_id": _TASK_ID, **_FIELDS}, ["task_id"]))
DELETE = _descriptor("delete", "Delete a scheduled task and its run logs.", _schema({"task_id": _TASK_ID}, ["task_id"]))
LIST_LOGS = _descriptor(
    "list_logs", "The runs of a scheduled task, newest first (each output cut to 600 characters).",
    _schema({"task_id": _TASK_ID, "limit": {"type": "integer", "minimum": 1, "maximum": LOGS_MAX,
                                            "description": f"Runs to list (default {LOGS_DEFAULT})."}},
            ["task_id"]), read_only=True)


def _fields(args: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in args.items() if k in _FIELDS}
    if "cron" in out:
        out["cron"] = check_expression(out["cron"])
    return out


def _line(task: CronTask) -> str:
    left = "unlimited" if task.remaining_executions is None else str(task.remaining_executions)
    state = "enabled" if task.enabled else "disabled"
    return f"[{task.id}] {task.name} — `{task.cron}` {task.type}, {state}, runs {task.runs}, remaining {left}"


def create(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    task = CronStore(ctx.workspace).create(_fields(args))
    return ToolOutput(f"Created cron task {_line(task)}", {"task": task.model_dump(mode="json")})


def read(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    store = CronStore(ctx.workspace)
    if args.get("task_id"):
        task = store.get(args["task_id"])
        body = task.script if task.type == "shell" else task.prompt
        text = f"{_line(task)}\n{task.description}\n{task.type}:\n{body}".replace("\n\n", "\n")
        return ToolOutput(text, {"task": task.model_dump(mode="json")})
    tasks = store.tasks()
    text = "\n".join([f"{len(tasks)} cron tasks", *(_line(t) for t in tasks)])
    return ToolOutput(text, {"tasks": [t.model_dump(mode="json") for t in tasks]})


def update(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    store = CronStore(ctx.workspace)
    task = store.get(args["task_id"])
    changes = _fields(args)
    if not changes:
        raise ToolError("tool.invalid_arguments", "Nothing to update: give at least one task field.")
    if changes.get("type") and changes["type"] != task.type:  # the other kind's body goes away
        changes.setdefault("prompt" if task.type == "prompt" else "script", None)
    new = check_task(CronTask.model_validate(task.model_dump() | changes))
    store.put(new)
    return ToolOutput(f"Updated cron task {_line(new)}", {"task": new.model_dump(mode="json")})


def delete(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    task = CronStore(ctx.workspace).delete(args["task_id"])
    return ToolOutput(f"Deleted cron task [{task.id}] {task.name}.", {"task": task.model_dump(mode="json")})


def list_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    store = CronStore(ctx.workspace)
    task = store.get(args["task_id"])
    logs = store.logs(task.id, args.get("limit", LOGS_DEFAULT))
    lines = [f"{len(logs)} {'run' if len(logs) == 1 else 'runs'} of [{task.id}] {task.name}"]
    for entry in logs:
        code = "" if entry.get("exit_code") is None else f" exit {entry['exit_code']}"
        lines.append(f"- {entry['at']} {entry['status']}{code}: {entry.get('output', '')}".rstrip())
    return ToolOutput("\n".join(lines), {"task_id": task.id, "logs": logs})


TOOLS = (BuiltinTool(CREATE, create), BuiltinTool(READ, read), BuiltinTool(UPDATE, update),
         BuiltinTool(DELETE, delete), BuiltinTool(LIST_LOGS, list_logs))
