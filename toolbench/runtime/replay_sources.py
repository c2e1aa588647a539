"""What `bench.replay` reads: the calls of a recorded conversation and the results they had.

A source is a `Run` (what `inv.run` returned, or one of `inv.runs`), an `Invocation` or its id
(its runs; without runs, its call records), a list of `{"request": body, "response": body}`
pairs in one provider's shape, or the path of a JSON (a list of pairs, or `{"protocol": ...,
"pairs": [...]}`) or JSONL (one pair a line) file of them.

The recorded result of a call is the `ToolResult` a run or a record kept; for raw pairs it is
what a later request's history carried back (`toolbench.protocols.decode_results`, read from
the next pair's request: it answers the response before it). A pair's `response` may be absent
in the last pair: its request then only carries the results of the response before it. A
response that ran no calls (cut at the token limit, refused, its calls malformed) is skipped, as
`bench.replay(run)` skips the run's round that ended so; a body that is not its provider's
shape is `replay.source_invalid`.

The protocol of raw pairs, when `protocol=` does not name it, is read from the first pair's
shape: the first provider of `names()` (the built-in ones first) whose `looks_like(pair)` is
true. For the built-in ones, a response with `choices` is Chat Completions, with an `output`
list Responses, with a `content` list (or `type: "message"`) Anthropic, with `candidates`
Gemini; without a response, a request with `input` is Responses, with `contents` Gemini, and
`messages` holding `tool` messages or `tool_result` blocks Chat or Anthropic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError
from ..core.fileio import read_regular_file
from ..core.results import ToolResult
from ..protocols import decode_response, decode_results, full_provider, get_provider, names
from ..protocols.types import DecodedCall, RecordedResult
from .invocation import Invocation
from .run import Run

if TYPE_CHECKING:
    from .kernel import Kernel

SOURCE_BYTES = 128 << 20  # a recorded session with its bodies; a larger file is refused, not read
EXPECTED = ("a Run, an Invocation or its id, a list of {\"request\": body, \"response\": body} pairs, or the path "
            "of a JSON or JSONL file of such pairs")


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A call's result as replay compares it: the text the model read (an error's without the
    `## Tool error` heading, trimmed), whether it is an error, and its code when known."""

    content: str
    is_error: bool
    error_code: str | None = None

    @classmethod
    def of(cls, result: ToolResult) -> CallOutcome:
        return cls(result.content.strip() if result.is_error else result.content, result.is_error, result.error_code)

    @classmethod
    def read(cls, recorded: RecordedResult) -> CallOutcome:
        return cls(recorded.content.strip() if recorded.is_error else recorded.content, recorded.is_error)


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One recorded call: the round it came in (from 1), its id, name, wire arguments, result."""

    round: int
    call_id: str
    call_name: str
    arguments: Any
    before: CallOutcome


@dataclass(frozen=True, slots=True)
class Recording:
    """A source read: its rounds of calls. `protocol` is set for raw pairs (their results were
    read from bodies, so replayed results are read back the same way); `invocation_id` names
    the invocation the calls ran in, when known."""

    rounds: tuple[tuple[RecordedCall, ...], ...]
    protocol: str | None = None
    invocation_id: str | None = None


def read_source(kernel: Kernel, source: Any, protocol: str | None = None) -> Recording:
    """The recording `source` holds (see the module docstring); anything else, or a body that is
    not its provider's shape, is `replay.source_invalid`."""
    if isinstance(source, Run):
        return _from_runs([source], source.id.rsplit("_run", 1)[0])
    if isinstance(source, Invocation):
        return _from_invocation(source)
    if isinstance(source, str) and source and "/" not in source and kernel.store.invocation_dir(source).exists():
        live = next((inv for inv in kernel.invocations if inv.id == source), None)
        return _from_invocation(live or kernel.reopen(source))
    if isinstance(source, (str, Path)):
        pairs, named = _load(Path(source))
        return _shaped(pairs, protocol or named)
    if isinstance(source, Sequence) and not isinstance(source, (bytes, bytearray)):
        return _shaped(list(source), protocol)
    raise _invalid(f"a replay source is {EXPECTED}, not {type(source).__name__}")


def _from_invocation(inv: Invocation) -> Recording:
    runs = inv.runs
    if runs:
        return _from_runs(runs, inv.id)
    by_round: dict[int, list[RecordedCall]] = {}
    for r in inv.records:
        if r.via is None:  # a nested call (the shell bridge) is the tool's, not the model's
            by_round.setdefault(r.round, []).append(RecordedCall(r.round, r.call_id, r.call_name, r.arguments,
                                                                 CallOutcome.of(r.result)))
    return Recording(tuple(tuple(by_round[k]) for k in sorted(by_round)), invocation_id=inv.id)


def _from_runs(runs: Sequence[Run], invocation_id: str) -> Recording:
    rounds: list[tuple[RecordedCall, ...]] = []
    for run in runs:
        for r in run.rounds:
            if r.response is None or not r.results:
                continue
            # The id seed the run decoded with (Invocation._decoded_round): id-less calls get the same ids.
            decoded = _decode(run.protocol, r.response, f"run round {r.index}", f"{invocation_id}_{r.invocation_round}")
            by_id = {res.call_id: res for res in r.results}
            calls = []
            for call in decoded:
                result = by_id.get(call.call_id)
                if result is None:
                    raise ToolbenchError("replay.result_missing", f"run `{run.id}` round {r.index}: call "
                                         f"`{call.call_id}` has no recorded result")
                calls.append(RecordedCall(len(rounds) + 1, call.call_id, call.call_name, call.arguments,
                                          CallOutcome.of(result)))
            rounds.append(tuple(calls))
    return Recording(tuple(rounds), invocation_id=invocation_id)


