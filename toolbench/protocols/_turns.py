"""Assistant turns: what a provider sent besides the calls, kept in order and replayed with them.

Each provider module decodes its turn into `AssistantTurn.items` (`kept_item` for a block,
item or part it does not own, `call_slot` where a call stood) and replays it through
`replay_order`, which puts the round's calls back in their places.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import ToolbenchError
from ._shared import clone_json
from .types import AssistantTurn, Exchange


def without_none(value: Mapping[str, Any]) -> dict[str, Any]:
    """A block or item as sent, less its null fields (the request types take absent, not null)."""
    return {k: v for k, v in value.items() if v is not None}


def kept_item(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {"item": without_none(raw)}


def call_slot(call_id: str, extra: Mapping[str, Any], keys: Sequence[str] = (),
              rebuilt: Sequence[str] = ()) -> dict[str, Any]:
    """Where a call stood in the assistant turn, with its own provider fields to send back.

    `keys` are the fields of the call's element as it came, in order, and `rebuilt` those its
    `encode_call` makes, in the order it makes them, then `extra`'s: when the two orders differ
    (Responses sends `id`, `type`, `status`, `arguments`, ...), the slot keeps `keys` and the
    element goes back in the order it came (`arrange`)."""
    slot: dict[str, Any] = {"call": call_id}
    if extra:
        slot["extra"] = dict(extra)
    natural = [*rebuilt, *(k for k in extra if k not in rebuilt)]
    if keys and list(arrange(dict.fromkeys(natural), keys)) != natural:
        slot["keys"] = list(keys)
    return slot


def arrange(element: dict[str, Any], keys: Sequence[str] | None) -> dict[str, Any]:
    """`element` with its fields in the order of `keys` (those it has), the others after them
    as they were; the element itself when there is no order to follow."""
    if not keys:
        return element
    ordered = {k: element[k] for k in keys if k in element}
    ordered.update((k, v) for k, v in element.items() if k not in ordered)
    return ordered


def assistant_turn(protocol: str, items: list[dict[str, Any]]) -> AssistantTurn | None:
    """The turn to keep, or None when it is plain calls and nothing else (nothing to replay)."""
    if all(entry.keys() == {"call"} for entry in items):
        return None
    return AssistantTurn(protocol, tuple(items))


def check_turns(rounds: Sequence[Any], turns: Sequence[AssistantTurn | None] | None) -> None:
    if turns is not None and len(turns) != len(rounds):
        raise ToolbenchError(
            "protocol.history_invalid", f"{len(turns)} assistant turns for {len(rounds)} rounds; give one per round"
        )


Placed = tuple[Exchange | None, dict[str, Any], tuple[str, ...]]


def replay_order(protocol: str, exchanges: Sequence[Exchange], turn: AssistantTurn | None) -> list[Placed]:
    """One round's assistant turn to send, in order: `(None, item, ())` for a kept block, item
    or part, `(exchange, extra, keys)` for a call with its provider fields and the order its
    fields came in (`call_slot`; empty: the encoder's own order).

    Without a turn of this protocol it is the calls alone. A call the turn names but the round
    lacks (never answered) is left out; calls the turn does not name follow, in round order."""
    if turn is None or turn.protocol != protocol:
        return [(ex, {}, ()) for ex in exchanges]
    by_id = {ex.call_id: ex for ex in exchanges if ex.call_id}
    out: list[Placed] = []
    placed: set[str] = set()
    for entry in turn.items:
        if "call" in entry:
            ex = by_id.get(entry["call"])
            if ex is not None and ex.call_id not in placed:
                placed.add(ex.call_id)
                extra, keys = entry.get("extra"), entry.get("keys")
                keys = tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
                out.append((ex, clone_json(extra) if isinstance(extra, Mapping) else {}, keys))
        elif isinstance(entry.get("item"), Mapping):
            out.append((None, clone_json(entry["item"]), ()))  # a copy: the caller may edit the history
    out += [(ex, {}, ()) for ex in exchanges if not ex.call_id or ex.call_id not in placed]
    return out
