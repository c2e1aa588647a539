"""The per-call steps of an invocation: one call from its arguments to its record.

begin (misuse raises; the blocked state, the round limit, the turn contract, the gate, the
name and the arguments refuse with a recorded result) -> dispatch (argument check, approval,
the source runs it) -> succeed or fail -> finish (projection) -> record (annotation, audit
file, run-log line). The invocation numbers the rounds and owns this pipeline; the pipeline
owns what the calls change: the gate's counters, the records, the blocked state, the cancel
signals and the loop breaker.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import itertools
import random
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core import loop_breaker
from ..core.arguments import MISSING, ToolArguments, invalid_arguments_message, quote
from ..core.errors import OutcomeUnknown, ToolbenchError, ToolError
from ..core.gate import GateState, charge
from ..core.ids import ToolId
from ..core.loop_breaker import LoopBreaker
from ..core.profile import Profile
from ..core.results import AttachmentRef, ToolOutput, ToolResult, call_file_stem, error_result, project, trusted_result
from ..core.schema_check import check_arguments
from ..core.snapshot import Binding
from ..core.turn import Turn
from ..protocols.snapshot import Snapshot
from ..tools.base import StopSignal, ToolContext, current_deadline
from ..tools.state import InvocationState
from . import attachments
from .approval import ApprovalRequest
from .bridge import NestedCalls, nested_in
from .observers import tell_call
from .records import CallRecord, RunLog
from .seeding import invocation_rng
from .sources import ToolSource
from .store import args_path, audit_path

if TYPE_CHECKING:
    from .call_services import CallServices
    from .invocation import Invocation

# What a provider can hand over as a call's arguments; anything else is a Python object.
_WIRE_TYPES = (str, dict, list, int, float, bool, type(None), ToolArguments)


@dataclass(slots=True)
class Step:
    """A call that passed the gate and is ready to dispatch."""

    round: int
    call_id: str
    stem: str
    call_name: str
    binding: Binding
    arguments: ToolArguments
    started: float
    turn: Turn | None = None  # the round's contract: nested calls (the shell bridge) keep its tools


class CallPipeline:
    """The calls of one invocation (`owner`): `begin` a call, then `run` or `arun` it.

    `records`, `gate` and `blocked` are read by the invocation's faces; `closed` is set by its
    `close`. `log` and `lock` are the invocation's (one run log, one lock for its counters)."""

    def __init__(self, owner: Invocation, services: CallServices, log: RunLog, lock: threading.RLock, *,
                 snapshot: Snapshot, profile: Profile, state: InvocationState,
                 records: Sequence[CallRecord], gate: GateState, blocked: str | None) -> None:
        self._owner = owner  # its place among the bench's invocations seeds the dice (`_rng`)
        self._bench = services
        self._log = log
        self._lock = lock
        self._id = snapshot.id
        self._snapshot = snapshot
        self._profile = profile
        self._state = state
        self.gate = gate
        self.records: list[CallRecord] = list(records)
        self.blocked = blocked
        self.closed = False
        self._call_ids = {(r.round, r.call_id) for r in records}
        self._seq = itertools.count(len(records) + 1)
        self._call_names = {str(b.tool_id): b.call_name for b in snapshot.bindings}
        self._mcp_port = services.mcp_port(snapshot)  # mcp.manage's; it depends on the snapshot only
        self._cancel = asyncio.Event()  # given to each builtin call; cancel() sets it and makes a new one
        self._stop = StopSignal()  # the same, for builtins' blocking handlers (tools/base.py)
        self._breaker = LoopBreaker()
        self._sources: dict[ToolId, ToolSource] = {}  # the source that runs each tool, found on first call
        # Seconds each running call (round, call id) waited for a person's decision: not the tool's time.
        self._waited: dict[tuple[int, str], float] = {}

    def cancel(self) -> None:
        """Set the cancel signals of the calls running now; calls begun after get new ones."""
        with self._lock:
            event, self._cancel = self._cancel, asyncio.Event()
            stop, self._stop = self._stop, StopSignal()
        stop.set()
        loop = self._bench.loop
        if loop.in_loop():
            event.set()
        else:  # the event belongs to the bench loop, where async builtins await it
            loop.loop.call_soon_threadsafe(event.set)

    def begin(self, round_no: int, call_name: Any, arguments: Any, call_id: str | None,
              *, last: bool, turn: Turn | None = None) -> Step | ToolResult:
        """The call ready to dispatch, or its recorded refusal; misuse of the library raises."""
        started = time.perf_counter()
        if call_id is not None and not isinstance(call_id, str):
            raise ToolbenchError("bench.misuse", f"a call id is a string or None, not {type(call_id).__name__}")
        if not isinstance(call_name, str):
            raise ToolbenchError("bench.misuse", f"a call name is a string, not {type(call_name).__name__}")
        if not isinstance(arguments, _WIRE_TYPES) and arguments is not MISSING:
            raise ToolbenchError("bench.misuse", "arguments are the wire text (a str), a dict, or another JSON "
                                 f"value, not {type(arguments).__name__}")
        args = arguments if isinstance(arguments, ToolArguments) else ToolArguments.decode(arguments)
        name = call_name
        binding = self._snapshot.binding_for(name)
        if binding is None:  # LiveAgent's registry: a name that matches only trimmed and lowercased
            binding = self._snapshot.binding_loose(name)
        tool_id = binding.tool_id if binding else None
        with self._lock:
            if call_id is None:
                call_id = f"call_{next(self._seq):04d}"
            if (round_no, call_id) in self._call_ids:
                # The record files of (round, call id) are the first call's: write-once, not ours.
                return self._refuse(round_no, call_id, name, args, tool_id, started, "model.invalid_tool_call",
                                    f"The call id `{call_id}` is used twice in this round; give each call its own id.",
                                    audit=False)
            self._call_ids.add((round_no, call_id))
            stem = call_file_stem(self._id, round_no, call_id)
            self._bench.store.write_later(args_path(stem), args.to_json())
            if self.blocked is not None:
                return self._refuse(round_no, call_id, name, args, tool_id, started, "agent.tool_not_started",
                                    f"Not started: this invocation is blocked. {self.blocked}")
            if round_no > self._profile.run.max_rounds and nested_in() is None:
                limit = self._profile.run.max_rounds
                return self._refuse(round_no, call_id, name, args, tool_id, started, "agent.max_tool_rounds_exceeded",
                                    f"This invocation has used its {limit} rounds (the profile's `run.maxRounds`); "
                                    "no more tool calls run. Give your final answer now.", {"maxRounds": limit})
            if turn is not None and binding is not None:  # the contract, before any budget is reserved
                try:
                    turn.check(binding.call_name, nested=nested_in() is not None)
                except ToolError as exc:
                    return self._refuse(round_no, call_id, name, args, tool_id, started, exc.code, exc.message,
                                        exc.structured)
            try:
                charge(self.gate, self._snapshot.max_calls_per_invocation, tool_id,
                       binding.max_calls if binding else None)
            except ToolError as exc:
                return self._refuse(round_no, call_id, name, args, tool_id, started, exc.code, exc.message,
                                    exc.structured)
        if binding is None:
            names = ", ".join(f"`{n}`" for n in self._snapshot.call_names) or "none"
            return self._refuse(round_no, call_id, name, args, None, started, "model.unknown_tool_call",
                                f"There is no tool named `{quote(name)}`. Call one of the available tools: {names}.",
                                {"available": list(self._snapshot.call_names)})
        if binding.descriptor.completes_round and not last:
            return self._refuse(round_no, call_id, name, args, tool_id, started, "agent.tool_after_finish",
                                f"`{name}` ends the task, so it must be the last call of its round. "
                                "Finish the other calls first, then call it alone.")
        if not args.is_valid:
            return self._refuse(round_no, call_id, name, args, tool_id, started, "tool.invalid_arguments",
                                invalid_arguments_message(args.raw))
        return Step(round_no, call_id, stem, name, binding, args, started, turn)

    def run(self, step: Step | ToolResult) -> ToolResult:
        """Run a begun call from sync code (on the bench loop's thread or off it)."""
        if isinstance(step, ToolResult):
            return step
        loop = self._bench.loop
        try:
            output = self._dispatch(step, blocking=not loop.in_loop())
            if inspect.isawaitable(output):
                output = loop.run(_awaited(output))
        except concurrent.futures.CancelledError:  # the bench loop cancelled it (the bench closed)
            return self._fail(step, asyncio.CancelledError())
        except Exception as exc:
            return self._fail(step, exc)
        except BaseException:
            # Interrupted while waiting (Ctrl-C in a notebook): the loop has cancelled the tool,
            # so the call ends as a cancelled one, with its recorded result, and the interrupt goes on.
            self._fail(step, asyncio.CancelledError())
            raise
        return self._succeed(step, output)

    async def arun(self, step: Step | ToolResult) -> ToolResult:
        """Run a begun call from a coroutine; a cancelled caller stops after its call is recorded."""
        if isinstance(step, ToolResult):
            return step
        try:
            output = self._dispatch(step, blocking=False)
            if inspect.isawaitable(output):
                output = await self._bench.loop.run_async(_awaited(output))
        except (Exception, asyncio.CancelledError) as exc:
            result = self._fail(step, exc)
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the caller was cancelled: the call keeps its paired result, the caller stops
            return result
        return self._succeed(step, output)

    def _dispatch(self, step: Step, *, blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        """Hand a call that passed the gate to its source: its output, or an awaitable of it.
        `blocking` (a sync caller off the loop) lets a builtin use its blocking twin."""
        tool_id = step.binding.tool_id
        source = self._sources.get(tool_id)
        if source is None:  # once per tool: a source's `has` may list its tools
            source = self._sources[tool_id] = self._bench.sources.owner(tool_id)
        args = step.arguments.value
        ask = source.permission(tool_id) == "ask"
        if source.checks_arguments or ask:  # nobody is asked to approve a call that would be refused anyway
            check_arguments(step.binding.descriptor.input_schema, args)
        builtin = source is self._bench.builtins
        # Read here, in the caller's thread: a nested call waits for no decision past its caller's end.
        deadline = current_deadline()
        ctx = ToolContext(workspace=self._state.root or self._bench.workspace, profile=self._profile, rng=self._rng(),
                          invocation_id=self._id, round=step.round, call_id=step.call_id,
                          call_names=self._call_names, state=self._state, agents=self._bench.agents(),
                          cancel=self._cancel, stop=self._stop,
                          mcp=self._mcp_port if builtin else None,
                          tools=self._nested_calls(step) if builtin else None,
                          approve=partial(self._approve_step, step, deadline) if builtin else None)
        if not ask:
            return source.call(tool_id, args, ctx, blocking=blocking)
        return self._approved(self._request(step), partial(source.call, tool_id, args, ctx, blocking=False), deadline)

    def _nested_calls(self, step: Step) -> NestedCalls | None:
        """The port of `step`'s nested calls: calls of this invocation in its round (bridge.py);
        None when `step` is itself a nested call, so nesting stops at one level."""
        if nested_in() is not None:
            return None

        def run(name: str, arguments: dict[str, Any], call_id: str) -> ToolResult:
            return self.run(self.begin(step.round, name, arguments, call_id, last=True, turn=step.turn))

        return NestedCalls(step.call_id, self._snapshot.bindings, self._call_names, run)

    async def _approved(self, request: ApprovalRequest, start: Callable[[], ToolOutput | Awaitable[ToolOutput]],
                        deadline: float | None) -> ToolOutput:
        """Run `start` once the approval handler has said yes; the decision is logged first."""
        await self._ask(request, deadline)
        # Off the loop: a sync tool must not stall the bench loop (nor call the bench's sync face from it).
        output = await asyncio.to_thread(start)
        return await output if inspect.isawaitable(output) else output

    async def _approve_step(self, step: Step, deadline: float | None, action: str, reason: str,
                            details: Mapping[str, Any]) -> None:
        """A builtin's `ctx.approve`: one step of its call asks, through the same handler and log."""
        await self._ask(replace(self._request(step), action=action, reason=reason, details=dict(details)), deadline)

    def _request(self, step: Step) -> ApprovalRequest:
        """What a person is asked about a call (made only when one is asked: not on the hot path)."""
        return ApprovalRequest(self._id, step.round, step.call_id, step.call_name, step.binding.tool_id,
                               step.arguments.value)

    async def _ask(self, request: ApprovalRequest, deadline: float | None) -> None:
        """Return once the approval handler said yes; raise the call's ToolError otherwise. The
        decision is in the run log either way, before anything of the call runs."""
        asked = time.perf_counter()
        try:
            decision = await self._bench.approvals.decide(request, deadline=deadline)
        except ToolError as exc:
            self._note_approval(request, exc.code)
            raise
        finally:
            key = (request.round, request.call_id)
            self._waited[key] = self._waited.get(key, 0.0) + time.perf_counter() - asked
        self._note_approval(request, decision)

    def _rng(self) -> random.Random:
        """The invocation's random source. A seeded bench draws it from its seed and the
        invocation's place among the invocations it made or reopened (delegated children
        included; one made outside the bench uses its id), so the same script rolls the same
        dice in a new process."""
        rng = self._state.rng
        if rng is None:
            seed, place = self._bench.seed, self._owner.place
            # Not from the id: the bench makes ids at random (runtime/seeding.py, the one rule).
            where = self._id if place is None else place
            rng = self._state.rng = random.Random() if seed is None else invocation_rng(seed, where)
        return rng

    # outcomes -----------------------------------------------------------------------------
    def _succeed(self, step: Step, output: Any) -> ToolResult:
        if not isinstance(output, ToolOutput):
            return self._fail(step, ToolbenchError("tool.result_identity_mismatch",
                                                   f"the tool returned {type(output).__name__}, not a ToolOutput"))
        saved: tuple[AttachmentRef, ...] = ()
        if output.attachments:  # a result without attachments pays nothing here
            problem = attachments.check(output.attachments)
            if problem is not None:
                return self._fail(step, ToolbenchError("tool.result_identity_mismatch", problem))
            # Written before the call returns: the result names the files, and the model may be told.
            if not self.closed:
                saved = attachments.save(self._bench.store, step.stem, output.attachments)
        result = trusted_result(step.call_id, str(step.binding.tool_id), output.content, output.structured,
                                tuple(output.resource_refs), saved)
        return self._finish(step, result)

    def _fail(self, step: Step, exc: BaseException) -> ToolResult:
        tool_id = str(step.binding.tool_id)
        if isinstance(exc, ToolError):
            result = error_result(step.call_id, tool_id, exc.code, exc.message, exc.structured)
            if isinstance(exc, OutcomeUnknown):
                with self._lock:
                    self.blocked = (f"Call `{step.call_id}` ({tool_id}) has no confirmed result: {exc.message} "
                                    "Check the state before repeating anything.")
        elif isinstance(exc, asyncio.CancelledError):
            result = error_result(step.call_id, tool_id, "tool.cancelled", _cancelled_message(step.binding.tool_id))
        else:
            result = error_result(step.call_id, tool_id, "tool.internal_error",
                                  f"The tool failed unexpectedly: {type(exc).__name__}: {exc}")
        return self._finish(step, result)

    def _refuse(self, round_no: int, call_id: str, name: str, args: ToolArguments, tool_id: ToolId | None,
                started: float, code: str, message: str, extra: Any = None, *, audit: bool = True) -> ToolResult:
        result = error_result(call_id, str(tool_id) if tool_id else None, code, message, extra)
        return self._record(round_no, call_id, name, args, result, started, externalized=False, audit=audit)

    def _finish(self, step: Step, result: ToolResult) -> ToolResult:
        externalized = False
        settings = self._profile.tools
        if not self.closed and (step.binding.tool_id.kind != "builtin" or settings.project_builtin_results):
            projected = project(
                result, limit=settings.external_result_inline_char_limit, invocation_id=self._id,
                round_no=step.round, read_call_name=self._call_names.get("builtin:workspace.read_file"),
                search_call_name=self._call_names.get("builtin:workspace.search_files"))
            if projected is not None:
                store = self._bench.store
                # The audit file first: a readable file without its audit file is then always a
                # write cut short (a crash between the two), which a reopen sweeps.
                store.write_json_now(projected.audit_path, projected.raw)
                try:
                    store.write_now(projected.readable_path, projected.readable_text)
                except ToolbenchError:
                    store.remove(projected.audit_path)
                    raise
                result, externalized = projected.result, True
        return self._record(step.round, step.call_id, step.call_name, step.arguments, result, step.started,
                            externalized=externalized, stem=step.stem, ran=True)

    def _record(self, round_no: int, call_id: str, name: str, args: ToolArguments, result: ToolResult,
                started: float, *, externalized: bool, stem: str | None = None, audit: bool = True,
                ran: bool = False) -> ToolResult:
        result = self._annotate(round_no, call_id, name, args, result, ran=ran)
        # The call's own time: a wait for Approve (a person's, however long) is left out.
        elapsed = time.perf_counter() - started - self._waited.pop((round_no, call_id), 0.0)
        record = CallRecord(round=round_no, call_id=call_id, call_name=name, tool_id=result.tool_id,
                            arguments=args, result=result, elapsed_ms=round(max(elapsed, 0.0) * 1000, 3),
                            externalized=externalized, via=nested_in())
        if self.closed:  # a call the bench's close cut short: kept in memory, no file written after close
            with self._lock:
                self.records.append(record)
            return result
        if audit and not externalized:  # an externalised result's audit file is written already
            self._bench.store.write_later(audit_path(stem or call_file_stem(self._id, round_no, call_id)), result)
        # The log line is the record of the answer: written before the call returns, so a
        # crash right after loses nothing that was answered (record files are rebuilt from it).
        with self._lock:  # the gate's counters as of this line: the last line holds the highest
            self._log.append({"record": record.to_log(), "gate": self.gate.to_json(), "blocked": self.blocked})
            self.records.append(record)
        if self._bench.observers:
            tell_call(self._bench.observers, self._id, record)
        return result

    def _annotate(self, round_no: int, call_id: str, name: str, args: ToolArguments, result: ToolResult,
                  *, ran: bool) -> ToolResult:
        """What the runtime adds to a result's text: which tool a loosely matched name meant
        (LiveAgent's case-insensitive lookup), and, for what a tool answered (`ran`; not the
        runtime's own refusals, not the shell bridge's nested calls), the loop breaker's guidance."""
        note = ""
        binding = self._snapshot.binding_for(name)
        if binding is None and result.tool_id is not None:
            meant = self._snapshot.binding_loose(name)
            if meant is not None:
                did = "this ran" if ran else "it was read as"
                note = f"\n\n(There is no tool named `{quote(name)}`; {did} `{meant.call_name}`. Use the exact name.)"
        failures = 0
        if ran and nested_in() is None:
            with self._lock:
                key = (name, args.replay_text() if args.is_valid else args.raw, result.error_code or "") \
                    if result.is_error else None
                failures = self._breaker.note(key, (round_no, call_id))
        if failures >= loop_breaker.THRESHOLD:
            note += loop_breaker.guidance(failures)
        if not note:
            return result
        structured = result.structured
        if failures >= loop_breaker.THRESHOLD and isinstance(structured, dict):
            structured = {**structured, "failedInARow": failures}
        return result.model_copy(update={"content": result.content + note, "structured": structured})

    def _note_approval(self, request: ApprovalRequest, decision: str) -> None:
        """The approval decision of a call, in the run log before the tool runs (or does not)."""
        if self.closed:
            return
        with self._lock:
            note: dict[str, Any] = {"round": request.round, "call_id": request.call_id,
                                    "tool_id": str(request.tool_id), "decision": decision}
            if request.action != "call":  # a step of the call asked: which one, and what it would do
                note |= {"action": request.action, "details": request.details}
            self._log.append({"approval": note})


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _cancelled_message(tool_id: ToolId) -> str:
    if tool_id.kind == "builtin":
        return "The call was cancelled before it finished."
    # The server or the extension got the call: it may have acted before the cancel reached it.
    return ("The call was cancelled before it returned. The tool may have run in part or in full, so its "
            "outcome is unknown: check the state before repeating it.")
