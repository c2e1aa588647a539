"""One invocation: a frozen snapshot, its gate counters, and the calls made against it.

Every call takes the same path, whatever its source:
decode -> gate (charges first) -> argument check -> approval -> the source runs it -> project -> record.
Only misuse and storage failures raise; everything a model can send becomes a result.
The invocation numbers the rounds and runs each round's calls in order; the steps of one call
are its `CallPipeline` (call_pipeline.py), what a provider sees is its `ProviderFace`
(provider_face.py), and the run log's line kinds are records.py's.
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.arguments import MISSING
from ..core.errors import ToolbenchError
from ..core.fileio import encode_text
from ..core.gate import GateState
from ..core.profile import Profile
from ..core.results import ToolResult
from ..core.turn import Turn, TurnContract
from ..protocols.snapshot import Snapshot
from ..tools.state import InvocationState
from ..tools.todo import TODOS
from ..tools.workspace.publish import PublishedOutput
from ..tools.workspace.runtime_files import read_runtime_file, write_runtime_file
from .call_pipeline import CallPipeline
from .observers import Observer
from .provider_face import ProviderFace
from .records import (
    PROFILE_NAME,
    SNAPSHOT_NAME,
    CallRecord,
    RunLog,
    output_entry,
    published_output,
    read_turns,
    record_files,
)
from .run import read_runs, run_model
from .store import dumps

if TYPE_CHECKING:
    import pandas

    from ..models import Model
    from ..protocols.types import AssistantTurn, Provider, StreamDelta
    from .call_services import CallServices
    from .run import Run, RunRound

Call = tuple[str, Any] | tuple[str, Any, str | None]
SNAPSHOT_MAX_BYTES = 16 << 20  # a snapshot of hundreds of tools with large schemas
PROFILE_MAX_BYTES = 4 << 20  # a profile is settings: kilobytes
T = TypeVar("T")


class Invocation:
    """Calls against one frozen snapshot. Make one with `bench.invocation(scene)`."""

    def __init__(self, services: CallServices, snapshot: Snapshot, profile: Profile, state: InvocationState, *,
                 records: Sequence[CallRecord] = (), gate: GateState | None = None, blocked: str | None = None,
                 turns: Mapping[int, AssistantTurn] | None = None) -> None:
        self._services = services
        self.snapshot = snapshot
        self.place: int | None = None  # among the bench's invocations, given by the kernel: seeds the dice
        # Frozen with the snapshot: a new bench profile changes the next invocation only.
        self._profile = profile
        self._lock = threading.RLock()
        self._dir = services.store.invocation_dir(snapshot.id)
        self._log = RunLog(services.workspace, services.store.invocation_folder(snapshot.id))
        self.state = state  # per-invocation tool state (read states, todos, the published output, ...)
        self._calls = CallPipeline(self, services, self._log, self._lock, snapshot=snapshot,
                                   profile=profile, state=state, records=records, gate=gate or GateState(),
                                   blocked=blocked)
        self._face = ProviderFace(services.store, self._log, turns or {})
        self._round = max(max((r.round for r in records), default=0), self._face.last_round)
        self._round_hooks = services.sources.round_end_hooks([b.tool_id for b in snapshot.bindings])
        self._logged_output: Any = None  # the published output last written to the run log

    @property
    def id(self) -> str:
        return self.snapshot.id

    @property
    def profile(self) -> Profile:
        """The profile this invocation was made with (a frozen value; the bench's may change)."""
        return self._profile

    @property
    def observers(self) -> list[Observer]:
        """The bench's tracers (`toolbench.otel`), told of this invocation's rounds and calls."""
        return self._services.observers

    @property
    def blocked(self) -> str | None:
        """Why no more calls start (a call whose outcome is unknown), or None."""
        return self._calls.blocked

    # persistence --------------------------------------------------------------------------
    @classmethod
    def create(cls, services: CallServices, snapshot: Snapshot, profile: Profile,
               state: InvocationState) -> Invocation:
        """A new invocation, its profile and snapshot saved beside its run log."""
        inv = cls(services, snapshot, profile, state)
        folder = services.store.invocation_folder(snapshot.id)
        write_runtime_file(services.workspace, f"{folder}/{PROFILE_NAME}", encode_text(profile.to_json_text()),
                           durable=False)
        write_runtime_file(services.workspace, f"{folder}/{SNAPSHOT_NAME}", encode_text(dumps(snapshot.to_json())),
                           durable=False)
        return inv

    @classmethod
    def reopen(cls, services: CallServices, invocation_id: str, state: InvocationState, *,
               profile: Profile) -> Invocation:
        """The invocation from its files, each read as a runtime file (`runtime_files`): a planted
        one (a FIFO, a link out, too large) is its storage.* error, a corrupt one its own code.
        `profile` stands in for a profile file that is missing (an older record)."""
        folder = services.store.invocation_folder(invocation_id)
        snapshot_json = _read_json(services.workspace, f"{folder}/{SNAPSHOT_NAME}", SNAPSHOT_MAX_BYTES,
                                   "tool.snapshot_invalid")
        if snapshot_json is None:
            raise ToolbenchError("bench.misuse", f"no invocation `{invocation_id}` in {services.workspace}")
        snapshot = Snapshot.from_json(snapshot_json)
        entries = RunLog(services.workspace, folder).read()
        calls = [e for e in entries if "record" in e]  # the others hold the published output
        records = [CallRecord.from_json(e["record"]) for e in calls]
        gate = GateState.from_json(calls[-1]["gate"]) if calls else GateState()
        blocked = next((e["blocked"] for e in reversed(calls) if e.get("blocked")), None)
        stored = _stored_profile(services.workspace, f"{folder}/{PROFILE_NAME}")
        inv = cls(services, snapshot, profile if stored is None else stored, state, records=records, gate=gate,
                  blocked=blocked, turns=read_turns(entries))
        inv._round = max(inv._round, services.store.recover(invocation_id, record_files(invocation_id, calls)))
        output = published_output(entries)
        if output is not None:
            inv.state.output = inv._logged_output = output
        return inv

    # reading ------------------------------------------------------------------------------
    @property
    def records(self) -> list[CallRecord]:
        return list(self._calls.records)

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
        return [dict(t) for t in self.state.get(TODOS)]

    def budget(self) -> dict[str, Any]:
        """Calls left: in total, and per call name for tools with their own limit."""
        gate = self._calls.gate
        per_tool = {
            b.call_name: b.max_calls - gate.calls_per_tool.get(str(b.tool_id), 0)
            for b in self.snapshot.bindings if b.max_calls is not None
        }
        return {"total": self.snapshot.max_calls_per_invocation - gate.total_calls, "per_tool": per_tool}

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per call, in the order the calls were answered; `via` is the call id of the
        call that made a nested call (the shell bridge), None for the model's own calls."""
        import pandas

        columns = ["round", "call_id", "call_name", "tool_id", "arguments", "is_error", "error_code",
                   "elapsed_ms", "content_chars", "externalized", "via"]
        return pandas.DataFrame([r.row() for r in self._calls.records], columns=columns)

    # what a provider sees (provider_face.py) ----------------------------------------------
    def transcript(self, protocol: str | Provider, *, rounds: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """The calls and results as that provider's message history, every call paired
        (`rounds`: only those round numbers; a run sends its own rounds).

        A round that came from `respond` with this protocol is replayed with its assistant turn
        as the provider sent it (thinking blocks, reasoning items, thought signatures, text).
        Attachments go in as that provider's API takes them (read from their files), and each
        result's text lists them (`render_result` shows one result per provider)."""
        return self._face.transcript(self._calls.records, protocol, rounds)

    def render_result(self, result: ToolResult | str, protocol: str | Provider | None = None) -> Any:
        """What the model gets for one call's result (a `ToolResult` of this invocation, or its
        call id), as `transcript` sends it: that provider's result element when `protocol` is
        given, else `{protocol: element}` for every provider. Shows which attachments each API
        takes; `toolbench.protocols.abridge` shortens the base64 data for display."""
        return self._face.render_result(self._calls.records, result, protocol, self.id)

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
                       contract: TurnContract | None) -> tuple[int, Sequence[Call], Turn | None]:
        self._check_open()
        turn = self._apply(contract)
        with self._lock:  # the seed names the round the calls get, whatever runs beside
            round_no, calls = self._face.decode(protocol, response, id_seed=f"{self.id}_{self._round + 1}",
                                                take_round=self._next_round)
        return round_no, calls, turn

    # a model in the loop (runtime/run.py) ---------------------------------------------------
    def run(self, model: Model, prompt: str, *, system: str | None = None, max_rounds: int | None = None,
            contract: TurnContract | None = None, on_round: Callable[[Run, RunRound], Any] | None = None,
            stream: bool = False, on_delta: Callable[[StreamDelta], Any] | None = None) -> Run:
        """Let `model` (a `toolbench.models` adapter) drive this invocation from `prompt`: each
        answer's calls run as one round, their results go back, until the model answers without
        calls, a completion tool ends the task, `max_rounds` (default `profile.run.max_rounds`)
        or the call budget runs out, or the provider errs (`Run.error`; never raised).
        `on_round(run, round)` is called after each round, on the bench loop's thread.
        `stream=True` streams each answer (the SDK's streaming API) and `on_delta(delta)`
        sees its text and call arguments as they arrive (`StreamDelta`); the calls run once the
        answer is complete, and a cut or broken stream ends the run with a `model.stream_*` code,
        none of its calls run."""
        return self._services.loop.run(self.arun(model, prompt, system=system, max_rounds=max_rounds,
                                               contract=contract, on_round=on_round, stream=stream,
                                               on_delta=on_delta))

    async def arun(self, model: Model, prompt: str, *, system: str | None = None, max_rounds: int | None = None,
                   contract: TurnContract | None = None, on_round: Callable[[Run, RunRound], Any] | None = None,
                   stream: bool = False, on_delta: Callable[[StreamDelta], Any] | None = None) -> Run:
        self._check_open()
        return await run_model(self, self._log, model, prompt, system=system, max_rounds=max_rounds,
                               contract=contract, on_round=on_round, stream=stream, on_delta=on_delta)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start a coroutine (`arun`, `aturn`, ...) on the bench loop, where this invocation's
        async work runs, and return its future at once: a UI drives a run this way without
        blocking. Cancelling the future cancels the coroutine, but returns before it has
        unwound (its cancelled call recorded, its log line written): to wait for that, cancel
        the task from inside the coroutine, as the chat panel does."""
        return self._services.loop.submit(coro)

    @property
    def runs(self) -> list[Run]:
        """The runs of this invocation, read back from its run log (after a reopen too)."""
        return read_runs(self, self._log.read())

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
            steps = self._calls
            return [steps.run(steps.begin(round_no, *self._unpack(c), last=i == len(calls) - 1, turn=turn))
                    for i, c in enumerate(calls)]
        finally:
            self._end_round(round_no)

    async def aturn(self, calls: Sequence[Call], *, contract: TurnContract | None = None) -> list[ToolResult]:
        turn = self._apply(contract)
        return await self._aturn_in(self._next_round(), calls, turn)

    async def _aturn_in(self, round_no: int, calls: Sequence[Call], turn: Turn | None) -> list[ToolResult]:
        try:
            steps = self._calls
            return [await steps.arun(steps.begin(round_no, *self._unpack(c), last=i == len(calls) - 1, turn=turn))
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
        if self._calls.closed or self._services.closed():
            return  # nothing runs any more (and the bench loop must not start again)
        self._calls.cancel()

    def _end_round(self, round_no: int) -> None:
        """Run the offered tools' round-end hooks (the shell's auto-publish), and log the
        published output if it changed."""
        for hook in self._round_hooks:
            hook(self.state, round_no, self.snapshot.scene)
        output = self.state.output
        if output is not self._logged_output and output is not None:
            with self._lock:
                self._log.append(output_entry(self._logged_output, output))
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
        if self._calls.closed or self._services.closed():
            raise ToolbenchError("bench.closed", "this invocation's workbench is closed; open a new Workbench"
                                 if self._services.closed() else "this invocation is closed; start a new one")

    def _next_round(self) -> int:
        self._check_open()  # every way of calling takes a round first: nothing runs on a closed bench
        with self._lock:
            self._round += 1
            return self._round

    def close(self) -> None:
        self._calls.closed = True
        self._log.close()


def _stored_profile(workspace: Path, name: str) -> Profile | None:
    """The profile file `name` an invocation was made with, None when it is missing."""
    raw = read_runtime_file(workspace, name, limit=PROFILE_MAX_BYTES)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolbenchError("agent.profile_invalid", f"{name} is not UTF-8 text") from None
    return Profile.from_text(text, name)


def _read_json(workspace: Path, name: str, limit: int, code: str) -> Any:
    """The JSON value of the runtime file `name`, None when it is missing; `code` when it is not JSON."""
    raw = read_runtime_file(workspace, name, limit=limit)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the parser
        raise ToolbenchError(code, f"{name} is not JSON") from None
