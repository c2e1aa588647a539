"""executor="ray": evals and replays on a local Ray cluster (2 CPUs, started here, no network
beyond 127.0.0.1) give what the same run gives in this process."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray  # the test extra has it (toolbench[ray]): a missing install fails, never skips

from toolbench import Profile, ToolbenchError, ToolSource, Workbench, evals
from toolbench.testing import ScriptedModel

TOOLS = ["builtin:dice.roll", "builtin:workspace.read_file", "builtin:workspace.write_file"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    # The workers unpickle this module's functions by value: they cannot import a test module.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, namespace="toolbench-tests")
    yield
    ray.shutdown()


def shout(text: str) -> str:
    return text.upper() + "!"


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    b = Workbench(tmp_path / "ws", Profile.default().edit(allow=[*TOOLS, "extension/lab:shout"]), seed=11)
    (b.workspace / "work").mkdir(exist_ok=True)
    (b.workspace / "work" / "notes.md").write_text("a dragon sleeps here\n", encoding="utf-8")
    b.register_tool("lab", shout, input_schema={"type": "object", "properties": {"text": {"type": "string"}},
                                                  "required": ["text"]})
    yield b
    b.close()


READS = evals.Case("reads the notes", "What do my notes say?",
                   expect=[evals.called("workspace_read_file", path="work/notes.md"), evals.final_contains("dragon")])
SHOUTS = evals.Case("shouts", "Shout hi", expect=[evals.called("shout", text="hi")])
WRITES = evals.Case("writes", "Save a note", expect=[evals.called("workspace_write_file"), evals.stopped("final")])


def reader() -> ScriptedModel:
    return ScriptedModel([[("workspace_read_file", {"path": "work/notes.md"})], "A dragon sleeps there."])


def shouter() -> ScriptedModel:
    return ScriptedModel([[("shout", {"text": "hi"})], "HI!"])


def writer() -> ScriptedModel:
    return ScriptedModel([[("workspace_write_file", {"path": "work/out.md", "content": "x"})], "saved"])


def lazy() -> ScriptedModel:
    return ScriptedModel(["I think it is about a dragon."])


MODELS = {"reader": reader, "shouter": shouter, "writer": writer, "lazy": lazy}


def test_a_cluster_run_gives_the_in_process_report(cluster: None, bench: Workbench) -> None:
    cases = [READS, SHOUTS, WRITES]
    here = evals.run(bench, cases, MODELS, repeat=2, concurrency=3)
    (bench.workspace / "work" / "out.md").unlink()
    there = evals.run(bench, cases, MODELS, repeat=2, concurrency=3, executor="ray")
    timing = ["seconds"]
    assert there.to_dataframe().drop(columns=timing).equals(here.to_dataframe().drop(columns=timing))
    assert len(there.attempts) == 24 and 0 < len(there.failed) < 24  # both kinds, so the check can fail
    shouted = next(a for a in there.attempts if a.model == "shouter" and a.case == "shouts")
    assert shouted.run is not None and shouted.run.rounds[0].results[0].content == "HI!"  # the tool ran there
    assert not (bench.workspace / "work" / "out.md").exists()  # the workers wrote into their own copies


def test_a_cluster_replay_gives_the_in_process_replays(cluster: None, bench: Workbench) -> None:
    def rolls() -> ScriptedModel:
        return ScriptedModel([[("dice_roll", {"formula": "3d6"}), ("shout", {"text": "yo"})],
                              [("workspace_read_file", {"path": "work/missing.md"})], "done"])

    runs = [bench.invocation().run(rolls(), "go") for _ in range(5)]
    bench.unregister_tool("extension/lab:shout")  # now `missing`: the report must show it both ways
    here = bench.replay_many(runs, concurrency=2)
    there = bench.replay_many(runs, concurrency=2, executor="ray")

    def seen(replays: list[Any]) -> list[Any]:
        return [[(d.call_name, d.status, d.after and d.after.content) for d in r.diffs] for r in replays]

    assert seen(there) == seen(here)
    assert {d.status for r in there for d in r.diffs} == {"same", "missing"}  # the seeded dice rolled alike
    assert all(r.invocation is None and r.invocation_id.startswith("inv_") for r in there)


def test_a_part_that_cannot_travel_is_named_before_anything_starts(bench: Workbench) -> None:
    lock = threading.Lock()
    bench.register_tool("lab", lambda: str(lock), name="locked")
    with pytest.raises(ToolbenchError) as misuse:
        evals.run(bench, [READS], {"reader": reader}, executor="ray")
    assert misuse.value.code == "bench.misuse"
    assert "extension tool `lab:locked` cannot be sent to the cluster's workers" in misuse.value.message
    bench.unregister_tool("extension/lab:locked")

    class Holding(ScriptedModel):
        held = lock

    holding = Holding(["hi"])
    holding.lock = lock  # type: ignore[attr-defined]
    with pytest.raises(ToolbenchError) as misuse:
        evals.run(bench, [READS], {"holding": holding}, executor="ray")
    assert "model `holding` cannot be sent" in misuse.value.message and "give a factory" in misuse.value.message


@pytest.mark.parametrize("executor", ["dask", "", 1])
def test_an_unknown_executor_is_misuse(bench: Workbench, executor: Any) -> None:
    with pytest.raises(ToolbenchError) as misuse:
        evals.run(bench, [READS], {"reader": reader}, executor=executor)
    assert misuse.value.code == "bench.misuse" and "'ray'" in misuse.value.message
    with pytest.raises(ToolbenchError) as misuse:
        bench.replay_many([], executor=executor)
    assert misuse.value.code == "bench.misuse"


CASES_FILE = '''
from toolbench import evals
from toolbench.testing import ScriptedModel

def roller():
    return ScriptedModel([[("dice_roll", {"formula": "2d6"})], "done"])

CASES = [evals.Case("rolls", "Roll 2d6", expect=[evals.called("dice_roll", formula="2d6")])]
MODELS = {"roller": roller, "talker": lambda: ScriptedModel(["hello"])}
'''


def test_the_eval_command_runs_a_files_cases_on_the_cluster(cluster: None, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from toolbench.cli import main

    cases = tmp_path / "cases.py"  # run as a script: its functions travel by value, not by import
    cases.write_text(CASES_FILE, encoding="utf-8")
    code = main(["eval", str(cases), "--workspace", str(tmp_path / "ws"), "--repeat", "2", "--concurrency", "2",
                 "--executor", "ray", "--per-model", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "Report(2/4 attempts passed)" in out


def _explode() -> None:
    raise RuntimeError("this source cannot start on a worker")


class Fragile(ToolSource):
    """Pickles here and fails to unpickle there: the worker cannot build its bench."""

    def __reduce__(self) -> Any:
        return (_explode, ())

    def descriptors(self) -> list[Any]:
        return []


def test_a_worker_that_cannot_build_its_bench_stops_the_run_coded(cluster: None, bench: Workbench) -> None:
    bench.add_source(Fragile())
    with pytest.raises(ToolbenchError) as failed:
        evals.run(bench, [READS], {"reader": reader}, executor="ray")
    assert failed.value.code == "bench.cluster_failed"
