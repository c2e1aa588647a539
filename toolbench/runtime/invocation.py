"""One invocation: a frozen snapshot, its gate counters, and the calls made against it.

Every call takes the same path, whatever its source:
decode -> gate (charges first) -> argument check -> approval -> the source runs it -> project -> record.
Only misuse and storage failures raise; everything a model can send becomes a result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import itertools
import json
import random
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from ..core import loop_breaker
from ..core.arguments import MISSING, ToolArguments, invalid_arguments_message, quote
from ..core.errors import OutcomeUnknown, ToolbenchError, ToolError
from ..core.fileio import write_atomic
from ..core.gate import GateState, charge
from ..core.ids import ToolId
from ..core.loop_breaker import LoopBreaker
from ..core.profile import Profile
from ..core.results import AttachmentRef, ToolOutput, ToolResult, call_file_stem, error_result, project, trusted_result
from ..core.schema_check import check_arguments
from ..core.snapshot import Binding, Snapshot
from ..core.turn import Turn, TurnContract
from ..tools.base import StopSignal, ToolContext
from ..tools.state import InvocationState
from ..tools.workspace.publish import PublishedOutput
from . import attachments
from .approval import ApprovalRequest
from .bridge import NestedCalls, nested_in
from .mcp_port import McpManagePort
from .records import PROFILE_NAME, SNAPSHOT_NAME, CallRecord, RunLog, read_log, read_turns, turn_entry
from .seeding import invocation_rng
from .sources import ToolSource
from .store import args_path, audit_path, dumps

if TYPE_CHECKING:
    import pandas

    from ..models import Model
    from ..protocols.types import AssistantTurn, Exchange, Provider
    from .kernel import Kernel
    from .run import Run, RunRound

Call = tuple[str, Any] | tuple[str, Any, str | None]
T = TypeVar("T")
# What a provider can hand over as a call's arguments; anything else is a Python object.
_WIRE_TYPES = (str, dict, list, int, float, bool, type(None), ToolArguments)


@dataclass(slots=True)
class _Step:
    """A call that passed the gate and is ready to dispatch."""

    round: int
    call_id: str
    stem: str
    call_name: str
    binding: Binding
    arguments: ToolArguments
    started: float
    turn: Turn | None = None  # the round's contract: nested calls (the shell bridge) keep its tools


class Invocation:
    """Calls against one frozen snapshot. Make one with `bench.invocation(scene)`."""

    def __init__(self, kernel: Kernel, snapshot: Snapshot, profile: Profile, state: InvocationState, *,
                 records: Sequence[CallRecord] = (), gate: GateState | None = None, blocked: str | None = None) -> None:
        self._kernel = kernel
        self.snapshot = snapshot
        # Frozen with the snapshot: a new bench profile changes the next invocation only.
        self._profile = profile
        self._gate = gate or GateState()
        self._records: list[CallRecord] = list(records)
        self._round = max((r.round for r in records), default=0)
        self._call_ids = {(r.round, r.call_id) for r in records}
        self._seq = itertools.count(len(records) + 1)
        self._lock = threading.RLock()
        self._dir = kernel.store.invocation_dir(snapshot.id)
        self._log = RunLog(self._dir)
        self.blocked: str | None = blocked
        self.state = state  # per-invocation tool state (read states, todos, the published output, ...)
        self._call_names = {str(b.tool_id): b.call_name for b in snapshot.bindings}
        self._round_hooks = kernel.sources.round_end_hooks([b.tool_id for b in snapshot.bindings])
        self._mcp_port = McpManagePort(kernel, snapshot)  # mcp.manage's; it depends on the snapshot only
        self._turns: dict[int, AssistantTurn] = {}  # round -> the provider's assistant turn (respond)
        self._cancel = asyncio.Event()  # given to each builtin call; cancel() sets it and makes a new one
        self._stop = StopSignal()  # the same, for builtins' blocking handlers (tools/base.py)
        self._logged_output: Any = None  # the published output last written to the run log
        self._breaker = LoopBreaker()
        self._owners: dict[ToolId, ToolSource] = {}  # the source that runs each tool, found on first call
        self._closed = False

    @property
    def id(self) -> str:
        return self.snapshot.id

    @property
    def profile(self) -> Profile:
        """The profile this invocation was made with (a frozen value; the bench's may change)."""
        return self._profile

    # persistence --------------------------------------------------------------------------
    @classmethod
    def create(cls, kernel: Kernel, snapshot: Snapshot, profile: Profile, state: InvocationState) -> Invocation:
        """A new invocation, its profile and snapshot saved beside its run log."""
        inv = cls(kernel, snapshot, profile, state)
        write_atomic(inv._dir / PROFILE_NAME, profile.to_json_text(), durable=False)
        write_atomic(inv._dir / SNAPSHOT_NAME, dumps(snapshot.to_json()), durable=False)
        return inv

    @classmethod
    def reopen(cls, kernel: Kernel, invocation_id: str, state: InvocationState) -> Invocation:
        directory = kernel.store.invocation_dir(invocation_id)
        path = directory / SNAPSHOT_NAME
        if not path.exists():
            raise ToolbenchError("bench.misuse", f"no invocation `{invocation_id}` in {kernel.workspace}")
        snapshot = Snapshot.from_json(json.loads(path.read_text(encoding="utf-8")))
        entries = read_log(directory)
        calls = [e for e in entries if "record" in e]  # the others hold the published output
        records = [CallRecord.from_json(e["record"]) for e in calls]
        gate = GateState.from_json(calls[-1]["gate"]) if calls else GateState()
        blocked = next((e["blocked"] for e in reversed(calls) if e.get("blocked")), None)
        profile_path = directory / PROFILE_NAME
        profile = Profile.load(profile_path) if profile_path.exists() else kernel.profile
        inv = cls(kernel, snapshot, profile, state, records=records, gate=gate, blocked=blocked)
        inv._round = max(inv._round, kernel.store.recover(invocation_id, _record_files(invocation_id, calls)))
        inv._turns = read_turns(entries)
        if inv._turns:  # a round whose calls were all lost still used its number
            inv._round = max(inv._round, max(inv._turns))
        output = _published_output(entries)
        if output is not None:
            inv.state.output = inv._logged_output = output
        return inv

    # reading ------------------------------------------------------------------------------
    @property
    def records(self) -> list[CallRecord]:
        return list(self._records)

    @property
    def output(self) -> PublishedOutput | None:
        """The invocation's published output, or None before anything was published.

        `.text` is the output so far; `.path` and `.sha256` name the file published last;
        `.source` is `"commit"` (an explicit `workspace.commit`) or `"auto"` (chat scene: at the
        end of a round without an explicit commit, the text file a successful shell changed last
        is published); `.mode`, `.round`, `.call_id`, `.reason` say which call and how. Kept in
        the run log, so a reopened invocation has it too."""
        data = self.state.output
        return None if data is None else PublishedOutput.from_json(data)

    @property
    def todos(self) -> list[dict[str, Any]]:
        return list(self.state.todos)

    def budget(self) -> dict[str, Any]:
        """Calls left: in total, and per call name for tools with their own limit."""
        per_tool = {
            b.call_name: b.max_calls - self._gate.calls_per_tool.get(str(b.tool_id), 0)
            for b in self.snapshot.bindings if b.max_calls is not None
        }
        return {"total": self.snapshot.max_calls_per_invocation - self._gate.total_calls, "per_tool": per_tool}

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per call, in the order the calls were answered; `via` is the call id of the
        call that made a nested call (the shell bridge), None for the model's own calls."""
        import pandas

        columns = ["round", "call_id", "call_name", "tool_id", "arguments", "is_error", "error_code",
                   "elapsed_ms", "content_chars", "externalized", "via"]
        return pandas.DataFrame([r.row() for r in self._records], columns=columns)

    def transcript(self, protocol: str | Provider, *, rounds: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """The calls and results as that provider's message history, every call paired
        (`rounds`: only those round numbers; a run sends its own rounds).

        A round that came from `respond` with this protocol is replayed with its assistant turn
        as the provider sent it (thinking blocks, reasoning items, thought signatures, text).
        Attachments go in as that provider's API takes them (read from their files), and each
        result's text lists them (`render_result` shows one result per provider)."""
        from ..protocols import encode_history

        wanted = None if rounds is None else set(rounds)
        by_round: dict[int, list[Exchange]] = {}
        for r in self._records:
            # a nested call (the shell bridge) is not the model's
            if r.via is None and (wanted is None or r.round in wanted):
                by_round.setdefault(r.round, []).append(self._exchange(r))
        order = sorted(by_round)
        return encode_history(protocol, [by_round[k] for k in order], turns=[self._turns.get(k) for k in order])

    def render_result(self, result: ToolResult | str, protocol: str | Provider | None = None) -> Any:
        """What the model gets for one call's result (a `ToolResult` of this invocation, or its
        call id), as `transcript` sends it: that provider's result element when `protocol` is
        given, else `{protocol: element}` for every provider. Shows which attachments each API
        takes; `toolbench.protocols.abridge` shortens the base64 data for display."""
        from ..protocols import encode_result, names

        call_id = result.call_id if isinstance(result, ToolResult) else result
        record = next((r for r in reversed(self._records) if r.call_id == call_id
                       and (not isinstance(result, ToolResult) or r.result is result or r.result == result)), None)
        if record is None:
            raise ToolbenchError("bench.misuse", f"no call `{call_id}` with that result in invocation `{self.id}`")
        exchange = self._exchange(record)
        if protocol is not None:
            return encode_result(protocol, exchange)
        return {name: encode_result(name, exchange) for name in names()}

    def _exchange(self, r: CallRecord) -> Exchange:
        from ..protocols.types import Exchange, ResultView

        result = r.result
        views = attachments.views(self._kernel.store, result.attachments) if result.attachments else ()
        return Exchange(call_id=r.call_id, call_name=r.call_name, arguments=r.arguments.replay_object(),
                        result=ResultView(content=result.content, is_error=result.is_error, attachments=views),
                        signature=r.signature)

    def respond(self, protocol: str | Provider, response: Any, *,
                contract: TurnContract | None = None) -> list[ToolResult]:
        """Decode a provider's response body and run its tool calls as one round (under
        `contract`, the turn contract the request was rendered with, if any).

        The round's assistant turn goes to the run log before its calls run, so `transcript`
        replays it, after a reopen too. A response that is not that provider's shape, a refusal
        or a cut output raises `ToolbenchError` (model.*) and uses no round."""
        round_no, calls, turn = self._decoded_round(protocol, response, contract)
        return self._turn_in(round_no, calls, turn)

    async def arespond(self, protocol: str | Provider, response: Any, *,
                       contract: TurnContract | None = None) -> list[ToolResult]:
        round_no, calls, turn = self._decoded_round(protocol, response, contract)
        return await self._aturn_in(round_no, calls, turn)

    def _decoded_round(self, protocol: str | Provider, response: Any,
                       contract: TurnContract | None) -> tuple[int, list[Call], Turn | None]:
        from ..protocols import decode_response

        self._check_open()
        turn = self._apply(contract)
        with self._lock:  # the seed names the round the calls get, whatever runs beside
            decoded = decode_response(protocol, response, id_seed=f"{self.id}_{self._round + 1}")
            round_no = self._next_round()
            if decoded.assistant is not None and decoded.calls:
                self._log.append(turn_entry(round_no, decoded.assistant))
                self._turns[round_no] = decoded.assistant
        return round_no, [(c.call_name, c.arguments, c.call_id) for c in decoded.calls], turn

    # a model in the loop (runtime/run.py) ---------------------------------------------------
    def run(self, model: Model, prompt: str, *, system: str | None = None, max_rounds: int | None = None,
            contract: TurnContract | None = None, on_round: Callable[[Run, RunRound], Any] | None = None) -> Run:
        """Let `model` (a `toolbench.models` adapter) drive this invocation from `prompt`: each
        answer's calls run as one round, their results go back, until the model answers without
        calls, a completion tool ends the task, `max_rounds` (default `profile.run.max_rounds`)
        or the call budget runs out, or the provider errs (`Run.error`; never raised).
        `on_round(run, round)` is called after each round, on the bench loop's thread."""
        return self._kernel.loop.run(self.arun(model, prompt, system=system, max_rounds=max_rounds,
                                               contract=contract, on_round=on_round))

    async def arun(self, model: Model, prompt: str, *, system: str | None = None, max_rounds: int | None = None,
                   contract: TurnContract | None = None,
                   on_round: Callable[[Run, RunRound], Any] | None = None) -> Run:
        from .run import run_model

        self._check_open()
        return await run_model(self, self._log, model, prompt, system=system, max_rounds=max_rounds,
                               contract=contract, on_round=on_round)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start a coroutine (`arun`, `aturn`, ...) on the bench loop, where this invocation's
        async work runs, and return its future at once: a UI drives a run this way without
        blocking. Cancelling the future cancels the coroutine, but returns before it has
        unwound (its cancelled call recorded, its log line written): to wait for that, cancel
        the task from inside the coroutine, as the chat panel does."""
        return self._kernel.loop.submit(coro)
    @property
    def runs(self) -> list[Run]:
        """The runs of this invocation, read back from its run log (after a reopen too)."""
        from .run import read_runs

        return read_runs(self, read_log(self._dir))

    # calling ------------------------------------------------------------------------------
    def call(self, call_name: str, arguments: Any = MISSING, *, call_id: str | None = None,
             contract: TurnContract | None = None) -> ToolResult:
        """Run one call as its own round."""
        return self.turn([(call_name, arguments, call_id)], contract=contract)[0]

    async def acall(self, call_name: str, arguments: Any = MISSING, *, call_id: str | None = None,
                    contract: TurnContract | None = None) -> ToolResult:
        return (await self.aturn([(call_name, arguments, call_id)], contract=contract))[0]

    def turn(self, calls: Sequence[Call], *, contract: TurnContract | None = None) -> list[ToolResult]:
        """Run one model round of several calls, in order. Completion tools must come last.

        `contract` (a `TurnContract`) limits the round to some of the snapshot's tools and a
        tool choice; a call outside it gets `model.tool_not_in_turn` or
        `model.tool_choice_violation` before any budget is used."""
        turn = self._apply(contract)
        return self._turn_in(self._next_round(), calls, turn)

    def _turn_in(self, round_no: int, calls: Sequence[Call], turn: Turn | None) -> list[ToolResult]:
        try:
            return [self._run(self._begin(round_no, *self._unpack(c), last=i == len(calls) - 1, turn=turn))
                    for i, c in enumerate(calls)]
        finally:
            self._end_round(round_no)

    async def aturn(self, calls: Sequence[Call], *, contract: TurnContract | None = None) -> list[ToolResult]:
        turn = self._apply(contract)
        return await self._aturn_in(self._next_round(), calls, turn)

    async def _aturn_in(self, round_no: int, calls: Sequence[Call], turn: Turn | None) -> list[ToolResult]:
        try:
            return [await self._arun(self._begin(round_no, *self._unpack(c), last=i == len(calls) - 1, turn=turn))
                    for i, c in enumerate(calls)]
        finally:
            self._end_round(round_no)

    def _apply(self, contract: TurnContract | None) -> Turn | None:
        """The contract over this snapshot (misuse raises before the round starts)."""
        if contract is None:
            return None
        if not isinstance(contract, TurnContract):
            raise ToolbenchError("bench.misuse", f"contract is a TurnContract, not {type(contract).__name__}")
        return contract.apply(self.snapshot)

    def cancel(self) -> None:
        """Cancel the calls running now; safe from any thread (a widget, a signal handler).

        A tool that watches for it stops early and its call ends with a recorded, confirmed
        result (the shell: `workspace.shell_cancelled`; what it wrote stays written). Tools
        that do not watch (extension and MCP tools, most builtins) run to the end. The
        invocation stays open: calls started after this are not affected."""
        if self._closed or self._kernel.closed:
            return  # nothing runs any more (and the bench loop must not start again)
        with self._lock:
            event, self._cancel = self._cancel, asyncio.Event()
            stop, self._stop = self._stop, StopSignal()
        stop.set()
        loop = self._kernel.loop
        if loop.in_loop():
            event.set()
        else:  # the event belongs to the bench loop, where async builtins await it
            loop.loop.call_soon_threadsafe(event.set)

    def _end_round(self, round_no: int) -> None:
        """Run the offered tools' round-end hooks (the shell's auto-publish), and log the
        published output if it changed."""
        for hook in self._round_hooks:
            hook(self.state, round_no, self.snapshot.scene)
        output = self.state.output
        if output is not self._logged_output and output is not None:
            with self._lock:
                self._log.append(_output_entry(self._logged_output, output))
                self._logged_output = output

    @staticmethod
    def _unpack(call: Call) -> tuple[str, Any, str | None]:
        if not isinstance(call, tuple) or not 1 <= len(call) <= 3:
            raise ToolbenchError("bench.misuse", "a turn is a list of (call_name, arguments[, call_id]) tuples")
        name = call[0]
        arguments = call[1] if len(call) > 1 else MISSING
        call_id = call[2] if len(call) > 2 else None
        return name, arguments, call_id

    def _check_open(self) -> None:
        if self._closed or self._kernel.closed:
            raise ToolbenchError("bench.closed", "this invocation's workbench is closed; open a new Workbench"
                                 if self._kernel.closed else "this invocation is closed; start a new one")

    def _next_round(self) -> int:
        self._check_open()  # every way of calling takes a round first: nothing runs on a closed bench
        with self._lock:
            self._round += 1
            return self._round

    def _begin(self, round_no: int, call_name: Any, arguments: Any, call_id: str | None,
               *, last: bool, turn: Turn | None = None) -> _Step | ToolResult:
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
        binding = self.snapshot.binding_for(name)
        if binding is None:  # LiveAgent's registry: a name that matches only trimmed and lowercased
            binding = self.snapshot.binding_loose(name)
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
            stem = call_file_stem(self.id, round_no, call_id)
            self._kernel.store.write_later(args_path(stem), args.to_json())
            if self.blocked is not None:
                return self._refuse(round_no, call_id, name, args, tool_id, started, "agent.tool_not_started",
                                    f"Not started: this invocation is blocked. {self.blocked}")
            if round_no > self.profile.run.max_rounds and nested_in() is None:
                limit = self.profile.run.max_rounds
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
                charge(self._gate, self.snapshot.max_calls_per_invocation, tool_id,
                       binding.max_calls if binding else None)
            except ToolError as exc:
                return self._refuse(round_no, call_id, name, args, tool_id, started, exc.code, exc.message,
                                    exc.structured)
        if binding is None:
            names = ", ".join(f"`{n}`" for n in self.snapshot.call_names) or "none"
            return self._refuse(round_no, call_id, name, args, None, started, "model.unknown_tool_call",
                                f"There is no tool named `{quote(name)}`. Call one of the available tools: {names}.",
                                {"available": list(self.snapshot.call_names)})
        if binding.descriptor.completes_round and not last:
            return self._refuse(round_no, call_id, name, args, tool_id, started, "agent.tool_after_finish",
                                f"`{name}` ends the task, so it must be the last call of its round. "
                                "Finish the other calls first, then call it alone.")
        if not args.is_valid:
            return self._refuse(round_no, call_id, name, args, tool_id, started, "tool.invalid_arguments",
                                invalid_arguments_message(args.raw))
        return _Step(round_no, call_id, stem, name, binding, args, started, turn)

    def _run(self, step: _Step | ToolResult) -> ToolResult:
        if isinstance(step, ToolResult):
            return step
        loop = self._kernel.loop
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

    async def _arun(self, step: _Step | ToolResult) -> ToolResult:
        if isinstance(step, ToolResult):
            return step
        try:
            output = self._dispatch(step, blocking=False)
            if inspect.isawaitable(output):
                output = await self._kernel.loop.run_async(_awaited(output))
        except (Exception, asyncio.CancelledError) as exc:
            result = self._fail(step, exc)
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the caller was cancelled: the call keeps its paired result, the caller stops
            return result
        return self._succeed(step, output)

    def _dispatch(self, step: _Step, *, blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        """Hand a call that passed the gate to its source: its output, or an awaitable of it.
        `blocking` (a sync caller off the loop) lets a builtin use its blocking twin."""
        tool_id = step.binding.tool_id
        source = self._owners.get(tool_id)
        if source is None:  # once per tool: a source's `has` may list its tools
            source = self._owners[tool_id] = self._kernel.sources.owner(tool_id)
        args = step.arguments.value
        ask = source.permission(tool_id) == "ask"
        if source.checks_arguments or ask:  # nobody is asked to approve a call that would be refused anyway
            check_arguments(step.binding.descriptor.input_schema, args)
        ctx = ToolContext(workspace=self.state.root or self._kernel.workspace, profile=self.profile, rng=self._rng(),
                          invocation_id=self.id, round=step.round, call_id=step.call_id,
                          call_names=self._call_names, state=self.state, agents=self._kernel.agents,
                          cancel=self._cancel, stop=self._stop,
                          mcp=self._mcp_port if source is self._kernel.builtins else None,
                          tools=self._nested_calls(step) if source is self._kernel.builtins else None)
        if not ask:
            return source.call(tool_id, args, ctx, blocking=blocking)
        request = ApprovalRequest(self.id, step.round, step.call_id, step.call_name, tool_id, args)
        return self._approved(request, partial(source.call, tool_id, args, ctx, blocking=False))

    def _nested_calls(self, step: _Step) -> NestedCalls | None:
        """The port of `step`'s nested calls: calls of this invocation in its round (bridge.py);
        None when `step` is itself a nested call, so nesting stops at one level."""
        if nested_in() is not None:
            return None

        def run(name: str, arguments: dict[str, Any], call_id: str) -> ToolResult:
            return self._run(self._begin(step.round, name, arguments, call_id, last=True, turn=step.turn))

        return NestedCalls(step.call_id, self.snapshot.bindings, self._call_names, run)

    async def _approved(self, request: ApprovalRequest,
                        start: Callable[[], ToolOutput | Awaitable[ToolOutput]]) -> ToolOutput:
        """Run `start` once the approval handler has said yes; the decision is logged first."""
        try:
            decision = await self._kernel.approvals.decide(request)
        except ToolError as exc:
            self._note_approval(request, exc.code)
            raise
        self._note_approval(request, decision)
        # Off the loop: a sync tool must not stall the bench loop (nor call the bench's sync face from it).
        output = await asyncio.to_thread(start)
        return await output if inspect.isawaitable(output) else output

    def _rng(self) -> random.Random:
        """The invocation's random source. A seeded bench draws it from its seed and the
        invocation's place among the invocations it made or reopened (delegated children
        included; one made outside the bench uses its id), so the same script rolls the same
        dice in a new process."""
        rng = self.state.rng
        if rng is None:
            seed, made = self._kernel.seed, self._kernel.invocations
            # Not from the id: the bench makes ids at random (runtime/seeding.py, the one rule).
            place = made.index(self) if self in made else self.id
            rng = self.state.rng = random.Random() if seed is None else invocation_rng(seed, place)
        return rng

    # outcomes -----------------------------------------------------------------------------
    def _succeed(self, step: _Step, output: Any) -> ToolResult:
        if not isinstance(output, ToolOutput):
            return self._fail(step, ToolbenchError("tool.result_identity_mismatch",
                                                   f"the tool returned {type(output).__name__}, not a ToolOutput"))
        saved: tuple[AttachmentRef, ...] = ()
        if output.attachments:  # a result without attachments pays nothing here
            problem = attachments.check(output.attachments)
            if problem is not None:
                return self._fail(step, ToolbenchError("tool.result_identity_mismatch", problem))
            # Written before the call returns: the result names the files, and the model may be told.
            if not self._closed:
                saved = attachments.save(self._kernel.store, step.stem, output.attachments)
        result = trusted_result(step.call_id, str(step.binding.tool_id), output.content, output.structured,
                                tuple(output.resource_refs), saved)
        return self._finish(step, result)

    def _fail(self, step: _Step, exc: BaseException) -> ToolResult:
        tool_id = str(step.binding.tool_id)
        if isinstance(exc, ToolError):
            result = error_result(step.call_id, tool_id, exc.code, exc.message, exc.structured)
            if isinstance(exc, OutcomeUnknown):
                with self._lock:
                    self.blocked = (f"Call `{step.call_id}` ({tool_id}) has no confirmed result: {exc.message} "
                                    "Check the state before repeating anything.")
        elif isinstance(exc, asyncio.CancelledError):
            result = error_result(step.call_id, tool_id, "tool.cancelled", "The call was cancelled before it finished.")
        else:
            result = error_result(step.call_id, tool_id, "tool.internal_error",
                                  f"The tool failed unexpectedly: {type(exc).__name__}: {exc}")
        return self._finish(step, result)

    def _refuse(self, round_no: int, call_id: str, name: str, args: ToolArguments, tool_id: ToolId | None,
                started: float, code: str, message: str, extra: Any = None, *, audit: bool = True) -> ToolResult:
        result = error_result(call_id, str(tool_id) if tool_id else None, code, message, extra)
        return self._record(round_no, call_id, name, args, result, started, externalized=False, audit=audit)

    def _finish(self, step: _Step, result: ToolResult) -> ToolResult:
        externalized = False
        settings = self.profile.tools
        if not self._closed and (step.binding.tool_id.kind != "builtin" or settings.project_builtin_results):
            projected = project(
                result, limit=settings.external_result_inline_char_limit, invocation_id=self.id,
                round_no=step.round, read_call_name=self._call_names.get("builtin:workspace.read_file"),
                search_call_name=self._call_names.get("builtin:workspace.search_files"))
            if projected is not None:
                store = self._kernel.store
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
        record = CallRecord(round=round_no, call_id=call_id, call_name=name, tool_id=result.tool_id,
                            arguments=args, result=result, elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
                            externalized=externalized, via=nested_in())
        if self._closed:  # a call the bench's close cut short: kept in memory, no file written after close
            with self._lock:
                self._records.append(record)
            return result
        if audit and not externalized:  # an externalised result's audit file is written already
            self._kernel.store.write_later(audit_path(stem or call_file_stem(self.id, round_no, call_id)), result)
        # The log line is the record of the answer: written before the call returns, so a
        # crash right after loses nothing that was answered (record files are rebuilt from it).
        with self._lock:  # the gate's counters as of this line: the last line holds the highest
            self._log.append({"record": record.to_log(), "gate": self._gate.to_json(), "blocked": self.blocked})
            self._records.append(record)
        return result

    def _annotate(self, round_no: int, call_id: str, name: str, args: ToolArguments, result: ToolResult,
                  *, ran: bool) -> ToolResult:
        """What the runtime adds to a result's text: which tool a loosely matched name meant
        (LiveAgent's case-insensitive lookup), and, for what a tool answered (`ran`; not the
        runtime's own refusals, not the shell bridge's nested calls), the loop breaker's guidance."""
        note = ""
        binding = self.snapshot.binding_for(name)
        if binding is None and result.tool_id is not None:
            meant = self.snapshot.binding_loose(name)
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
        if self._closed:
            return
        with self._lock:
            self._log.append({"approval": {"round": request.round, "call_id": request.call_id,
                                           "tool_id": str(request.tool_id), "decision": decision}})

    def close(self) -> None:
        self._closed = True
        self._log.close()


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _record_files(invocation_id: str, calls: list[dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
    """Each logged call's file stem -> (its tool-args content, its audit content or None), for
    `Store.recover`. A repeated (round, call id) was refused without files of its own; an
    externalised result's audit file is the raw result, written before its call returned."""
    files: dict[str, tuple[Any, Any]] = {}
    for entry in calls:
        record = entry["record"]
        stem = call_file_stem(invocation_id, int(record["round"]), str(record["callId"]))
        if stem not in files:
            files[stem] = (record.get("arguments"), None if record.get("externalized") else record["result"])
    return files


def _output_entry(previous: Any, output: dict[str, Any]) -> dict[str, Any]:
    """The run-log line of a newly published output: an append logs only what it added, so
    committing a growing file does not log the whole output again each time."""
    text = output["text"]
    head = {k: v for k, v in output.items() if k != "text"}
    before = previous.get("text") if isinstance(previous, dict) else None
    if output.get("mode") == "append" and isinstance(before, str) and text.startswith(before):
        return {"output": head, "appended": text[len(before):]}
    return {"output": head, "text": text}


def _published_output(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The published output the run log's output lines add up to (see `_output_entry`)."""
    output: dict[str, Any] | None = None
    for entry in entries:
        head = entry.get("output")
        if head is None:
            continue
        if "appended" in entry:
            text = (output["text"] if output else "") + entry["appended"]
        else:
            text = entry.get("text", head.get("text", ""))  # logs of older versions kept it inside
        output = {**head, "text": text}
    return output
