"""`bench.cron`: runs the cron tasks that are due when the user says what time it is.

Nothing runs by itself: `run_due(now)` looks at each enabled task with executions left and
runs it once if a fire time lies in (its `checked_at`, `now`]; a task never looked at before
is due only when `now` itself is a fire time. Missed fire times are coalesced into one run.
Shell tasks run on the `workspace.shell` engine (same mounts, the task's timeout). Prompt tasks
need a model: with `bench.cron.model` set (any `toolbench.models.Model`), each due prompt is
`inv.run(model, prompt)` in a fresh invocation of `bench.cron.scene` (`cron_<task id>_<run>`),
and the run entry records the run's id, invocation, stop reason and final text (`status="ran"`,
or `"failed"` with the run's error code when the provider erred, or the stop reason when the
run ended without an answer); without a model they are recorded as due prompts
(`status="prompt_due"`), as before.

A store the tools cannot read (`cron.store_unreadable`: a planted or corrupt tasks.json) is the
same code here, raised as a ToolbenchError. A run whose log line cannot be written (a planted
log) still counts: the run is returned with `extra["log_error"]` (the storage code) and the
task's window and counters move on, so it does not run again.

Cron has its own model rather than reusing `bench.agents.model`: that one may be the older
callable form, which cannot drive `inv.run`, and setting a model for sub-agents should not
start running scheduled prompts that were only recorded until then.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..core.descriptors import SCENES, Scene
from ..core.errors import ToolbenchError, ToolError
from ..models import Model
from ..tools.cron.tasks import STORED_OUTPUT_CHARS, CronStore, CronTask, next_fire, settle
from ..tools.workspace.paths import Workspace
from ..tools.workspace.shell import mounts
from ..tools.workspace.shell_engine import run_shell

if TYPE_CHECKING:
    from .call_services import ServiceHost


@dataclass(frozen=True, slots=True)
class CronRun:
    """One run of one task: `status` is ok, failed, timed_out, cancelled, prompt_due or ran
    (a prompt a model answered). A prompt run's `extra` holds `run_id`, `invocation_id`,
    `stop_reason` and `error_code` (None unless the provider erred); any run's `log_error` is
    the storage code when its log line could not be written."""

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
                "exit_code": self.exit_code, "output": self.output[:STORED_OUTPUT_CHARS], **self.extra}


def _align(value: datetime, like: datetime) -> datetime:
    if (value.tzinfo is None) == (like.tzinfo is None):
        return value
    return value.replace(tzinfo=like.tzinfo) if like.tzinfo else value.replace(tzinfo=None)


@contextlib.contextmanager
def _developer_facing() -> Iterator[None]:
    """The store's ToolError (meant for a model) as the ToolbenchError a developer's call raises."""
    try:
        yield
    except ToolError as exc:
        raise ToolbenchError(exc.code, exc.message) from None


class CronScheduler:
    """The cron tasks of a bench's workspace, advanced by `run_due(now)`; one per bench."""

    def __init__(self, host: ServiceHost) -> None:
        self._host = host
        self.store = CronStore(host.workspace)
        self._model: Model | None = None
        self._scene: Scene = "chat"

    @property
    def model(self) -> Model | None:
        """The model that answers due prompt tasks (None: they are recorded as `prompt_due`)."""
        return self._model

    @model.setter
    def model(self, model: Model | None) -> None:
        if model is not None and not isinstance(model, Model):  # fail here, not at the next fire time
            raise ToolbenchError("bench.misuse", f"bench.cron.model is a toolbench.models Model or None, not "
                                 f"{type(model).__name__}")
        self._model = model

    @property
    def scene(self) -> Scene:
        """The scene of the invocations prompt tasks run in (default `chat`)."""
        return self._scene

    @scene.setter
    def scene(self, scene: Scene) -> None:
        if scene not in SCENES:
            raise ToolbenchError("bench.misuse", f"scene must be one of {', '.join(SCENES)}, not {scene!r}")
        self._scene = scene

    def tasks(self) -> list[CronTask]:
        with _developer_facing():
            return self.store.tasks()

    def due(self, now: datetime) -> list[CronTask]:
        """The tasks `run_due(now)` would run, without running them."""
        now = now.replace(microsecond=0)
        out = []
        for task in self.tasks():
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
        tasks = self.tasks()
        for i, task in enumerate(tasks):
            # Every task's window moves on, disabled ones too: re-enabling a task does not fire
            # the times it missed while it was off (`due` leaves disabled tasks out).
            stamp = now.isoformat()
            if task.checked_at is None or _align(datetime.fromisoformat(task.checked_at), now) < now:
                task = task.model_copy(update={"checked_at": stamp})
            if task.id in due:
                run = self._run(task, stamp)
                try:
                    self.store.append_log(run.to_log())
                except ToolbenchError as exc:  # storage.*: the run happened; it is counted all the same
                    run = dataclasses.replace(run, extra={**run.extra, "log_error": exc.code})
                runs.append(run)
                left = None if task.remaining_executions is None else task.remaining_executions - 1
                task = settle(task.model_copy(update={"last_run_at": stamp, "runs": task.runs + 1,
                                                      "remaining_executions": left}))
            tasks[i] = task
        with _developer_facing():
            self.store.put_all(tasks)
        return runs

    def _run(self, task: CronTask, stamp: str) -> CronRun:
        if task.type == "prompt":
            if self._model is None:
                return CronRun(task.id, task.name, task.type, stamp, "prompt_due", output=task.prompt or "",
                               prompt=task.prompt)
            return self._answer(task, stamp, self._model)
        host, profile = self._host, self._host.profile()
        settings = profile.shell.edit(timeout_seconds=float(task.timeout_seconds))
        ws = Workspace(host.workspace, profile.workspace)
        outcome = host.loop.run(run_shell(task.script or "", workdir=task.workdir, mounts=mounts(ws),
                                            settings=settings, max_file_bytes=ws.settings.max_file_bytes))
        status = {"exited": "ok" if outcome.exit_code == 0 else "failed", "timed_out": "timed_out",
                  "cancelled": "cancelled", "failed": "failed"}[outcome.status]
        output = outcome.stdout + (("\n" if outcome.stdout and not outcome.stdout.endswith("\n") else "")
                                   + outcome.stderr if outcome.stderr else "")
        return CronRun(task.id, task.name, task.type, stamp, status, exit_code=outcome.exit_code, output=output)

    def _answer(self, task: CronTask, stamp: str, model: Model) -> CronRun:
        """The task's prompt as a model run in a fresh invocation (its id names the task and run)."""
        host = self._host
        base = f"cron_{task.id}_{task.runs + 1}"
        invocation_id = next(f"{base}_{n}" if n else base for n in itertools.count()
                             if not host.invocation_exists(f"{base}_{n}" if n else base))
        inv = host.new_invocation(self._scene, invocation_id)
        try:
            run = host.loop.run(inv.arun(model, task.prompt or ""))
        except Exception as exc:  # a Model of the user's own that raised: this task failed, the others run
            code = getattr(exc, "code", None) or type(exc).__name__
            return CronRun(task.id, task.name, task.type, stamp, "failed", output=str(exc), prompt=task.prompt,
                           extra={"invocation_id": inv.id, "stop_reason": "error", "error_code": code})
        finally:
            inv.close()  # one invocation per run: its log is not held open for the bench's life
        ok = run.stop_reason in ("final", "completion_tool")
        error = run.error.code if run.error else None
        return CronRun(task.id, task.name, task.type, stamp, "ran" if ok else "failed",
                       output=run.final_text if ok else (run.error.message if run.error else run.stop_reason or ""),
                       prompt=task.prompt, extra={"run_id": run.id, "invocation_id": inv.id,
                                                  "stop_reason": run.stop_reason, "error_code": error})
