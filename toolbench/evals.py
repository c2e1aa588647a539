"""Evals: cases of a prompt and what should happen, run against models, several times each.

    from toolbench import evals

    cases = [
        evals.Case("reads the notes", "What do my notes say?",
                   expect=[evals.called("workspace_read_file", path="work/notes.md"),
                           evals.final_contains("dragon")]),
        evals.Case("small talk needs no tool", "Hi!", expect=[evals.no_calls()]),
    ]
    report = evals.run(bench, cases, {"gpt": OpenAIChat(client, "gpt-4.1")}, repeat=3)
    report.pass_rates()        # a DataFrame: one row per case, one column per model
    report.assert_pass_rate(0.9)   # in a pytest test: fails with every failed expectation

Each attempt is one `inv.run` in a fresh invocation of the bench (closed after; its records
stay), so it sees the same snapshot the workbench shows; an attempt the provider failed
(`stop_reason="provider_error"`) fails, whatever its expectations. A model may be given as a
zero-argument factory (a fresh `ScriptedModel` per attempt, for instance). An expectation is
any callable `(run) -> str | None`: the text of what went wrong, or None when it held; the
ones here cover the common checks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import importlib.util
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .core.errors import ToolbenchError, check_positive_int
from .models import Model
from .progress import Progress
from .runtime.in_flight import check_concurrency, check_executor, run_bounded
from .runtime.recipe import BenchRecipe
from .runtime.run import token_counts

if TYPE_CHECKING:
    import pandas

    from .runtime.bench import Workbench
    from .runtime.invocation import Invocation
    from .runtime.run import Run, RunCall

Expectation = Callable[["Run"], "str | None"]


@dataclass(frozen=True)
class Case:
    """A prompt and what should happen when a model answers it."""

    name: str
    prompt: str
    expect: Sequence[Expectation] = ()
    system: str | None = None
    max_rounds: int | None = None
    # "copy": each attempt runs in its own copy of the workspace (a bench built from this one's
    # recipe, its MCP servers started again; removed after), for cases whose tools write.
    workspace: Literal["shared", "copy"] = "shared"


@dataclass(frozen=True)
class Attempt:
    """One run of one case by one model, and the expectations it failed (empty: passed).

    `run` is None for an attempt read back from a saved report (`Report.load`): its figures
    are kept, its rounds are not."""

    case: str
    model: str
    attempt: int
    run: Run | None
    failures: tuple[str, ...]
    stop_reason: str | None = None
    calls: tuple[str, ...] = ()
    rounds: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    seconds: float | None = None  # the attempt's wall time, from its start on the bench loop
    error_code: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures

    @classmethod
    def of(cls, case: str, model: str, attempt: int, run: Run, failures: tuple[str, ...],
           seconds: float | None = None) -> Attempt:
        tokens_in, tokens_out = token_counts(run.usage)
        return cls(case, model, attempt, run, failures, run.stop_reason, tuple(c.call_name for c in run.calls),
                   len(run.rounds), tokens_in, tokens_out, seconds, run.error.code if run.error else None)


# A report's table: its columns in order, as `to_dataframe` gives them and a saved report holds them.
COLUMNS = ("case", "model", "attempt", "passed", "failures", "stop_reason", "calls", "rounds", "tool_calls",
           "input_tokens", "output_tokens", "seconds", "error_code")


@dataclass(frozen=True)
class Report:
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per attempt: case, model, attempt, passed, failures, stop reason, calls (the
        call names), rounds, tool_calls (their count), tokens in and out (None when the
        provider gave no usage), seconds, error_code (a provider failure's)."""
        import pandas

        rows = [{"case": a.case, "model": a.model, "attempt": a.attempt, "passed": a.passed,
                 "failures": "; ".join(a.failures), "stop_reason": a.stop_reason, "calls": ", ".join(a.calls),
                 "rounds": a.rounds, "tool_calls": len(a.calls), "input_tokens": a.input_tokens,
                 "output_tokens": a.output_tokens, "seconds": a.seconds, "error_code": a.error_code}
                for a in self.attempts]
        frame = pandas.DataFrame(rows, columns=list(COLUMNS))
        return frame.astype({"input_tokens": "Int64", "output_tokens": "Int64", "seconds": "Float64"})

    def save(self, path: str | Path) -> Path:
        """Write the report's table as Parquet (pyarrow), for `Report.load` and other tools."""
        target = Path(path)
        try:
            self.to_dataframe().to_parquet(target, index=False)
        except ImportError as exc:
            raise ToolbenchError("bench.misuse", f"saving a report needs pyarrow: pip install "
                                 f"'toolbench[reports]' ({exc})") from None
        return target

    @classmethod
    def load(cls, path: str | Path) -> Report:
        """A report saved by `save` (its attempts without their runs: `Attempt.run` is None)."""
        import pandas

        try:
            frame = pandas.read_parquet(Path(path))
        except ImportError as exc:
            raise ToolbenchError("bench.misuse", f"reading a report needs pyarrow: pip install "
                                 f"'toolbench[reports]' ({exc})") from None
        except (OSError, ValueError) as exc:
            raise ToolbenchError("bench.misuse", f"`{path}` is not a saved report: {exc}") from None
        missing = [c for c in COLUMNS if c not in frame.columns]
        if missing:
            raise ToolbenchError("bench.misuse", f"`{path}` is not a saved report: no column {', '.join(missing)}")

        def value(x: Any) -> Any:
            return None if pandas.isna(x) else x

        attempts = tuple(Attempt(
            str(row.case), str(row.model), int(row.attempt), None,
            tuple(f for f in str(row.failures).split("; ") if f) if not row.passed else (),
            value(row.stop_reason), tuple(c for c in str(row.calls).split(", ") if c), int(row.rounds),
            None if value(row.input_tokens) is None else int(row.input_tokens),
            None if value(row.output_tokens) is None else int(row.output_tokens),
            None if value(row.seconds) is None else float(row.seconds), value(row.error_code))
            for row in frame.itertuples(index=False))
        return cls(attempts)

    def compare(self, other: Report) -> pandas.DataFrame:
        """Pass rates of this report (`before`) against `other` (`after`), one row per case and
        model either has: `change` (after - before, NaN where one side lacks it) and `flipped`
        (it passed every attempt on one side and not on the other), in this report's order."""
        import pandas

        def rates(report: Report) -> dict[tuple[str, str], float]:
            return {key: sum(a.passed for a in group) / len(group) for key, group in _groups(report.attempts).items()}

        before, after = rates(self), rates(other)
        keys = list(before) + [k for k in after if k not in before]
        rows = []
        for case, model in keys:
            b, a = before.get((case, model)), after.get((case, model))
            rows.append({"case": case, "model": model, "before": b, "after": a,
                         "change": None if a is None or b is None else a - b,
                         "flipped": a is not None and b is not None and (a == 1.0) != (b == 1.0)})
        return pandas.DataFrame(rows, columns=["case", "model", "before", "after", "change", "flipped"]).astype(
            {"before": "Float64", "after": "Float64", "change": "Float64"})

    def pass_rates(self) -> pandas.DataFrame:
        """The share of attempts that passed, one row per case and one column per model (in the
        order they were given)."""
        frame = self.to_dataframe()
        rates = frame.pivot_table(index="case", columns="model", values="passed", aggfunc="mean", sort=False)
        rates.columns.name = None
        return rates.astype(float)

    @property
    def failed(self) -> list[Attempt]:
        return [a for a in self.attempts if not a.passed]

    def assert_pass_rate(self, minimum: float = 1.0) -> None:
        """Raise AssertionError naming every (case, model) whose pass rate is below `minimum`,
        with the failures of its attempts (for a pytest test in CI)."""
        low = []
        for (case, model), group in _groups(self.attempts).items():
            rate = sum(a.passed for a in group) / len(group)
            if rate < minimum:
                why = "".join(f"\n    attempt {a.attempt}: {'; '.join(a.failures)}" for a in group if a.failures)
                low.append(f"{case} / {model}: {rate:.0%} passed (< {minimum:.0%}){why}")
        if low:
            raise AssertionError("evals below the pass rate:\n  " + "\n  ".join(low))

    def __repr__(self) -> str:
        passed = sum(a.passed for a in self.attempts)
        return f"Report({passed}/{len(self.attempts)} attempts passed)"


