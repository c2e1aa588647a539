"""`executor="ray"`: eval attempts and replay shards on a Ray cluster's workers.

Each worker is a Ray actor that builds its own bench once from the driver bench's recipe
(runtime/recipe.py: the workspace's files, the profile, the extension tools, the MCP
registrations, ...) and runs shard after shard on it, `concurrency` items in flight on its own
bench loop. The shards go out through Ray's `ActorPool` (a few per worker waiting, the rest not
yet read: a corpus streams) and come back in the order they went, so the results are the
in-process run's. The cluster is the one `ray.init()` connected to, or a local one started
here; the workers are as many as its CPUs, never more than the shards. What a worker's bench
writes (records, `tool-results/`) is removed with it: the results travel, not the files.

Ray is imported here only, when a run asks for it (`toolbench[ray]`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import ray
from ray.util import ActorPool

from ..core.errors import ToolbenchError
from .recipe import BenchRecipe
from .replay import Replay, check_scene, read_sources, replay_read

if TYPE_CHECKING:
    from ..core.descriptors import Scene
    from ..progress import Progress
    from .bench import Workbench

T = TypeVar("T")
R = TypeVar("R")

WAITING_PER_WORKER = 2  # shards queued per worker beyond the one it runs: no worker idles between shards
REPLAY_SHARD = 64  # recordings per replay shard (at least `concurrency`)

Part = tuple[str, Any, str]  # what it is, the value, what to do when it cannot be pickled


@ray.remote(num_cpus=1)
class _Worker:
    """One bench built from the recipe, kept for every shard this worker runs."""

    def __init__(self, recipe: BenchRecipe) -> None:
        self._bench = recipe.build()

    def run(self, work: Callable[[Workbench, Sequence[Any]], list[Any]], shard: Sequence[Any]) -> list[Any]:
        return work(self._bench, shard)

    def close(self) -> None:
        self._bench.close()


def run_shards(bench: Workbench, shards: Iterable[Sequence[T]], work: Callable[[Workbench, Sequence[T]], list[R]],
               on_shard: Callable[[list[R], int], None] | None = None, parts: Sequence[Part] = (),
               count: int | None = None) -> list[R]:
    """`work(worker_bench, shard)` for each shard on the cluster, the outputs joined in order;
    `on_shard(outputs, items_still_out)` as each comes back. `parts` are the run's own values
    that must travel (its models); `count`, when known, caps the workers at the shards."""
    recipe = BenchRecipe.of(bench)
    check_parts([*recipe.parts(), *parts])
    shards = iter(shards)
    first = next(shards, None)
    if first is None:
        return []
    if not ray.is_initialized():
        ray.init()
    cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
    workers = max(1, int(cpus))
    sent = ray.put(recipe)
    actors = [_Worker.remote(sent) for _ in range(min(workers, count or workers))]  # type: ignore[attr-defined]
    try:
        return _streamed(ActorPool(actors), ray.put(work), itertools.chain([first], shards), len(actors), on_shard)
    except ray.exceptions.RayActorError as died:  # a worker's process died, or its bench could not be built
        raise ToolbenchError("bench.cluster_failed", f"a Ray worker stopped: {died}; the run is cut short "
                             "(the worker's log in the Ray session folder says why)") from died
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):  # a worker that died has nothing left to close
                ray.get(actor.close.remote(), timeout=60)
            ray.kill(actor)


def _streamed(pool: ActorPool, work: Any, shards: Iterator[Sequence[T]], workers: int,
              on_shard: Callable[[list[R], int], None] | None) -> list[R]:
    outputs: list[R] = []
    out: list[int] = []  # the sizes of the shards sent and not back, oldest first

    def collect() -> None:
        got: list[R] = pool.get_next()
        out.pop(0)
        outputs.extend(got)
        if on_shard is not None:
            on_shard(got, sum(out))

    for shard in shards:
        if len(out) >= workers * (1 + WAITING_PER_WORKER):
            collect()
        pool.submit(lambda actor, s: actor.run.remote(work, s), shard)
        out.append(len(shard))
    while out:
        collect()
    return outputs


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """The items in lists of `size` (the last shorter), read as they are asked for."""
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def check_parts(parts: Iterable[Part]) -> None:
    """Each part pickles as Ray sends it, or `bench.misuse` names the one that does not."""
    for what, value, hint in parts:
        if value is None:
            continue
        try:
            ray.cloudpickle.dumps(value)  # type: ignore[no-untyped-call]
        except Exception as error:
            raise ToolbenchError("bench.misuse", f"{what} cannot be sent to the cluster's workers "
                                 f"({type(error).__name__}: {error}); {hint}") from None


def replay_many(bench: Workbench, sources: Iterable[Any], *, protocol: str | None, scene: Scene,
                concurrency: int, bar: Progress) -> list[Replay]:
    """`bench.replay_many(..., executor="ray")`: the sources are read here (a source may be one
    of this bench's invocations), lazily, and sent as shards of read recordings."""
    check_scene(scene)
    shards = chunks(read_sources(bench._kernel, sources, protocol), max(REPLAY_SHARD, concurrency))
    return run_shards(bench, shards, functools.partial(_replays, scene=scene, concurrency=concurrency),
                      lambda got, out: bar.done_many((r.ok for r in got), out))


def _replays(bench: Workbench, shard: Sequence[tuple[Any, int | None]], *, scene: Scene,
             concurrency: int) -> list[Replay]:
    """On a worker: the shard replayed (each replay names its invocation, on the worker's bench)."""
    return replay_read(bench._kernel, shard, scene=scene, concurrency=concurrency)
