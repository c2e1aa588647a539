"""A model in the loop: `inv.run(model, prompt)` sends, decodes, runs the calls as one round,
sends the results back, until the model answers without calls or a stop rule holds.

Each round's request and response bodies go to the invocation's run log as they happen, so a
run reopens with the invocation (`inv.runs`) and `bench.replay` can take it. What the provider
or its SDK reports (authentication, rate limits, timeouts, a refused request, a refusal, a body
that is not the provider's shape) ends the run with `stop_reason="provider_error"` and a coded
`Run.error`; it never raises.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError, check_positive_int
from ..core.results import ToolResult
from ..core.turn import TurnContract
from ..models import Model, ModelError, StreamingModel, assemble, provider_error, reader_for, stream_assembly
from ..protocols.types import StreamDelta
from .observers import around_round

if TYPE_CHECKING:
    import pandas

    from .invocation import Invocation
    from .records import RunLog

# Why a run ended (api.md): the model answered without calls; a completion tool ended the task;
# the rounds or the call budget ran out; the provider erred; the invocation is blocked (an
# outcome is unknown); the user stopped it; the run raised (not for what a provider sends: for a
# storage failure, a closed bench, a bug; `Run.error` names it in the log); the answer hit the
# token limit with no call in it (`length`: its text is the final text, its usage kept).
STOP_REASONS = ("final", "completion_tool", "max_rounds", "budget", "provider_error", "blocked", "stopped",
                "error", "length")


@dataclass(frozen=True, slots=True)
class RunError:
    """What ended a run with `provider_error`: the code, the provider's text, the run round."""

    code: str
    message: str
    round: int
    status: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "round": self.round, "status": self.status}


@dataclass(frozen=True, slots=True)
class RunCall:
    """One call of a round as the model sent it: `arguments` is the decoded object, or the raw
    text when it was not valid JSON."""

    call_id: str
    call_name: str
    arguments: Any
    result: ToolResult


@dataclass(frozen=True, slots=True)
class RunRound:
    """One request and its answer. `results` are the calls' results in order (none for a final
    answer); `invocation_round` is the round number the calls ran as in the invocation."""

    index: int
    request: dict[str, Any]
    response: dict[str, Any] | None
    results: tuple[ToolResult, ...] = ()
    invocation_round: int | None = None
    text: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    finish: str | None = None
    error: RunError | None = None
    elapsed_ms: float = 0.0
    calls: tuple[RunCall, ...] = ()


