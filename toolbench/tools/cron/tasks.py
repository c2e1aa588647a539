"""Cron tasks (LiveAgent §7.1): their fields, their validation, and their store in the workspace.

Tasks are kept in `.toolbench/cron/tasks.json` (written atomically), run logs in
`.toolbench/cron/logs/<task_id>.jsonl`; both are runtime files the file tools never see.
Expressions have six fields, seconds first: `second minute hour day month weekday` (croniter).

Both are opened as every runtime file is (`runtime_files`: a regular file beneath the workspace,
size-capped). A store that cannot be read (not a regular file, a link out of the workspace, over
TASKS_MAX_BYTES, not a store's JSON) is `cron.store_unreadable` for every tool and for `run_due`:
nothing overwrites it, so no task someone kept there is lost. A run log is read from its end
(its last LOG_TAIL_BYTES); lines that are not run entries (a torn last line) are skipped.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...core.errors import ToolbenchError, ToolError
from ...core.fileio import encode_text, write_all
from ..workspace.runtime_files import open_log, read_runtime_file, remove_runtime_file, write_runtime_file

TaskType = Literal["shell", "prompt"]
TYPES: Final = ("shell", "prompt")
MAX_TIMEOUT: Final = 600
DEFAULT_TIMEOUT: Final = 300
LOG_OUTPUT_CHARS: Final = 600
STORED_OUTPUT_CHARS: Final = 16_000
LOGS_DEFAULT: Final = 100
LOGS_MAX: Final = 500
CRON_DIR: Final = ".toolbench/cron"
TASKS_MAX_BYTES: Final = 16 << 20  # thousands of tasks with long scripts
LOG_TAIL_BYTES: Final = 16 << 20  # LOGS_MAX entries of STORED_OUTPUT_CHARS (UTF-8, escaped) fit with room


class CronTask(BaseModel):
    """One task. `remaining_executions` None is unlimited, 0 exhausted; `checked_at` is when the
    scheduler last looked at it (the start of the window its next run is due in)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^task-[0-9]{4,}$")  # it names the run log file: never a path
    name: str
    description: str = ""
    cron: str
    type: TaskType
    enabled: bool = True
    remaining_executions: int | None = None
    timeout_seconds: int = DEFAULT_TIMEOUT
    script: str | None = None
    prompt: str | None = None
    workdir: str = "/"
    checked_at: str | None = None
    last_run_at: str | None = None
    runs: int = 0


def check_expression(expr: str) -> str:
    """A six-field expression (seconds first), normalised to single spaces; else cron.expression_invalid."""
    from croniter import croniter  # type: ignore[import-untyped]  # ~30 ms: loaded when cron is first used

    fields = expr.split()
    if len(fields) != 6 or not croniter.is_valid(" ".join(fields), second_at_beginning=True):
        raise ToolError("cron.expression_invalid",
                        f"`cron` {expr!r} is not a six-field cron expression (second minute hour day month "
                        "weekday), e.g. `0 */5 * * * *` for every five minutes.",
                        structured={"fields": len(fields)})
    return " ".join(fields)


def next_fire(expr: str, after: datetime) -> datetime:
    """The first fire time strictly after `after`."""
    from croniter import croniter

    result: datetime = croniter(expr, after, second_at_beginning=True).get_next(datetime)
    return result


def settle(task: CronTask) -> CronTask:
    """The task as upstream keeps it: `workdir` trimmed (blank is the default `/`), and a task
    with no executions left disabled (`enabled && remaining != 0`), after a run or an edit."""
    workdir = task.workdir.strip() or "/"
    enabled = task.enabled and task.remaining_executions != 0
    if (workdir, enabled) == (task.workdir, task.enabled):
        return task
    return task.model_copy(update={"workdir": workdir, "enabled": enabled})


def check_task(task: CronTask) -> CronTask:
    """The task settled, or cron.task_invalid: a shell task has a script, a prompt task a prompt,
    sane limits, an absolute workdir."""
    task = settle(task)
    if not task.name.strip():
        raise ToolError("cron.task_invalid", "`name` is blank; name the task.")
    if not 1 <= task.timeout_seconds <= MAX_TIMEOUT:
        raise ToolError("cron.task_invalid", f"`timeout_seconds` must be 1 to {MAX_TIMEOUT}.")
    if task.remaining_executions is not None and task.remaining_executions < 0:
        raise ToolError("cron.task_invalid", "`remaining_executions` must be 0 or more (null: unlimited).")
    body, other = ("script", "prompt") if task.type == "shell" else ("prompt", "script")
    if not (getattr(task, body) or "").strip():
        raise ToolError("cron.task_invalid", f"A {task.type} task needs `{body}`.")
    if getattr(task, other):
        raise ToolError("cron.task_invalid", f"A {task.type} task takes `{body}`, not `{other}`.")
    if not task.workdir.startswith("/"):
        raise ToolError("cron.task_invalid", "`workdir` is an absolute guest path such as `/work`.")
    return task


