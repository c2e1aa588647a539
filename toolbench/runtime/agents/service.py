"""The bench's sub-agents (`bench.agents`): an agent directory, the model that drives children,
the tasks, and the child loop.

    bench.agents.model = ScriptedModel([...])      # drives every agent without a model of its own
    bench.agents.define("researcher", description="Reads files and reports.", profile=small_profile)
    inv.call("agent_delegate", {"agentId": "researcher", "task": {"objective": "..."}})
    inv.call("agent_await", {"mode": "allCompleted"})

A child is an invocation of its own (`<parent id>.task_NNN`) with its own snapshot and gate,
prepared in return mode: no commit, finish, delegate, handoff or await, and `task_return`
appended. Children run as asyncio tasks on the bench loop, at most `MAX_CHILDREN` at once.

The model: any `toolbench.models.Model` (`OpenAIChat`, `OpenAIResponses`, `Anthropic`,
`Gemini`, a `ScriptedModel` of any protocol) drives a child in its own protocol: the child's
tools as `snapshot.render(model.protocol)`, its conversation as that provider's messages, each
reply decoded by that provider (the loop is `drive.py`). The older form still works: a
callable `model(messages, tools)` with OpenAI Chat Completions messages (system, user,
assistant with `tool_calls`, `tool`) and the `"openai"` tools, answering a list of
`(call_name, arguments[, call_id])` tuples, a string (a text answer), or a Chat Completions
response body (`loop.CallableModel`). A sync callable or SDK client runs in a worker
thread, so it does not stall the bench loop. A provider's error fails the task with
`agent.child_model_failed` and the error's code and text. A text answer does not end a child:
it is told `agent.child_finish_denied` and asked to call `task_return` (the TaskReturnRequired
exit policy).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.agents import (
    ACTIVE,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_TEMPLATE,
    PARENT,
    batch_issues,
    check_agent_id,
    clamp_timeout_ms,
    pick_next,
    route_message,
)
from ...core.errors import ToolbenchError, ToolError
from ...core.profile import Profile
from ...protocols import full_provider
from ...tools.agents import TASK_RETURN
from .. import worktrees
from . import roster
from .drive import drive
from .loop import AnyModel, handoff_text

if TYPE_CHECKING:
    from ..call_services import ServiceHost
    from ..invocation import Invocation
    from ..worktrees import Worktree
    from .roster import Child
    from .roster_store import Notice

DEFAULT_AGENT = DEFAULT_TEMPLATE


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """An agent one may delegate or hand off to. `profile=None` uses the bench's profile at the
    time; `model=None` uses `bench.agents.model`; `max_rounds=None` uses `bench.agents.max_rounds`."""

    id: str
    description: str
    profile: Profile | None = None
    model: AnyModel | None = None
    max_rounds: int | None = None


@dataclass(eq=False)
class _Task:
    id: str
    agent: AgentSpec
    parent_id: str
    title: str
    task: dict[str, Any]
    invocation: Invocation
    status: str = "pending"
    rounds: int = 0
    result: dict[str, Any] | None = None  # the task.return arguments
    error: dict[str, str] | None = None
    runner: asyncio.Task[None] | None = None
    inbox: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the conversation, in the model's protocol
    system: str = ""  # the child's system prompt (sent apart from the messages)
    pending: list[str] = field(default_factory=list)  # user texts the next request opens with
    protocol: str | None = None  # the protocol of the model that drives it
    child: Child | None = None  # the roster child this task runs (LiveAgent form), if any
    worktree: Worktree | None = None  # a worktree child's git worktree and what became of it
    resume: str | None = None  # a roster child's task that resumes its context: what it says first (or "")

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "agentId": self.agent.id, "title": self.title,
                               "status": self.status, "invocationId": self.invocation.id, "rounds": self.rounds}
        if self.child is not None:
            out.update(childId=self.child.id, mode=self.child.mode)
        if self.result is not None:
            out["summary"] = self.result.get("summary", "")
            out["return"] = self.result
        if self.error is not None:
            out["error"] = self.error
        if self.worktree is not None:
            out["worktree"] = self.worktree.view()
        return out


class AgentsService:
    """Sub-agents of one bench; reach it as `bench.agents`."""

    def __init__(self, host: ServiceHost) -> None:
        self._host = host
        self.model: AnyModel | None = None
        self.max_rounds: int = DEFAULT_MAX_ROUNDS
        self._agents: dict[str, AgentSpec] = {}
        self._tasks: dict[str, _Task] = {}
        self._by_invocation: dict[str, _Task] = {}
        self._done_order: list[str] = []
        self._reported: set[str] = set()
        self._task_numbers = itertools.count(1)
        self._handoff_numbers = itertools.count(1)
        self._message_numbers = itertools.count(1)
        self._handoffs: list[dict[str, Any]] = []
        self._mail: dict[str, list[dict[str, Any]]] = {}  # parent invocation id -> messages to it
        self._mail_read: dict[str, int] = {}
        self._roster = roster.Roster(host.workspace)  # the LiveAgent-form children, durable
        self.define(DEFAULT_AGENT, description="A general-purpose agent with the caller's tools (less delegation "
                    "and finishing); it reports back with task_return.")

    # the directory ------------------------------------------------------------------------
    def define(self, agent_id: str, *, description: str, profile: Profile | str | Path | None = None,
               model: AnyModel | None = None, max_rounds: int | None = None) -> AgentSpec:
        """Add (or replace) an agent in the directory. Its profile is checked like the bench's."""
        try:
            check_agent_id(agent_id)
        except ValueError as exc:
            raise ToolbenchError("bench.misuse", str(exc)) from None
        if max_rounds is not None and max_rounds < 1:
            raise ToolbenchError("bench.misuse", "max_rounds must be at least 1")
        checked = None
        if profile is not None:
            checked = self._host.check_profile(profile if isinstance(profile, Profile) else Profile.load(profile))
        spec = AgentSpec(agent_id, description, checked, model, max_rounds)
        self._agents[agent_id] = spec
        return spec

    def remove(self, agent_id: str) -> None:
        self._agents.pop(agent_id, None)

    def directory(self) -> list[AgentSpec]:
        return list(self._agents.values())

    # reading ------------------------------------------------------------------------------
    def tasks(self, parent_id: str | None = None) -> list[dict[str, Any]]:
        """Every task (or a parent's), in the order they were started."""
        return [t.view() for t in self._tasks.values() if parent_id in (None, t.parent_id)]

    def task(self, task_id: str) -> dict[str, Any]:
        return self._task(task_id).view()

    def invocation(self, task_id: str) -> Invocation:
        """A task's child invocation (its records, budget, transcript)."""
        return self._task(task_id).invocation

    def conversation(self, task_id: str) -> list[dict[str, Any]]:
        """The task's conversation as its model's provider messages: the brief, each round's
        calls and results, text answers, mail (for Chat Completions, the callable form included,
        the system prompt first, as its requests have it)."""
        task = self._task(task_id)
        head = full_provider(task.protocol).system_messages(task.system) if task.protocol else []
        return [*head, *task.messages]

    def inbox(self, invocation_id: str) -> list[dict[str, Any]]:
        """Every message sent to a parent invocation (agent_await delivers the unread ones)."""
        return list(self._mail.get(invocation_id, []))

    def handoffs(self) -> list[dict[str, Any]]:
        return list(self._handoffs)

    def wait(self, task_ids: Sequence[str] | None = None, *, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Block until those tasks (default: all) finish or `timeout` seconds pass; their views.

        For notebooks and tests; unlike agent_await it marks nothing as reported."""
        tasks = [self._task(i) for i in task_ids] if task_ids is not None else list(self._tasks.values())
        runners = [t.runner for t in tasks if t.runner is not None and not t.runner.done()]

        async def settle() -> None:
            if runners:
                await asyncio.wait(runners, timeout=timeout)
        self._host.loop.run(settle())
        return [t.view() for t in tasks]

    def _task(self, task_id: str) -> _Task:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise ToolbenchError("bench.misuse", f"no task `{task_id}`") from None

    def _active(self) -> list[_Task]:
        return [t for t in self._tasks.values() if t.status in ACTIVE]

    @property
    def notices(self) -> tuple[Notice, ...]:
        """What the service did instead of failing, oldest first: a stored roster it could not
        read (`agent.roster_unreadable`), one it could not write (`agent.roster_write_failed`)."""
        return tuple(self._roster.notices)

    def roster(self) -> list[dict[str, Any]]:
        """The children made with the LiveAgent form (`agents: [{id, ...}]`), by id."""
        return roster.roster(self)

    def templates(self) -> list[dict[str, str]]:
        """The enabled templates a LiveAgent-form entry may name: the agent directory."""
        return roster.templates(self)

    # the tools' port ----------------------------------------------------------------------
    async def delegate_agents(self, parent_id: str, entries: Sequence[Mapping[str, Any]],
                              concurrency: float | None = None) -> list[dict[str, Any]]:
        """The LiveAgent form: check the whole batch, then create or resume every child, then start
        them, at most `concurrency` at once (core.agents.batch_concurrency)."""
        return await roster.delegate_agents(self, parent_id, entries, concurrency)

    async def delegate(self, parent_id: str, entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Check the whole batch, then create every child invocation, then start them all."""
        issues = batch_issues(entries, agents=self._agents, active=len(self._active()),
                              has_model=lambda a: (self._agents[a].model or self.model) is not None)
        if issues:
            lines = "\n".join(i.line() for i in issues)
            running = ", ".join(f"`{t.id}`" for t in self._active()) or "none"
            agents = ", ".join(f"`{a}`" for a in self._agents)
            raise ToolError(issues[0].code, f"Nothing was started:\n{lines}\nRunning tasks: {running}. "
                            f"Agents: {agents}.", structured={
                                "kind": "delegate_batch", "status": "rejected",
                                "issues": [i.to_json() for i in issues], "running": [t.id for t in self._active()],
                                "agents": list(self._agents)})
        return self._start([self._create(parent_id, entry) for entry in entries])

    def _start(self, tasks: list[_Task], limit: int | None = None) -> list[dict[str, Any]]:
        """Run every task of a checked batch on the loop, at most `limit` at once (the rest stay
        pending until a slot frees); their views."""
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(limit) if limit is not None and limit < len(tasks) else None
        for t in tasks:
            t.runner = loop.create_task(self._queued(t, slots), name=f"toolbench-{t.invocation.id}")
        return [t.view() for t in tasks]

    async def _queued(self, task: _Task, slots: asyncio.Semaphore | None) -> None:
        """Run a task when its turn comes: a roster child's after that child's earlier runs (its
        `turn`, first, as upstream's per-id queue wraps its scheduler), then a slot of its batch."""
        try:
            async with contextlib.AsyncExitStack() as held:
                if task.child is not None:
                    await held.enter_async_context(task.child.turn)
                if slots is not None:
                    await held.enter_async_context(slots)
                await self._drive(task)
        except asyncio.CancelledError:  # cancelled while waiting for its turn or a slot
            if task.status in ACTIVE:
                self._settle(task, "cancelled", "agent.task_cancelled", "The task was cancelled before it returned.")

    def _create(self, parent_id: str, entry: Mapping[str, Any]) -> _Task:
        spec = self._agents[entry["agentId"]]
        return self._new_task(parent_id, spec, dict(entry["task"]), profile=spec.profile)

    def _new_task(self, parent_id: str, spec: AgentSpec, brief: dict[str, Any], *, profile: Profile | None,
                  child: Child | None = None, workspace: Path | None = None) -> _Task:
        """A pending task with its child invocation (`<parent>.task_NNN`, a number not used yet)."""
        while True:
            task_id = f"task_{next(self._task_numbers):03d}"
            if not self._host.invocation_exists(f"{parent_id}.{task_id}"):
                break
        inv = self._host.new_invocation("chat", f"{parent_id}.{task_id}", profile=profile,
                                          return_mode=TASK_RETURN, workspace=workspace)
        title = str(brief.get("title") or brief["objective"].strip().splitlines()[0][:80])
        task = _Task(task_id, spec, parent_id, title, brief, inv, child=child)
        self._tasks[task_id] = task
        self._by_invocation[inv.id] = task
        return task

    async def await_tasks(self, parent_id: str, task_ids: Sequence[str] | None, mode: str,
                          timeout_ms: int) -> dict[str, Any]:
        mine = {t.id.casefold(): t for t in self._tasks.values() if t.parent_id == parent_id}
        if task_ids is not None:
            unknown = [i for i in task_ids if i.casefold() not in mine]
            if unknown:
                raise ToolError("agent.task_unknown", f"Not your tasks: {', '.join(unknown)}. Yours: "
                                f"{', '.join(t.id for t in mine.values()) or 'none'}.")
            chosen = list({mine[i.casefold()].id: mine[i.casefold()] for i in task_ids}.values())
        else:
            chosen = [t for t in mine.values() if t.status in ACTIVE or t.id not in self._reported]
        timeout = clamp_timeout_ms(timeout_ms) / 1000
        running = [t.runner for t in chosen if t.status in ACTIVE and t.runner is not None]
        picked: list[_Task] = []
        if mode == "allCompleted":
            if running:
                await asyncio.wait(running, timeout=timeout)
            picked = [] if any(t.status in ACTIVE for t in chosen) else chosen
        elif mode == "nextCompleted":
            ids = [t.id for t in chosen]
            order = [i for i in self._done_order if i in ids]
            next_id = pick_next(order, self._reported)
            if next_id is None and running:
                await asyncio.wait(running, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                order = [i for i in self._done_order if i in ids]
                next_id = pick_next(order, self._reported)
            if next_id is None and order and not running:
                next_id = order[0]  # everything asked for was reported already: report it again
            picked = [self._tasks[next_id]] if next_id else []
        timed_out = mode != "statusOnly" and not picked and any(t.status in ACTIVE for t in chosen)
        self._reported.update(t.id for t in picked)
        return {"mode": mode, "timedOut": timed_out, "completed": [t.view() for t in picked],
                "statuses": [{"taskId": t.id, "agentId": t.agent.id, "status": t.status} for t in chosen],
                "messages": self._unread_mail(parent_id)}

    async def handoff(self, parent_id: str, agent_id: str, brief: Mapping[str, Any],
                      policy: str | None) -> dict[str, Any]:
        if agent_id not in self._agents:
            raise ToolError("agent.unknown_agent", f"No agent `{agent_id}`; hand off to one of: "
                            f"{', '.join(self._agents)}.")
        pending = [t for t in self._active() if t.parent_id == parent_id]
        if pending and policy == "denyIfPending":
            raise ToolError("agent.handoff_pending_tasks", f"Unfinished tasks: {', '.join(t.id for t in pending)}. "
                            "Await them first, or hand off without denyIfPending to cancel them.")
        await self._cancel(pending)
        spec = self._agents[agent_id]
        while True:
            handoff_id = f"handoff_{next(self._handoff_numbers):03d}"
            if not self._host.invocation_exists(f"{parent_id}.{handoff_id}"):
                break
        inv = self._host.new_invocation("chat", f"{parent_id}.{handoff_id}", profile=spec.profile)
        record = {"handoffId": handoff_id, "fromInvocation": parent_id, "agentId": agent_id,
                  "invocationId": inv.id, "handoff": dict(brief), "cancelledTasks": [t.id for t in pending],
                  "brief": handoff_text(spec, brief)}
        self._handoffs.append(record)
        return record

    async def task_returned(self, child_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        task = self._by_invocation.get(child_id)
        if task is None:
            raise ToolError("agent.task_unknown", "task_return ends a delegated task; this invocation is not one.")
        if task.result is not None or task.status not in ACTIVE:
            raise ToolError("agent.tool_after_finish", f"Task `{task.id}` has returned already.")
        task.result = dict(payload)
        return {"taskId": task.id, "status": task.result.get("status", "completed")}

    async def send(self, sender_id: str, to: str | None, message: str, channel: str | None) -> dict[str, Any]:
        sender = self._by_invocation.get(sender_id)
        parent_id = sender.parent_id if sender else sender_id
        reach = roster.reachable(self, parent_id, sender)
        route = route_message(to, channel, has_parent=sender is not None, roster=list(reach))
        sent = {"seq": next(self._message_numbers), "from": roster.name(sender) if sender else PARENT,
                "to": list(route.recipients), "channel": route.channel, "message": message}
        for name in route.recipients:
            if name == PARENT:
                self._mail.setdefault(parent_id, []).append(sent)
            else:
                reach[name].inbox.append(sent)
        return sent

    def _unread_mail(self, parent_id: str) -> list[dict[str, Any]]:
        mail = self._mail.get(parent_id, [])
        start = self._mail_read.get(parent_id, 0)
        self._mail_read[parent_id] = len(mail)
        return mail[start:]

    # the child loop -----------------------------------------------------------------------
    async def _drive(self, task: _Task) -> None:
        """Run the child loop (`drive.drive`) and settle the task with its outcome."""
        task.status = "running"
        model = task.agent.model or self.model
        try:
            if task.child is not None:  # its context now: what the child's earlier runs left
                roster.begin(task, model)
            out = await drive(task, model, task.agent.max_rounds or self.max_rounds)
            self._settle(task, out.status, out.code, out.message)
        except asyncio.CancelledError:
            self._settle(task, "cancelled", "agent.task_cancelled", "The task was cancelled before it returned.")
        except Exception as exc:  # a storage failure or misuse inside the child's invocation
            self._settle(task, "failed", "tool.internal_error", f"{type(exc).__name__}: {exc}")

    def _settle(self, task: _Task, status: str, code: str | None = None, message: str = "") -> None:
        task.status = status
        if code is not None:
            task.error = {"code": code, "message": message}
        if task.worktree is not None:  # apply or keep its changes before the parent can see it settled
            worktrees.finish(task.worktree, completed=status == "completed")
        self._done_order.append(task.id)
        if task.child is not None:  # the roster as it is now, for a bench that reopens this workspace
            roster.save(self)

    async def _cancel(self, tasks: Sequence[_Task]) -> None:
        runners = [t.runner for t in tasks if t.runner is not None and not t.runner.done()]
        for r in runners:
            r.cancel()
        if runners:
            await asyncio.wait(runners)

    def close(self) -> None:
        """Cancel every unfinished child (the bench is closing)."""
        active = self._active()
        if active:
            self._host.loop.run(self._cancel(active))