def _shaped(pairs: list[Any], protocol: str | None) -> Recording:
    """`_from_pairs`, with a body of an unexpected shape deep inside (`"messages": true`, a
    number where a list goes) coded at this boundary: pairs come from logs and files."""
    try:
        return _from_pairs(pairs, protocol)
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        raise _invalid(f"a body has a shape its provider never sends ({type(exc).__name__}); "
                       f"a replay source is {EXPECTED}") from exc


def _from_pairs(pairs: list[Any], protocol: str | None) -> Recording:
    if not pairs:
        raise _invalid(f"the list of pairs is empty; a replay source is {EXPECTED}")
    for i, pair in enumerate(pairs):
        if not isinstance(pair, Mapping) or not isinstance(pair.get("request"), Mapping) \
                or not isinstance(pair.get("response"), Mapping | None):
            raise _invalid(f"pair {i} is not {{\"request\": body, \"response\": body}} with JSON objects as bodies")
    name = protocol or detect_protocol(pairs[0])
    get_provider(name)  # an unknown name is protocol.unknown
    rounds: list[tuple[RecordedCall, ...]] = []
    for i, pair in enumerate(pairs):
        if pair.get("response") is None:
            continue
        decoded = _decode(name, pair["response"], f"pair {i}'s response", None)
        if not decoded:
            continue
        if i + 1 == len(pairs):
            raise ToolbenchError("replay.result_missing", f"pair {i}'s response has calls, and no later request "
                                 "carries their results: add that request as a last {\"request\": body} pair")
        try:
            results = decode_results(name, pairs[i + 1]["request"], decoded)
        except ToolbenchError as exc:
            raise _invalid(f"pair {i + 1}'s request: {exc.message}") from exc
        calls = []
        for call in decoded:
            if call.call_id not in results:
                raise ToolbenchError("replay.result_missing", f"pair {i}'s call `{call.call_id}` "
                                     f"({call.call_name}) has no result in pair {i + 1}'s request")
            calls.append(RecordedCall(len(rounds) + 1, call.call_id, call.call_name, call.arguments,
                                      CallOutcome.read(results[call.call_id])))
        rounds.append(tuple(calls))
    return Recording(tuple(rounds), protocol=name)


def detect_protocol(pair: Mapping[str, Any]) -> str:
    """The provider whose shape a pair has (see the module docstring); `replay.protocol_undetected`
    when none fits: pass `protocol=` then."""
    known = names()
    for name in known:
        if full_provider(name).looks_like(pair):
            return name
    raise ToolbenchError("replay.protocol_undetected", "cannot tell the provider from the first pair's shape; "
                         f"pass protocol= (one of {', '.join(known)})")


def _decode(protocol: str, response: Any, where: str, seed: str | None) -> tuple[DecodedCall, ...]:
    """The calls of a recorded response. One the provider cut or refused, or whose calls were
    malformed, is its provider's shape but ran no calls: none to replay, as a run's round that
    ended so has none. One that is not the provider's shape at all is `replay.source_invalid`."""
    try:
        return decode_response(protocol, response, id_seed=seed).calls
    except ToolbenchError as exc:
        if not exc.code.startswith("model."):
            raise
        if exc.code != "model.invalid_response":
            return ()
        raise _invalid(f"{where} is not a {protocol} response with its calls ({exc.code}: {exc.message})") from exc


def _load(path: Path) -> tuple[list[Any], str | None]:
    """The pairs of a JSON or JSONL file (and the protocol it names), read through the one
    bounded reader (`read_regular_file`: a FIFO or a folder is refused at once, a file over
    `SOURCE_BYTES` too); anything else than UTF-8 JSON of pairs is `replay.source_invalid`."""
    kind = "JSON lines" if path.suffix == ".jsonl" else "JSON"
    try:
        text = read_regular_file(path.expanduser(), SOURCE_BYTES).decode("utf-8")
    except OSError as exc:
        raise _invalid(f"cannot read `{path}` ({exc.strerror or exc}); a replay source is {EXPECTED}") from exc
    except UnicodeDecodeError as exc:
        raise _invalid(f"`{path}` is not UTF-8 text; a replay source is {kind} of pairs") from exc
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()], None
        value = json.loads(text)
    except RecursionError as exc:  # json.loads recurses per level
        raise _invalid(f"`{path}` is nested too deep to be {kind} of pairs") from exc
    except ValueError as exc:
        raise _invalid(f"`{path}` is not {kind}: {exc}") from exc
    if isinstance(value, Mapping) and isinstance(value.get("pairs"), list):
        named = value.get("protocol")
        return value["pairs"], named if isinstance(named, str) else None
    if not isinstance(value, list):
        raise _invalid(f"`{path}` holds {type(value).__name__}; it should be a list of pairs")
    return value, None


def _invalid(message: str) -> ToolbenchError:
    return ToolbenchError("replay.source_invalid", message)


__all__ = ["CallOutcome", "RecordedCall", "Recording", "detect_protocol", "read_source"]