@dataclass
class Run:
    """A model's run over one invocation (`inv.run`); `inv.runs` reads them back from the log."""

    id: str
    protocol: str
    model: str
    prompt: str
    system: str | None = None
    rounds: list[RunRound] = field(default_factory=list)
    stop_reason: str | None = None  # None while running
    final_text: str = ""
    error: RunError | None = None

    @property
    def usage(self) -> dict[str, Any]:
        """The tokens of every round added up, under the provider's own names."""
        total: dict[str, Any] = {}
        for r in self.rounds:
            _add(total, r.usage)
        return total

    @property
    def results(self) -> list[ToolResult]:
        return [res for r in self.rounds for res in r.results]

    @property
    def calls(self) -> list[RunCall]:
        """Every call the model made, in order, with its arguments and result."""
        return [c for r in self.rounds for c in r.calls]

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per call (a round without calls: one row with its text), in order."""
        import pandas

        rows = []
        for r in self.rounds:
            base = {"round": r.index, "invocation_round": r.invocation_round, "finish": r.finish,
                    "text": r.text, "error_code": r.error.code if r.error else None}
            if not r.results:
                rows.append({**base, "call_id": None, "tool_id": None, "is_error": r.error is not None,
                             "content_chars": 0})
            for res in r.results:
                rows.append({**base, "call_id": res.call_id, "tool_id": res.tool_id, "is_error": res.is_error,
                             "error_code": res.error_code, "content_chars": len(res.content)})
        columns = ["round", "invocation_round", "call_id", "tool_id", "is_error", "error_code", "content_chars",
                   "finish", "text"]
        return pandas.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        state = self.stop_reason or "running"
        return f"Run({self.id!r}, {self.model!r}, {len(self.rounds)} rounds, {state})"


async def run_model(inv: Invocation, log: RunLog, model: Model, prompt: str, *, system: str | None = None,
                    max_rounds: int | None = None, contract: TurnContract | None = None,
                    on_round: Callable[[Run, RunRound], Any] | None = None, stream: bool = False,
                    on_delta: Callable[[StreamDelta], Any] | None = None) -> Run:
    """The loop of `inv.arun` (see the module docstring); `log` is the invocation's run log.
    `stream=True` sends each round streamed (`StreamingModel.stream`) and puts the answer back
    together with its provider's `stream_assembly()`; `on_delta(delta)` sees each piece of text
    and call arguments as it arrives (`StreamDelta`, with its run round). A round's calls run
    once its answer is complete."""
    if not isinstance(model, Model):
        raise ToolbenchError("bench.misuse", f"a run needs a toolbench.models adapter (or a Model), not "
                             f"{type(model).__name__}")
    if not isinstance(prompt, str):
        raise ToolbenchError("bench.misuse", f"the prompt is a str, not {type(prompt).__name__}")
    limit = check_positive_int("max_rounds", inv.profile.run.max_rounds if max_rounds is None else max_rounds)
    protocol = model.protocol
    if stream and not (isinstance(model, StreamingModel) and stream_assembly(protocol) is not None):
        raise ToolbenchError("bench.misuse", f"{model!r} cannot stream: a streamed run needs a model with "
                             f"`stream(body)` and a provider ({protocol}) with `stream_assembly`")
    tools = inv.snapshot.render(protocol, contract=contract)
    choice = None if contract is None else inv.snapshot.tool_choice(protocol, contract)
    if contract is not None and choice is None:
        tools = []  # none/auto with no tools: neither tools nor a choice go out
    run = Run(_next_id(inv, log), protocol, model.model, prompt, system)
    log.append({"run": run.id, "start": {"protocol": protocol, "model": model.model, "prompt": prompt,
                                         "system": system, **({"stream": True} if stream else {})}})
    opening = [model.user_message(prompt)]
    ran: list[int] = []  # the invocation rounds this run's calls ran as
    try:
        for index in range(1, limit + 1):
            deltas = None if on_delta is None else functools.partial(_delta, on_delta, index)
            with around_round(inv.observers, run, index):  # a tracer's span holds the request and its calls
                done = await _round(inv, log, run, model, index, opening, ran, tools, choice, system, contract,
                                    stream, deltas)
            if on_round is not None:
                on_round(run, run.rounds[-1])
            if done:
                break
        else:
            run.stop_reason = "max_rounds"
    except asyncio.CancelledError:
        run.stop_reason = "stopped"
        raise
    except BaseException as exc:  # a storage failure, a closed bench, a model adapter's own bug: raised
        run.stop_reason = "error"
        code = getattr(exc, "code", None)
        run.error = RunError(code if isinstance(code, str) else type(exc).__name__, str(exc), len(run.rounds) + 1)
        raise
    finally:
        log.append({"run": run.id, "end": {"stop_reason": run.stop_reason or "stopped", "final_text": run.final_text,
                                           "error": run.error.to_json() if run.error else None}})
    return run


def token_counts(usage: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Tokens in and out, whatever the provider calls them (None when it says nothing)."""
    def first(*keys: str) -> int | None:
        counts = (usage.get(k) for k in keys)
        return next((n for n in counts if isinstance(n, int) and not isinstance(n, bool)), None)

    return (first("prompt_tokens", "input_tokens", "promptTokenCount"),
            first("completion_tokens", "output_tokens", "candidatesTokenCount"))


# Run numbers per invocation: counted from its log once (a reopened invocation goes on after
# its last run), then in memory, so two runs started at once get different ids.
_numbers: weakref.WeakKeyDictionary[Invocation, Iterator[int]] = weakref.WeakKeyDictionary()
_numbers_lock = threading.Lock()


