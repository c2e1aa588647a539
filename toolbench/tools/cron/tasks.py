"""Cron tasks (LiveAgent §7.1): their fields, their validation, and their store in the workspace.

Tasks are kept in `.toolbench/cron/tasks.json` (written atomically), run logs in
`.toolbench/cron/logs/<task_id>.jsonl`; both are runtime files the file tools never see.
Expressions have six fields, seconds first: `second minute hour day month weekday` (croniter).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from ...core.errors import ToolError
from ...core.fileio import write_atomic

TaskType = Literal["shell", "prompt"]
TYPES: Final = ("shell", "prompt")
MAX_TIMEOUT: Final = 600
DEFAULT_TIMEOUT: Final = 300
LOG_OUTPUT_CHARS: Final = 600
STORED_OUTPUT_CHARS: Final = 16_000
LOGS_DEFAULT: Final = 100
LOGS_MAX: Final = 500


class CronTask(BaseModel):
    """One task. `remaining_executions` None is unlimited, 0 exhausted; `checked_at` is when the
    scheduler last looked at it (the start of the window its next run is due in)."""

    model_config = ConfigDict(extra="forbid")

    id: str
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


class CronStore:
    """The tasks and logs of one workspace."""

    def __init__(self, workspace: Path) -> None:
        self.dir = Path(workspace) / ".toolbench" / "cron"
        self.tasks_path = self.dir / "tasks.json"

    def _load(self) -> dict[str, Any]:
        if not self.tasks_path.is_file():
            return {"next_id": 1, "tasks": []}
        return dict(json.loads(self.tasks_path.read_text(encoding="utf-8")))

    def _save(self, data: dict[str, Any]) -> None:
        write_atomic(self.tasks_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def tasks(self) -> list[CronTask]:
        return [CronTask.model_validate(t) for t in self._load()["tasks"]]

    def get(self, task_id: str) -> CronTask:
        for task in self.tasks():
            if task.id == task_id:
                return task
        known = ", ".join(f"`{t.id}`" for t in self.tasks()) or "none"
        raise ToolError("cron.task_not_found", f"No cron task `{task_id}`; known tasks: {known}.")

    def create(self, fields: dict[str, Any]) -> CronTask:
        data = self._load()
        task = check_task(CronTask(id=f"task-{data['next_id']:04d}", **fields))
        data["next_id"] += 1
        data["tasks"].append(task.model_dump(mode="json"))
        self._save(data)
        return task

    def put(self, task: CronTask) -> None:
        data = self._load()
        data["tasks"] = [task.model_dump(mode="json") if t["id"] == task.id else t for t in data["tasks"]]
        self._save(data)

    def put_all(self, tasks: list[CronTask]) -> None:
        data = self._load()
        data["tasks"] = [t.model_dump(mode="json") for t in tasks]
        self._save(data)

    def delete(self, task_id: str) -> CronTask:
        task = self.get(task_id)
        data = self._load()
        data["tasks"] = [t for t in data["tasks"] if t["id"] != task_id]
        self._save(data)
        self.log_path(task_id).unlink(missing_ok=True)
        return task

    def log_path(self, task_id: str) -> Path:
        return self.dir / "logs" / f"{task_id}.jsonl"

    def append_log(self, entry: dict[str, Any]) -> None:
        path = self.log_path(entry["task_id"])
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def logs(self, task_id: str, limit: int = LOGS_DEFAULT) -> list[dict[str, Any]]:
        """The task's runs, newest first, each output cut to 600 characters."""
        path = self.log_path(task_id)
        if not path.is_file():
            return []
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        out = []
        for entry in reversed(entries[-limit:]):
            text = entry.get("output", "")
            if len(text) > LOG_OUTPUT_CHARS:
                entry = {**entry, "output": text[:LOG_OUTPUT_CHARS] + "…", "output_truncated": True}
            out.append(entry)
        return out
