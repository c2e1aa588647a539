"""`bench.cron`: runs the cron tasks that are due when the user says what time it is.

Nothing runs by itself: `run_due(now)` looks at each enabled task with executions left and
runs it once if a fire time lies in (its `checked_at`, `now`]; a task never looked at before
is due only when `now` itself is a fire time. Missed fire times are coalesced into one run.
Shell tasks run on the `workspace.shell` engine (same mounts, the task's timeout); prompt
tasks need a model, so they are recorded as due prompts (`status="prompt_due"`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError
from ..tools.cron.tasks import STORED_OUTPUT_CHARS, CronStore, CronTask, next_fire, settle
from ..tools.workspace.paths import Workspace
from ..tools.workspace.shell import mounts
from ..tools.workspace.shell_engine import run_shell

if TYPE_CHECKING:
    from .kernel import Kernel


@dataclass(frozen=True, slots=True)
class CronRun:
    """One run of one task: `status` is ok, failed, timed_out, cancelled or prompt_due."""

    task_id: str
    name: str
    type: str
    at: str
    status: str
    exit_code: int | None = None
    output: str = ""
    prompt: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_log(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "name": self.name, "type": self.type, "at": self.at, "status": self.status,
                "exit_code": self.exit_code, "output": self.output[:STORED_OUTPUT_CHARS]}


def _align(value: datetime, like: datetime) -> datetime:
    if (value.tzinfo is None) == (like.tzinfo is None):
        return value
    return value.replace(tzinfo=like.tzinfo) if like.tzinfo else value.replace(tzinfo=None)


class CronScheduler:
    """The cron tasks of a bench's workspace, advanced by `run_due(now)`; one per kernel."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        self.store = CronStore(kernel.workspace)

    def tasks(self) -> list[CronTask]:
        return self.store.tasks()

    def due(self, now: datetime) -> list[CronTask]:
        """The tasks `run_due(now)` would run, without running them."""
        now = now.replace(microsecond=0)
        out = []
        for task in self.store.tasks():
            if not task.enabled or task.remaining_executions == 0:
                continue
            anchor = _align(datetime.fromisoformat(task.checked_at), now) if task.checked_at \
                else now - timedelta(seconds=1)
            if anchor < now and next_fire(task.cron, anchor) <= now:
                out.append(task)
        return out

    def run_due(self, now: datetime) -> list[CronRun]:
        """Run every task due at `now`, in task order; log each run and move the tasks' windows on."""
        if not isinstance(now, datetime):
            raise ToolbenchError("bench.misuse", "run_due(now) takes a datetime")
        now = now.replace(microsecond=0)
        due = {t.id for t in self.due(now)}
        runs = []
        tasks = self.store.tasks()
        for i, task in enumerate(tasks):
            # Every task's window moves on, disabled ones too: re-enabling a task does not fire
            # the times it missed while it was off (`due` leaves disabled tasks out).
            stamp = now.isoformat()
            if task.checked_at is None or _align(datetime.fromisoformat(task.checked_at), now) < now:
                task = task.model_copy(update={"checked_at": stamp})
            if task.id in due:
                run = self._run(task, stamp)
                runs.append(run)
                self.store.append_log(run.to_log())
                left = None if task.remaining_executions is None else task.remaining_executions - 1
                task = settle(task.model_copy(update={"last_run_at": stamp, "runs": task.runs + 1,
                                                      "remaining_executions": left}))
            tasks[i] = task
        self.store.put_all(tasks)
        return runs

    def _run(self, task: CronTask, stamp: str) -> CronRun:
        if task.type == "prompt":
            return CronRun(task.id, task.name, task.type, stamp, "prompt_due", output=task.prompt or "",
                           prompt=task.prompt)
        kernel = self._kernel
        settings = kernel.profile.shell.edit(timeout_seconds=float(task.timeout_seconds))
        ws = Workspace(kernel.workspace, kernel.profile.workspace)
        outcome = kernel.loop.run(run_shell(task.script or "", workdir=task.workdir, mounts=mounts(ws),
                                            settings=settings, max_file_bytes=ws.settings.max_file_bytes))
        status = {"exited": "ok" if outcome.exit_code == 0 else "failed", "timed_out": "timed_out",
                  "cancelled": "cancelled", "failed": "failed"}[outcome.status]
        output = outcome.stdout + (("\n" if outcome.stdout and not outcome.stdout.endswith("\n") else "")
                                   + outcome.stderr if outcome.stderr else "")
        return CronRun(task.id, task.name, task.type, stamp, status, exit_code=outcome.exit_code, output=output)
