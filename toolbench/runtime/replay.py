"""`bench.replay(source)`: run a recorded conversation's calls again and compare the results.

Every call of the recording (`replay_sources`) runs in a fresh invocation of the current bench,
round by round as recorded, with the same call ids and the same arguments, through the usual
gate, checks and projection. Each result is compared with the recorded one, by the text the
model reads and whether it is an error:

    same       the same text and error state
    changed    the text differs (the error state does not)
    now_error  it succeeded then and is an error now
    now_ok     it was an error then and succeeds now
    missing    the tool is no longer in the snapshot (the call does not run)

A name that was unknown when recorded (`model.unknown_tool_call`) runs again and is compared.
What legitimately varies is normalised on both sides before comparing: the invocation id and
round number in `tool-results/<invocation>/round-NNN-...` paths (an externalised result's
notice names its file). For raw pairs, a replayed result is rendered in the recording's protocol
and read back as the recorded one was (`protocols.decode_result`), so both are what the model
read. A seeded bench (`Workbench(seed=...)`) rolls the same dice when the recorded invocation
is one it made: the replay draws from that invocation's stream (`seeding.invocation_rng`).
"""

from __future__ import annotations

import concurrent.futures
import difflib
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from ..core.descriptors import Scene
from ..core.errors import ToolbenchError
from ..core.results import RESULTS_ROOT, ToolResult
from ..protocols import decode_result
from .in_flight import run_bounded
from .invocation import Invocation
from .replay_sources import CallOutcome, RecordedCall, Recording, read_source
from .seeding import invocation_rng

if TYPE_CHECKING:
    import pandas

    from ..progress import Progress
    from .kernel import Kernel

Status = Literal["same", "changed", "now_error", "now_ok", "missing"]
STATUSES: Final = ("same", "changed", "now_error", "now_ok", "missing")
ROUND_LIMIT: Final = "agent.max_tool_rounds_exceeded"
_RESULT_PATH: Final = re.compile(re.escape(RESULTS_ROOT) + r"/[A-Za-z0-9_.-]+/round-\d+-")