def _groups(attempts: Iterable[Attempt]) -> dict[tuple[str, str], list[Attempt]]:
    groups: dict[tuple[str, str], list[Attempt]] = {}
    for a in attempts:
        groups.setdefault((a.case, a.model), []).append(a)
    return groups


ModelSource = Model | Callable[[], Model]


@dataclass(frozen=True)
class _Slot:
    """One planned attempt: its place in the report is its place in the plan."""

    case: Case
    model: str
    source: ModelSource
    attempt: int


def run(bench: Workbench, cases: Sequence[Case], models: Mapping[str, ModelSource] | Sequence[ModelSource], *,
        repeat: int = 1, concurrency: int = 1, scene: Literal["chat", "session"] = "chat",
        progress: bool = False, executor: Literal["ray"] | None = None, per_model: int | None = None,
        requests_per_minute: float | None = None) -> Report:
    """Run every case `repeat` times against every model (a mapping of names to models, or a
    list named by each model's `model`), each attempt in a fresh invocation.

    `concurrency` attempts are in flight at once on the bench loop (a model's requests wait on
    its API, not on each other); the report is in plan order (case, model, attempt) whatever
    the order they finish in, so it is the sequential run's apart from timing. Rate limits are
    the SDK client's (its retries honour `Retry-After` on 429): give it `max_retries`; besides,
    `per_model` caps each model's requests in flight and `requests_per_minute` the requests each
    model starts in any minute (aiolimiter's leaky bucket). A model
    given as one object is shared by its attempts in flight: give a factory when it keeps state.
    `progress=True` shows a bar (attempts done, the running pass rate, failed, in flight).

    `executor="ray"` sends the attempts, `concurrency` at a time, to a Ray cluster's workers
    (runtime/on_ray.py): each builds a bench from this one and runs `concurrency` in flight, so
    the cluster has up to workers x `concurrency` requests out. The models must pickle (a
    factory that makes the SDK client, on the worker); the report is the in-process run's."""
    plan = _plan(cases, models, repeat)
    check_concurrency(concurrency)
    check_executor(executor)
    limits = _Limits.checked(per_model, requests_per_minute)
    bar = Progress(len(plan), progress, desc="attempts", unit="attempt")
    try:
        if executor is None:
            attempts = attempts_of(bench, plan, concurrency, scene, limits, bar.flying, lambda a: bar.done(a.passed))
        else:
            from .runtime import on_ray  # Ray loads only when asked for

            travelling = [(f"model `{name}`", source, "give a factory that makes its SDK client (a client holds "
                           "open connections): lambda: OpenAIChat(OpenAI(), ...)")
                          for name, source in {s.model: s.source for s in plan}.items()]
            attempts = on_ray.run_shards(
                bench, on_ray.chunks(plan, concurrency),
                functools.partial(attempts_of, concurrency=concurrency, scene=scene, limits=limits),
                lambda got, out: bar.done_many((a.passed for a in got), out), travelling,
                count=-(-len(plan) // concurrency))
    finally:
        bar.close()
    return Report(tuple(attempts))


def attempts_of(bench: Workbench, plan: Sequence[_Slot], concurrency: int, scene: Literal["chat", "session"] = "chat",
                limits: _Limits | None = None, flying: Callable[[int], None] | None = None,
                done: Callable[[Attempt], None] | None = None) -> list[Attempt]:
    """The planned attempts run on `bench`, `concurrency` in flight, in plan order, each model's
    requests through its gate (`limits`); `flying(+1 or -1)` and `done(attempt)` tell the
    progress bar (a cluster worker runs this with neither: its gates are its own)."""
    gates = _Gates(limits or _Limits())
    recipes: list[BenchRecipe] = []  # made when a case first asks for a copy, then built per attempt

    def home(slot: _Slot) -> Workbench:
        if slot.case.workspace == "shared":
            return bench
        if not recipes:
            recipes.append(BenchRecipe.of(bench))
        return recipes[0].build(beside=bench)

    def start(slot: _Slot) -> tuple[concurrent.futures.Future[tuple[Run, float]], tuple[_Slot, Workbench, Invocation]]:
        model = gates.gated(slot.model, slot.source if isinstance(slot.source, Model) else slot.source())
        where = home(slot)
        inv = where.invocation(scene)

        async def timed() -> tuple[Run, float]:  # timed on the loop: not the wait for a free slot
            began = time.perf_counter()
            result = await inv.arun(model, slot.case.prompt, system=slot.case.system, max_rounds=slot.case.max_rounds)
            return result, time.perf_counter() - began

        if flying is not None:
            flying(1)
        return inv.submit(timed()), (slot, where, inv)

    def judged(started: tuple[_Slot, Workbench, Invocation],
               future: concurrent.futures.Future[tuple[Run, float]]) -> Attempt | None:
        slot, where, inv = started
        inv.close()  # its records stay; its log is not held open for every attempt
        if where is not bench:
            where.close()  # a copy's files and records go with it
        if flying is not None:
            flying(-1)
        if future.cancelled():
            return None
        attempt = _judged(slot, *future.result())
        if done is not None:
            done(attempt)
        return attempt

    return [a for a in run_bounded(plan, start, judged, concurrency) if a is not None]


@dataclass(frozen=True)
class _Limits:
    per_model: int | None = None
    requests_per_minute: float | None = None

    @classmethod
    def checked(cls, per_model: int | None, requests_per_minute: float | None) -> _Limits:
        if per_model is not None:
            check_positive_int("per_model", per_model)
        rpm = requests_per_minute
        if rpm is None:
            return cls(per_model)
        if type(rpm) not in (int, float) or not 0 < rpm < float("inf"):
            raise ToolbenchError("bench.misuse", f"requests_per_minute is a positive number or None, not {rpm!r}")
        if importlib.util.find_spec("aiolimiter") is None:
            raise ToolbenchError("bench.misuse", "requests_per_minute needs aiolimiter: "
                                 "pip install 'toolbench[models]'")
        return cls(per_model, float(rpm))


class _Gates:
    """Each model name's gate for one run: a semaphore of `per_model` requests in flight and an
    aiolimiter bucket of `requests_per_minute`, made when a name is first seen, on the bench
    loop's side (attempts in workspace copies run on that loop too)."""

    def __init__(self, limits: _Limits) -> None:
        self._limits = limits
        self._gates: dict[str, tuple[Any, Any]] = {}

    def gated(self, name: str, model: Model) -> Model:
        if self._limits.per_model is None and self._limits.requests_per_minute is None:
            return model
        if name not in self._gates:
            rate = self._limits.requests_per_minute
            bucket = None
            if rate is not None:
                from aiolimiter import AsyncLimiter  # only a run that asks for a rate loads it

                bucket = AsyncLimiter(rate, 60)
            cap = self._limits.per_model
            self._gates[name] = (None if cap is None else asyncio.Semaphore(cap), bucket)
        return _Gated(model, *self._gates[name])


class _Gated:
    """`model` with each request waiting for its gate (the rate first, then a free slot)."""

    def __init__(self, model: Model, in_flight: asyncio.Semaphore | None, rate: Any) -> None:
        self._model, self._in_flight, self._rate = model, in_flight, rate

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        async with contextlib.AsyncExitStack() as gate:
            if self._rate is not None:
                await gate.enter_async_context(self._rate)
            if self._in_flight is not None:
                await gate.enter_async_context(self._in_flight)
            return await self._model.send(body)


def _plan(cases: Sequence[Case], models: Mapping[str, ModelSource] | Sequence[ModelSource],
          repeat: int) -> list[_Slot]:
    """Every attempt in report order, the arguments checked first."""
    check_positive_int("repeat", repeat)
    if isinstance(models, Mapping):
        named = dict(models)
    else:
        names = [_name(m) for m in models]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ToolbenchError("bench.misuse", f"two models are named {', '.join(twice)}; give them as a mapping "
                                 "of names to models")
        named = dict(zip(names, models, strict=True))
    for case in cases:
        if not isinstance(case, Case):
            raise ToolbenchError("bench.misuse", f"cases are evals.Case values, not {type(case).__name__}")
        if case.workspace not in ("shared", "copy"):
            raise ToolbenchError("bench.misuse", f"case {case.name!r}: workspace is 'shared' (its attempts share "
                                 f"the bench's files) or 'copy' (each its own), not {case.workspace!r}")
    return [_Slot(case, name, source, n) for case in cases for name, source in named.items()
            for n in range(1, repeat + 1)]


def _judged(slot: _Slot, result: Run, seconds: float | None = None) -> Attempt:
    failures = _provider_failure(result) or tuple(f for check in slot.case.expect if (f := check(result)))
    return Attempt.of(slot.case.name, slot.model, slot.attempt, result, failures, seconds)


def _provider_failure(r: Run) -> tuple[str, ...]:
    """An attempt the provider failed is failed, whatever its expectations (`no_calls` would
    pass a run that never got an answer)."""
    if r.stop_reason == "provider_error" and r.error is not None:
        return (f"the provider failed in round {r.error.round}: {r.error.code}: {r.error.message}",)
    return ()


def _name(model: ModelSource) -> str:
    return str(getattr(model, "model", None) or getattr(model, "__name__", None) or repr(model))


# --- expectations ------------------------------------------------------------------------------

def called(call_name: str, /, **arguments: Any) -> Expectation:
    """Some call to `call_name` that succeeded, with these arguments: each a value to equal, a
    compiled regex to search the value's text, or a predicate `(value) -> bool`. Arguments not
    named may be anything."""
    def check(r: Run) -> str | None:
        calls = [c for c in r.calls if c.call_name == call_name]
        if not calls:
            made = ", ".join(c.call_name for c in r.calls) or "none"
            return f"expected a call to {call_name} (calls made: {made})"
        if any(not c.result.is_error and _matches(c, arguments) for c in calls):
            return None
        got = "; ".join(f"{c.arguments!r}" + (f" -> {c.result.error_code}" if c.result.is_error else "")
                        for c in calls)
        return f"no successful {call_name} call with {_show(arguments)} (got {got})"
    return check


def not_called(*call_names: str) -> Expectation:
    """None of these tools were called."""
    def check(r: Run) -> str | None:
        hit = [c.call_name for c in r.calls if c.call_name in call_names]
        return f"unexpected call to {', '.join(hit)}" if hit else None
    return check


def no_calls() -> Expectation:
    """The model answered without any tool call."""
    def check(r: Run) -> str | None:
        return f"expected no calls, got {', '.join(c.call_name for c in r.calls)}" if r.calls else None
    return check


def calls_in_order(*call_names: str) -> Expectation:
    """These tools were called in this order (other calls may come between)."""
    def check(r: Run) -> str | None:
        made = iter(c.call_name for c in r.calls)
        if all(name in made for name in call_names):
            return None
        return f"expected calls in order {', '.join(call_names)}, got {', '.join(c.call_name for c in r.calls)}"
    return check


def final_contains(text: str, *, case_sensitive: bool = False) -> Expectation:
    """The final answer contains `text`."""
    def check(r: Run) -> str | None:
        final = r.final_text if case_sensitive else r.final_text.lower()
        if (text if case_sensitive else text.lower()) in final:
            return None
        return f"final text does not contain {text!r}: {r.final_text[:200]!r}"
    return check


def stopped(reason: str = "final") -> Expectation:
    """The run ended for this reason (default: the model gave a final answer)."""
    def check(r: Run) -> str | None:
        if r.stop_reason == reason:
            return None
        error = f" ({r.error.code}: {r.error.message})" if r.error else ""
        return f"run stopped with {r.stop_reason}{error}, not {reason}"
    return check


def max_calls(n: int) -> Expectation:
    """At most `n` tool calls."""
    def check(r: Run) -> str | None:
        return f"{len(r.calls)} calls, more than {n}" if len(r.calls) > n else None
    return check


def _matches(c: RunCall, expected: Mapping[str, Any]) -> bool:
    if not isinstance(c.arguments, dict):
        return not expected
    for key, want in expected.items():
        if key not in c.arguments:
            return False
        value = c.arguments[key]
        if isinstance(want, re.Pattern):
            if not want.search(str(value)):
                return False
        elif callable(want):
            if not want(value):
                return False
        elif value != want:
            return False
    return True


def _show(arguments: Mapping[str, Any]) -> str:
    if not arguments:
        return "any arguments"
    return ", ".join(f"{k}={v.pattern!r}" if isinstance(v, re.Pattern) else f"{k}={v!r}"
                     for k, v in arguments.items())


def parametrize(cases: Sequence[Case]) -> Any:
    """`@evals.parametrize(cases)` on a pytest test taking `case`: one test per case, named by it."""
    import pytest

    return pytest.mark.parametrize("case", list(cases), ids=[c.name for c in cases])


__all__ = ["Attempt", "Case", "Report", "called", "calls_in_order", "final_contains", "max_calls", "no_calls",
           "not_called", "parametrize", "run", "stopped"]