def _next_id(inv: Invocation, log: RunLog) -> str:
    with _numbers_lock:
        numbers = _numbers.get(inv)
        if numbers is None:
            started = sum(1 for e in log.read() if "start" in e and "run" in e)
            numbers = _numbers[inv] = itertools.count(started + 1)
        return f"{inv.id}_run{next(numbers)}"


async def _round(inv: Invocation, log: RunLog, run: Run, model: Model, index: int, opening: list[dict[str, Any]],
                 ran: list[int], tools: Sequence[Mapping[str, Any]], choice: Any, system: str | None,
                 contract: TurnContract | None, stream: bool, on_delta: Callable[[StreamDelta], Any] | None) -> bool:
    """One request and its calls; True when the run ends here."""
    messages = opening + inv.transcript(model.protocol, rounds=ran)
    body = model.request(system=system, messages=messages, tools=tools, tool_choice=choice)
    started = time.perf_counter()
    response: dict[str, Any] | None = None
    try:
        try:
            if stream:
                assembly = stream_assembly(model.protocol)
                assert assembly is not None and isinstance(model, StreamingModel)  # checked when the run began
                response = await assemble(model.stream(body), assembly, on_delta=on_delta)
            else:
                response = await model.send(body)
        except ModelError as exc:
            response = exc.partial  # a cut stream's answer, kept for the log; none of it runs
            raise
        except (ToolbenchError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a Model of the user's own that lets its client's errors out
            raise provider_error(exc) from exc
        reply = model.read(response)
        results = await inv.arespond(model.protocol, response, contract=contract)
    except ToolbenchError as exc:  # the SDK's errors (ModelError), and decode's model.* codes
        if not exc.code.startswith("model."):
            raise
        # What the answer held is kept on every round that has one: a refused or cut answer's
        # usage is billed all the same.
        said = model.read(response) if isinstance(response, dict) else None
        text, usage, finish = (said.text, said.usage, said.finish) if said else ("", {}, None)
        if exc.code == "model.output_truncated" and getattr(exc, "calls", True) is False:  # no call was cut
            _append(log, run, RunRound(index, body, response, (), None, text, usage, finish, elapsed_ms=_ms(started)))
            run.stop_reason, run.final_text = "length", text
            return True
        error = RunError(exc.code, exc.message, index, getattr(exc, "status", None))
        _append(log, run, RunRound(index, body, response, (), None, text, usage, finish, error, _ms(started)))
        run.stop_reason, run.error = "provider_error", error
        return True
    calls = _calls_of(inv, results)
    round_no = calls[0][0] if calls else None
    if round_no is not None:
        ran.append(round_no)
    _append(log, run, RunRound(index, body, response, tuple(results), round_no, reply.text, reply.usage,
                               reply.finish, elapsed_ms=_ms(started), calls=tuple(c for _, c in calls)))
    if not results:
        run.stop_reason, run.final_text = "final", reply.text
    elif inv.blocked is not None:
        run.stop_reason = "blocked"
    elif any(_completes(inv, r) for r in results):
        run.stop_reason, run.final_text = "completion_tool", reply.text
    elif any(r.error_code == "agent.max_tool_rounds_exceeded" for r in results):
        run.stop_reason = "max_rounds"
    elif inv.budget()["total"] <= 0:
        run.stop_reason = "budget"
    else:
        return False
    return True


def _delta(on_delta: Callable[[StreamDelta], Any], index: int, delta: StreamDelta) -> None:
    on_delta(dataclasses.replace(delta, round=index))


def _append(log: RunLog, run: Run, r: RunRound) -> None:
    previous = run.rounds[-1].request if run.rounds else None
    run.rounds.append(r)
    log.append({"run": run.id, "round": {
        "index": r.index, "request": _compact(r.request, previous), "response": r.response,
        "invocation_round": r.invocation_round, "call_ids": [res.call_id for res in r.results],
        "error": r.error.to_json() if r.error else None, "elapsed_ms": r.elapsed_ms}})


# Each request repeats the tools and the whole conversation so far: the log keeps what a list
# adds to the same list of the round before, so a run's log grows with the run, not its square.
_EXTENDS = "$extends"


def _compact(body: dict[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in body.items():
        before = previous.get(key) if previous is not None else None
        if isinstance(value, list) and isinstance(before, list) and value[:len(before)] == before:
            out[key] = {_EXTENDS: len(before), "tail": value[len(before):]}
        else:
            out[key] = value
    return out


def _expand(stored: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in stored.items():
        before = previous.get(key) if previous is not None else None
        if isinstance(value, Mapping) and set(value) == {_EXTENDS, "tail"} and isinstance(before, list):
            out[key] = before[:value[_EXTENDS]] + list(value["tail"])
        else:
            out[key] = value
    return out


def _calls_of(inv: Invocation, results: Sequence[ToolResult]) -> list[tuple[int, RunCall]]:
    """The records of these results (the newest records first: the round was just recorded)."""
    wanted = {id(r) for r in results}
    found: dict[int, tuple[int, RunCall]] = {}
    for record in reversed(inv.records):
        if id(record.result) in wanted:
            found[id(record.result)] = (record.round, _call(record))
            if len(found) == len(wanted):
                break
    return [found[id(r)] for r in results if id(r) in found]


def _call(record: Any) -> RunCall:
    args = record.arguments
    return RunCall(record.call_id, record.call_name, args.value if args.is_valid else args.raw, record.result)


def _completes(inv: Invocation, result: ToolResult) -> bool:
    if result.is_error or result.tool_id is None:
        return False
    binding = next((b for b in inv.snapshot.bindings if str(b.tool_id) == result.tool_id), None)
    return binding is not None and binding.descriptor.completes_round


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _add(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    for key, value in usage.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            total[key] = total.get(key, 0) + value
        elif isinstance(value, Mapping):
            _add(total.setdefault(key, {}), value)


def read_runs(inv: Invocation, entries: Sequence[Mapping[str, Any]]) -> list[Run]:
    """The runs a run log holds, with their rounds' results from the invocation's records
    (a model is not needed: text, usage and finish are read again by the protocol's reader)."""
    by_key: dict[tuple[Any, Any], Any] = {(r.round, r.call_id): r for r in inv.records if r.via is None}
    runs: dict[str, Run] = {}
    for entry in entries:
        run_id = entry.get("run")
        if not isinstance(run_id, str):
            continue
        if isinstance(start := entry.get("start"), Mapping):
            runs[run_id] = Run(run_id, str(start.get("protocol")), str(start.get("model")), str(start.get("prompt")),
                               start.get("system"))
        run = runs.get(run_id)
        if run is None:
            continue
        if isinstance(r := entry.get("round"), Mapping):
            response = r.get("response")
            reply = reader_for(run.protocol)(response) if isinstance(response, Mapping) else None
            n = r.get("invocation_round")
            calls = tuple(_call(rec) for cid in r.get("call_ids") or () if (rec := by_key.get((n, cid))) is not None)
            error = r.get("error")
            previous = run.rounds[-1].request if run.rounds else None
            run.rounds.append(RunRound(
                int(r.get("index") or len(run.rounds) + 1), _expand(r.get("request") or {}, previous),
                dict(response) if isinstance(response, Mapping) else None, tuple(c.result for c in calls), n,
                reply.text if reply else "", reply.usage if reply else {}, reply.finish if reply else None,
                RunError(**error) if isinstance(error, Mapping) else None, float(r.get("elapsed_ms") or 0), calls))
        if isinstance(end := entry.get("end"), Mapping):
            run.stop_reason, run.final_text = end.get("stop_reason"), str(end.get("final_text") or "")
            error = end.get("error")
            run.error = RunError(**error) if isinstance(error, Mapping) else None
    return list(runs.values())