class _Stored(BaseModel):
    """The form of tasks.json."""

    model_config = ConfigDict(extra="forbid")

    next_id: int = Field(ge=1)
    tasks: list[CronTask]


class CronStore:
    """The tasks and logs of one workspace."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(workspace)
        self.tasks_file = f"{CRON_DIR}/tasks.json"

    def _load(self) -> _Stored:
        try:
            raw = read_runtime_file(self.workspace, self.tasks_file, limit=TASKS_MAX_BYTES)
            return _Stored(next_id=1, tasks=[]) if raw is None else _Stored.model_validate_json(raw)
        except ToolbenchError as exc:  # storage.*: a planted entry, a link out, too large
            raise _unreadable(exc.message, exc.code) from None
        except ValidationError as exc:  # not JSON, or not a store's
            raise _unreadable(f"`{self.tasks_file}` is not a cron store: {str(exc).splitlines()[0]}",
                              None) from None

    def _save(self, data: _Stored) -> None:
        text = json.dumps(data.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        write_runtime_file(self.workspace, self.tasks_file, encode_text(text))

    def tasks(self) -> list[CronTask]:
        return self._load().tasks

    def get(self, task_id: str) -> CronTask:
        tasks = self.tasks()
        for task in tasks:
            if task.id == task_id:
                return task
        known = ", ".join(f"`{t.id}`" for t in tasks) or "none"
        raise ToolError("cron.task_not_found", f"No cron task `{task_id}`; known tasks: {known}.")

    def create(self, fields: dict[str, Any]) -> CronTask:
        data = self._load()
        task = check_task(CronTask(id=f"task-{data.next_id:04d}", **fields))
        self._save(_Stored(next_id=data.next_id + 1, tasks=[*data.tasks, task]))
        return task

    def put(self, task: CronTask) -> None:
        data = self._load()
        self._save(data.model_copy(update={"tasks": [task if t.id == task.id else t for t in data.tasks]}))

    def put_all(self, tasks: list[CronTask]) -> None:
        self._save(self._load().model_copy(update={"tasks": list(tasks)}))

    def delete(self, task_id: str) -> CronTask:
        task = self.get(task_id)
        data = self._load()
        self._save(data.model_copy(update={"tasks": [t for t in data.tasks if t.id != task_id]}))
        remove_runtime_file(self.workspace, self.log_file(task_id))
        return task

    def log_file(self, task_id: str) -> str:
        return f"{CRON_DIR}/logs/{task_id}.jsonl"

    def append_log(self, entry: dict[str, Any]) -> None:
        """Append a run entry to its task's log; `storage.*` (ToolbenchError) when it cannot be."""
        fd = open_log(self.workspace, self.log_file(entry["task_id"]))
        try:
            write_all(fd, encode_text(json.dumps(entry, ensure_ascii=False) + "\n"))
        except OSError as exc:
            raise ToolbenchError("storage.write_failed", f"cannot append to `{self.log_file(entry['task_id'])}`: "
                                 f"{exc.strerror or exc}") from exc
        finally:
            os.close(fd)

    def logs(self, task_id: str, limit: int = LOGS_DEFAULT) -> list[dict[str, Any]]:
        """The task's runs, newest first, each output cut to 600 characters."""
        try:
            raw = read_runtime_file(self.workspace, self.log_file(task_id), limit=LOG_TAIL_BYTES, tail=True)
        except ToolbenchError as exc:
            raise _unreadable(exc.message, exc.code) from None
        if raw is None:
            return []
        lines = raw.split(b"\n")
        if len(raw) >= LOG_TAIL_BYTES:
            lines = lines[1:]  # read from the middle of a line
        entries = [e for e in map(_entry, lines) if e is not None]
        out = []
        for entry in reversed(entries[-limit:]):
            text = entry.get("output", "")
            if isinstance(text, str) and len(text) > LOG_OUTPUT_CHARS:
                entry = {**entry, "output": text[:LOG_OUTPUT_CHARS] + "…", "output_truncated": True}
            out.append(entry)
        return out


def _entry(line: bytes) -> dict[str, Any] | None:
    """A log line's run entry, None for a blank, torn or foreign line."""
    try:
        value = json.loads(line) if line.strip() else None
    except (ValueError, RecursionError):  # not JSON (nor UTF-8), or nested past the parser
        return None
    ok = isinstance(value, dict) and isinstance(value.get("at"), str) and isinstance(value.get("status"), str)
    return value if ok else None


def _unreadable(why: str, cause: str | None) -> ToolError:
    """`cause`: the storage code under it (None for a file that is there but not a store)."""
    return ToolError("cron.store_unreadable", f"The cron store cannot be used: {why}. The cron tools refuse until "
                     "the user repairs or removes it.", structured={"cause": cause})
