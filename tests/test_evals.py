"""toolbench.evals: cases against models, pass rates, and the pytest helpers."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, Workbench, evals
from toolbench.testing import ScriptedModel

TOOLS = ["builtin:dice.roll", "builtin:workspace.read_file", "builtin:workspace.list_files"]


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    b = Workbench(tmp_path, Profile.default().edit(allow=TOOLS), seed=3)
    (b.workspace / "work").mkdir(exist_ok=True)
    (b.workspace / "work" / "notes.md").write_text("a dragon sleeps here\n", encoding="utf-8")
    yield b
    b.close()


READS = evals.Case("reads the notes", "What do my notes say?",
                   expect=[evals.called("workspace_read_file", path="work/notes.md"), evals.final_contains("Dragon")])
CHATS = evals.Case("small talk needs no tool", "Hi!", expect=[evals.no_calls(), evals.stopped("final")])


def good() -> ScriptedModel:
    return ScriptedModel([[("workspace_read_file", {"path": "work/notes.md"})], "A dragon sleeps there."])


def lazy() -> ScriptedModel:
    return ScriptedModel(["I think it is about a dragon."])


def test_pass_rates_per_case_and_model(bench: Workbench) -> None:
    flaky = itertools.cycle([good, lazy])  # passes every other attempt
    report = evals.run(bench, [READS], {"good": good, "lazy": lazy, "flaky": lambda: next(flaky)()}, repeat=4)
    rates = report.pass_rates()
    assert list(rates.columns) == ["good", "lazy", "flaky"]
    assert rates.loc["reads the notes"].to_dict() == {"good": 1.0, "lazy": 0.0, "flaky": 0.5}
    frame = report.to_dataframe()
    assert len(frame) == 12 and set(frame["stop_reason"]) == {"final"}
    lazy_row = frame[frame["model"] == "lazy"].iloc[0]
    assert "expected a call to workspace_read_file (calls made: none)" in lazy_row["failures"]
    assert repr(report) == "Report(6/12 attempts passed)"


def test_each_attempt_runs_in_a_fresh_invocation(bench: Workbench) -> None:
    report = evals.run(bench, [READS, READS], [good], repeat=2)
    ids = {a.run.id.rsplit("_run", 1)[0] for a in report.attempts}
    assert len(ids) == 4


def test_assert_pass_rate_names_what_failed(bench: Workbench) -> None:
    report = evals.run(bench, [READS, CHATS], {"lazy": lazy, "good": good})
    with pytest.raises(AssertionError) as caught:
        report.assert_pass_rate(1.0)
    text = str(caught.value)
    assert "reads the notes / lazy: 0% passed" in text
    assert "small talk needs no tool / good: 0% passed" in text and "expected no calls, got workspace_read_file" in text
    assert "reads the notes / good" not in text
    evals.run(bench, [READS], {"good": good}).assert_pass_rate(1.0)


@pytest.mark.parametrize(("expectation", "message"), [
    (evals.called("workspace_read_file", path="work/other.md"),
     "no successful workspace_read_file call with path='work/other.md'"),
    (evals.called("workspace_read_file", path=re.compile(r"notes\.md$")), None),
    (evals.called("workspace_read_file", path=lambda p: p.startswith("work/")), None),
    (evals.called("dice_roll"), "expected a call to dice_roll (calls made: workspace_read_file)"),
    (evals.not_called("workspace_read_file"), "unexpected call to workspace_read_file"),
    (evals.not_called("dice_roll"), None),
    (evals.calls_in_order("workspace_read_file"), None),
    (evals.calls_in_order("dice_roll", "workspace_read_file"), "expected calls in order dice_roll"),
    (evals.final_contains("dragon"), None),
    (evals.final_contains("Dragon", case_sensitive=True), "final text does not contain 'Dragon'"),
    (evals.max_calls(0), "1 calls, more than 0"),
    (evals.stopped("max_rounds"), "run stopped with final, not max_rounds"),
])
def test_expectations(bench: Workbench, expectation: evals.Expectation, message: str | None) -> None:
    run = bench.invocation().run(good(), "go")
    failure = expectation(run)
    assert (failure is None) if message is None else (failure is not None and failure.startswith(message)), failure


def test_a_failed_call_does_not_count_as_called(bench: Workbench) -> None:
    model = ScriptedModel([[("workspace_read_file", {"path": "work/missing.md"})], "none"])
    failure = evals.called("workspace_read_file")(bench.invocation().run(model, "go"))
    assert failure is not None and "workspace.file_not_found" in failure


def test_misuse(bench: Workbench) -> None:
    with pytest.raises(ToolbenchError, match=r"bench\.misuse"):
        evals.run(bench, [READS], [good], repeat=0)
    with pytest.raises(ToolbenchError, match=r"bench\.misuse"):
        evals.run(bench, ["not a case"], [good])  # type: ignore[list-item]


@evals.parametrize([READS, evals.Case("rolls", "Roll 1d6", expect=[evals.called("dice_roll", formula="1d6")])])
def test_the_pytest_helper_makes_one_test_per_case(bench: Workbench, case: evals.Case,
                                                  request: pytest.FixtureRequest) -> None:
    scripts = {"reads the notes": good, "rolls": lambda: ScriptedModel([[("dice_roll", {"formula": "1d6"})], "4"])}
    assert request.node.callspec.id == case.name
    evals.run(bench, [case], {"scripted": scripts[case.name]}).assert_pass_rate()


def test_an_attempt_the_provider_failed_fails_and_models_need_names(bench: Workbench) -> None:
    from toolbench.models import ModelError

    class Down(ScriptedModel):
        async def send(self, body: dict[str, Any]) -> dict[str, Any]:
            raise ModelError("model.provider_auth", "invalid x-api-key")

    report = evals.run(bench, [CHATS], {"down": lambda: Down(["x"])})
    (attempt,) = report.attempts
    assert not attempt.passed and "model.provider_auth: invalid x-api-key" in attempt.failures[0]
    with pytest.raises(ToolbenchError, match="two models are named scripted"):
        evals.run(bench, [CHATS], [good(), lazy()])


def test_attempts_leave_no_log_open(bench: Workbench) -> None:
    import os

    before = len(os.listdir("/proc/self/fd"))
    evals.run(bench, [CHATS], {"lazy": lazy}, repeat=20)
    assert len(os.listdir("/proc/self/fd")) < before + 5


# concurrency --------------------------------------------------------------------------------
class Counted:
    """A scripted model whose every answer waits on the loop, counting the answers in flight."""

    peak = 0
    now = 0
    target = 1  # the first answers wait until this many are in flight: the peak is certain, not timed
    full: Any = None

    def __init__(self, turns: list[Any]) -> None:
        self.inner = ScriptedModel(turns)
        self.protocol, self.model = self.inner.protocol, "counted"
        self.read, self.user_message, self.request = self.inner.read, self.inner.user_message, self.inner.request

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        Counted.full = Counted.full or asyncio.Event()
        Counted.now += 1
        Counted.peak = max(Counted.peak, Counted.now)
        if Counted.now >= Counted.target:
            Counted.full.set()
        try:
            await asyncio.wait_for(Counted.full.wait(), 30)  # an API's answer: other attempts run meanwhile
            return await self.inner.send(body)
        finally:
            Counted.now -= 1


def counted_good() -> Counted:
    return Counted([[("workspace_read_file", {"path": "work/notes.md"})], "A dragon sleeps there."])


def counted_lazy() -> Counted:
    return Counted(["I think it is about a dragon."])


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_attempts_in_flight_give_the_sequential_report(bench: Workbench, concurrency: int) -> None:
    Counted.peak, Counted.target, Counted.full = 0, min(concurrency, 12), None
    report = evals.run(bench, [READS, CHATS], {"good": counted_good, "lazy": counted_lazy}, repeat=3,
                       concurrency=concurrency)
    assert Counted.peak == min(concurrency, 12) and Counted.now == 0  # at most `concurrency` at once, all ended
    frame = report.to_dataframe()
    assert list(zip(frame["case"], frame["model"], frame["attempt"], strict=True)) == [
        (c.name, m, n) for c in (READS, CHATS) for m in ("good", "lazy") for n in (1, 2, 3)]  # plan order
    Counted.target, Counted.full = 1, None
    sequential = evals.run(bench, [READS, CHATS], {"good": counted_good, "lazy": counted_lazy}, repeat=3)
    timing = ["seconds"]  # the one column that differs between a run in flight and one at a time
    assert frame.drop(columns=timing).equals(sequential.to_dataframe().drop(columns=timing))
    assert frame["seconds"].notna().all() and (frame["seconds"] >= 0).all()
    assert len({a.run.id.rsplit("_run", 1)[0] for a in report.attempts}) == 12  # each its own invocation
    assert not [p for p in (bench.workspace / ".toolbench").rglob("*") if p.name.endswith(".tmp")]


def test_concurrency_is_a_positive_int(bench: Workbench) -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ToolbenchError) as misuse:
            evals.run(bench, [READS], [good], concurrency=bad)  # type: ignore[arg-type]
        assert misuse.value.code == "bench.misuse"


# reports that last ---------------------------------------------------------------------------
def test_a_saved_report_reads_back_and_compares(bench: Workbench, tmp_path: Path) -> None:
    flaky = itertools.cycle([good, lazy])
    before = evals.run(bench, [READS, CHATS], {"good": good, "flaky": lambda: next(flaky)()}, repeat=2)
    path = before.save(tmp_path / "before.parquet")
    loaded = evals.Report.load(path)
    assert loaded.to_dataframe().equals(before.to_dataframe())  # every column, types included
    assert all(a.run is None for a in loaded.attempts) and loaded.pass_rates().equals(before.pass_rates())
    after = evals.run(bench, [READS, CHATS], {"good": lazy, "flaky": good}, repeat=2)
    change = loaded.compare(after).set_index(["case", "model"])
    assert change.loc[("reads the notes", "good")].to_dict() == {"before": 1.0, "after": 0.0, "change": -1.0,
                                                                 "flipped": True}
    assert change.loc[("reads the notes", "flaky")].to_dict() == {"before": 0.5, "after": 1.0, "change": 0.5,
                                                                  "flipped": True}
    worse = change.loc[("small talk needs no tool", "flaky")].to_dict()
    assert worse == {"before": 0.5, "after": 0.0, "change": -0.5, "flipped": False}  # it never passed every attempt
    with pytest.raises(ToolbenchError) as broken:
        evals.Report.load(tmp_path / "missing.parquet")
    assert broken.value.code == "bench.misuse"


def test_tokens_are_read_from_each_providers_usage() -> None:
    from toolbench.runtime.run import token_counts as _tokens

    assert _tokens({"prompt_tokens": 10, "completion_tokens": 3}) == (10, 3)
    assert _tokens({"input_tokens": 7, "output_tokens": 2}) == (7, 2)
    assert _tokens({"promptTokenCount": 5, "candidatesTokenCount": 1}) == (5, 1)
    assert _tokens({}) == (None, None) and _tokens({"prompt_tokens": True}) == (None, None)


def test_the_progress_bar_counts_attempts_and_the_pass_rate(bench: Workbench, capsys: Any) -> None:
    report = evals.run(bench, [READS], {"good": good, "lazy": lazy}, repeat=2, concurrency=2, progress=True)
    err = capsys.readouterr().err
    assert "attempts" in err and "4/4" in err and "passed=50%" in err and "failed=2" in err
    assert repr(report) == "Report(2/4 attempts passed)"


# attempts that write ------------------------------------------------------------------------
def patcher() -> ScriptedModel:
    return ScriptedModel([[("workspace_read_file", {"path": "work/notes.md"})],
                          [("workspace_apply_patch", {"path": "work/notes.md", "old_string": "sleeps",
                                                      "new_string": "woke"})], "Woken."])


def test_attempts_that_write_get_their_own_workspace_copy(tmp_path: Path) -> None:
    allow = [*TOOLS, "builtin:workspace.apply_patch"]
    with Workbench(tmp_path / "ws", Profile.default().edit(allow=allow)) as b:
        (b.workspace / "work").mkdir(exist_ok=True)
        notes = b.workspace / "work" / "notes.md"
        notes.write_text("a dragon sleeps here\n", encoding="utf-8")
        patched = [evals.called("workspace_apply_patch")]
        shared = evals.run(b, [evals.Case("wakes", "Wake it", expect=patched)], [patcher], repeat=3)
        # Shared, the first attempt's edit is the next one's workspace: it finds nothing to patch.
        assert [a.passed for a in shared.attempts] == [True, False, False]
        notes.write_text("a dragon sleeps here\n", encoding="utf-8")
        seen: list[str] = []

        class Calls:
            def round(self, run: Any, index: int) -> Any:
                return contextlib.nullcontext()

            def call(self, invocation_id: str, record: Any) -> None:
                seen.append(record.call_name)

        b.add_observer(Calls())
        copies = evals.run(b, [evals.Case("wakes", "Wake it", expect=patched, workspace="copy")], [patcher],
                           repeat=3, concurrency=3)
        assert [a.passed for a in copies.attempts] == [True, True, True]
        assert notes.read_text(encoding="utf-8") == "a dragon sleeps here\n"  # each wrote its own copy
        assert sorted(seen) == ["workspace_apply_patch"] * 3 + ["workspace_read_file"] * 3  # traced as the bench
        with pytest.raises(ToolbenchError) as misuse:
            evals.run(b, [evals.Case("x", "y", workspace="mine")], [patcher])  # type: ignore[arg-type]
        assert misuse.value.code == "bench.misuse" and "'copy'" in misuse.value.message


# each model's gate ----------------------------------------------------------------------------
class PerName:
    """Requests of one model name wait until `cap` of them are in flight: a gate that lets more
    through shows as a peak over the cap; one that lets fewer through never reaches it."""

    cap = 2
    now: dict[str, int] = {}  # noqa: RUF012 - the run's shared counters
    peak: dict[str, int] = {}  # noqa: RUF012
    full: dict[str, Any] = {}  # noqa: RUF012

    def __init__(self, name: str, turns: list[Any]) -> None:
        self.inner = ScriptedModel(turns)
        self.protocol, self.model = self.inner.protocol, name
        self.read, self.user_message, self.request = self.inner.read, self.inner.user_message, self.inner.request

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        name = self.model
        full = PerName.full.setdefault(name, asyncio.Event())
        PerName.now[name] = PerName.now.get(name, 0) + 1
        PerName.peak[name] = max(PerName.peak.get(name, 0), PerName.now[name])
        if PerName.now[name] >= PerName.cap:
            full.set()
        try:
            await asyncio.wait_for(full.wait(), 30)
            return await self.inner.send(body)
        finally:
            PerName.now[name] -= 1


def test_per_model_caps_each_models_requests_in_flight(bench: Workbench) -> None:
    PerName.now, PerName.peak, PerName.full = {}, {}, {}
    models = {"a": lambda: PerName("a", ["hi"]), "b": lambda: PerName("b", ["hello"])}
    report = evals.run(bench, [CHATS], models, repeat=6, concurrency=12, per_model=2)
    assert PerName.peak == {"a": 2, "b": 2} and report.pass_rates().loc[CHATS.name].to_dict() == {"a": 1.0, "b": 1.0}
    for bad in (0, 1.5, "2"):
        with pytest.raises(ToolbenchError) as misuse:
            evals.run(bench, [CHATS], [good], per_model=bad)  # type: ignore[arg-type]
        assert misuse.value.code == "bench.misuse"


def test_requests_per_minute_takes_each_request_through_the_bucket(bench: Workbench,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import aiolimiter

    taken: list[float] = []
    original = aiolimiter.AsyncLimiter.acquire

    async def acquire(self: aiolimiter.AsyncLimiter, amount: float = 1) -> None:
        taken.append(self.max_rate)
        await original(self, amount)

    monkeypatch.setattr(aiolimiter.AsyncLimiter, "acquire", acquire)
    report = evals.run(bench, [READS, CHATS], {"good": good}, repeat=2, concurrency=4, requests_per_minute=600)
    assert taken == [600.0] * 8  # four attempts of two requests each (a read, then the answer)
    assert all(a.passed for a in report.attempts if a.case == READS.name)
    for bad in (0, -5, float("inf"), "60"):
        with pytest.raises(ToolbenchError) as misuse:
            evals.run(bench, [CHATS], [good], requests_per_minute=bad)  # type: ignore[arg-type]
        assert misuse.value.code == "bench.misuse"