@dataclass(frozen=True, slots=True)
class CallDiff:
    """One replayed call: `before` as recorded, `after` as it ran now (`None`: `missing`)."""

    round: int
    call_id: str
    call_name: str
    status: Status
    before: CallOutcome
    after: CallOutcome | None

    def text_diff(self) -> str:
        """A unified diff of the normalised texts, before then after ('' when they are equal)."""
        if self.after is None:
            return ""
        a, b = normalise(self.before.content), normalise(self.after.content)
        lines = difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                     "before", "after")
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True, slots=True)
class Replay:
    """The outcome of `bench.replay`: every call with its status, and the invocation it ran in.
    `replay_many`'s replays hold no invocation (`invocation` is None: a corpus's would fill the
    memory); `bench.open_invocation(invocation_id)` reopens one from its records, in this bench
    (a cluster worker's went with its bench)."""

    diffs: tuple[CallDiff, ...]
    invocation_id: str
    invocation: Invocation | None = None

    @property
    def ok(self) -> bool:
        """Every call is `same` (an empty recording is ok)."""
        return all(d.status == "same" for d in self.diffs)

    @property
    def changed(self) -> tuple[CallDiff, ...]:
        """The calls that are not `same`."""
        return tuple(d for d in self.diffs if d.status != "same")

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for d in self.diffs if d.status == s) for s in STATUSES}

    def report(self) -> str:
        """A summary line, then each call that is not `same`, with the diff of a changed text."""
        counts = ", ".join(f"{n} {s}" for s, n in self.counts().items() if n)
        lines = [f"Replay in {self.invocation_id}: {len(self.diffs)} calls" + (f" ({counts})" if counts else "")
                 + (", ok" if self.ok else "")]
        for d in self.changed:
            shown = d.after is not None and (d.before.error_code or d.after.error_code)
            codes = f" [{d.before.error_code or '-'} -> {d.after.error_code or '-'}]" if shown and d.after else ""
            lines.append(f"- round {d.round} {d.call_id} {d.call_name}: {d.status}{codes}")
            diff = d.text_diff()
            if diff:
                lines.append(diff.rstrip("\n"))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.report()

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per call, in order."""
        import pandas

        rows = [{"round": d.round, "call_id": d.call_id, "call_name": d.call_name, "status": d.status,
                 "before_is_error": d.before.is_error, "after_is_error": None if d.after is None else d.after.is_error,
                 "before_error_code": d.before.error_code,
                 "after_error_code": None if d.after is None else d.after.error_code,
                 "before_chars": len(d.before.content),
                 "after_chars": None if d.after is None else len(d.after.content)}
                for d in self.diffs]
        columns = ["round", "call_id", "call_name", "status", "before_is_error", "after_is_error",
                   "before_error_code", "after_error_code", "before_chars", "after_chars"]
        return pandas.DataFrame(rows, columns=columns)


def normalise(text: str) -> str:
    """The text with what legitimately differs between runs made the same: the invocation id and
    round number of `tool-results/` paths."""
    return _RESULT_PATH.sub(f"{RESULTS_ROOT}/<invocation>/round-N-", text)


def status_of(before: CallOutcome, after: CallOutcome | None) -> Status:
    """The one rule of what a replayed call is, compared with its recording."""
    if after is None:
        return "missing"
    if before.is_error != after.is_error:
        return "now_ok" if before.is_error else "now_error"
    return "same" if normalise(before.content) == normalise(after.content) else "changed"


def replay(kernel: Kernel, source: Any, *, protocol: str | None = None, scene: Scene = "chat") -> Replay:
    """See `Workbench.replay` and the module docstring."""
    inv, recording = prepare(kernel, source, protocol, scene)
    return kernel.loop.run(areplay(inv, recording))


def replay_many(kernel: Kernel, sources: Iterable[Any], *, protocol: str | None = None, scene: Scene = "chat",
                concurrency: int = 1, bar: Progress | None = None) -> list[Replay]:
    """See `Workbench.replay_many`: each source as `replay` does, `concurrency` in flight."""
    check_scene(scene)
    return replay_read(kernel, read_sources(kernel, sources, protocol), scene=scene, concurrency=concurrency,
                       bar=bar)


def read_sources(kernel: Kernel, sources: Iterable[Any], protocol: str | None
                 ) -> Iterator[tuple[Recording, int | None]]:
    """Each source read, with its recorded invocation's place (`begin`), as the runs start: a
    corpus is never all in memory."""
    for source in sources:
        recording = read_source(kernel, source, protocol)
        yield recording, kernel.place_of(recording.invocation_id)


def replay_read(kernel: Kernel, recordings: Iterable[tuple[Recording, int | None]], *, scene: Scene,
                concurrency: int, bar: Progress | None = None) -> list[Replay]:
    """Read recordings (with their places: `begin`) replayed, `concurrency` in flight. The
    replays name their invocations and hold none: nothing held grows with the corpus but them."""
    def start(read: tuple[Recording, int | None]) -> tuple[concurrent.futures.Future[Replay], Invocation]:
        recording, place = read
        inv = begin(kernel, recording, place, scene, kept=False)
        if bar is not None:
            bar.flying(1)
        return kernel.loop.submit(areplay(inv, recording)), inv

    def ended(inv: Invocation, future: concurrent.futures.Future[Replay]) -> Replay | None:
        inv.close()  # its records stay: a corpus must not hold a log open per recording
        if bar is not None:
            bar.flying(-1)
        if future.cancelled():
            return None
        replay = Replay(future.result().diffs, inv.id)
        if bar is not None:
            bar.done(replay.ok)
        return replay

    return [r for r in run_bounded(recordings, start, ended, concurrency) if r is not None]


def prepare(kernel: Kernel, source: Any, protocol: str | None, scene: Scene) -> tuple[Invocation, Recording]:
    """The recording read, and the fresh invocation it replays in (made off the bench loop)."""
    check_scene(scene)
    recording = read_source(kernel, source, protocol)
    return begin(kernel, recording, kernel.place_of(recording.invocation_id), scene), recording


def begin(kernel: Kernel, recording: Recording, place: int | None, scene: Scene, *, kept: bool = True) -> Invocation:
    """The fresh invocation a read recording replays in; `place` is the recorded invocation's
    among those the reading bench made (a cluster worker is given it: its bench made none).
    `scene` is checked by the callers, before any source is read."""
    # The recording's rounds all run, whatever the profile's round limit now (the profile is
    # edited only when it must be: a corpus would otherwise hold a profile per recording).
    profile = kernel.profile
    if len(recording.rounds) > profile.run.max_rounds:
        profile = profile.edit(run={"maxRounds": len(recording.rounds)})
    inv = kernel.new_invocation(scene, f"inv_{uuid.uuid4().hex[:12]}", profile=profile, kept=kept)
    if kernel.seed is not None and place is not None:
        inv.state.rng = invocation_rng(kernel.seed, place)
    return inv


async def areplay(inv: Invocation, recording: Recording) -> Replay:
    """Run the recording's rounds in `inv`, on the bench loop, and compare each result."""
    diffs: list[CallDiff] = []
    for calls in recording.rounds:
        present = [c for c in calls if _runs(inv, c)]
        results = await inv.aturn([(c.call_name, c.arguments, c.call_id) for c in present]) if present else []
        after = {c.call_id: _outcome(inv, recording, r) for c, r in zip(present, results, strict=True)}
        for c in calls:
            # A call the recorded run refused for its round limit is a run rule, not the tool: kept as it was.
            now = c.before if c.before.error_code == ROUND_LIMIT else after.get(c.call_id)
            diffs.append(CallDiff(c.round, c.call_id, c.call_name, status_of(c.before, now), c.before, now))
    return Replay(tuple(diffs), inv.id, inv)


def _runs(inv: Invocation, call: RecordedCall) -> bool:
    """Whether the call runs: its tool is in the snapshot, or its name was unknown then too."""
    if call.before.error_code == ROUND_LIMIT:
        return False
    snapshot = inv.snapshot
    bound = snapshot.binding_for(call.call_name) or snapshot.binding_loose(call.call_name)
    return bound is not None or call.before.error_code == "model.unknown_tool_call"


def _outcome(inv: Invocation, recording: Recording, result: ToolResult) -> CallOutcome:
    if recording.protocol is None:
        return CallOutcome.of(result)
    read = CallOutcome.read(decode_result(recording.protocol, inv.render_result(result, recording.protocol)))
    return CallOutcome(read.content, read.is_error, result.error_code)


def check_scene(scene: object) -> None:
    if scene not in ("chat", "session"):
        raise ToolbenchError("bench.misuse", f"scene must be 'chat' or 'session', not {scene!r}")


__all__ = ["STATUSES", "CallDiff", "Replay", "normalise", "replay", "status_of"]
