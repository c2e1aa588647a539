"""An invocation's calls as the providers see them.

The assistant turns decoded from provider responses (by round: logged before the round's
calls run, read back on a reopen), the calls and results as one provider's message history,
and one result as that provider's API takes it. The protocols are imported where they are
used: an invocation that is never rendered does not load them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError
from ..core.results import ToolResult
from ..protocols import decode_response, encode_history, encode_result, names
from ..protocols.types import Exchange, ResultView
from . import attachments
from .records import CallRecord, RunLog, turn_entry

if TYPE_CHECKING:
    from ..protocols.types import AssistantTurn, Provider
    from .store import Store


class ProviderFace:
    """The provider-facing face of one invocation: its decoded rounds, transcripts and results."""

    def __init__(self, store: Store, log: RunLog, turns: Mapping[int, AssistantTurn]) -> None:
        self._store = store
        self._log = log
        self._turns: dict[int, AssistantTurn] = dict(turns)  # round -> the provider's assistant turn

    @property
    def last_round(self) -> int:
        """The highest round a decoded response used (0 for none): a round whose calls were all
        lost still used its number."""
        return max(self._turns, default=0)

    def decode(self, protocol: str | Provider, response: Any, *, id_seed: str,
               take_round: Callable[[], int]) -> tuple[int, list[tuple[str, Any, str | None]]]:
        """The round `take_round` gives a decoded response, and its calls as (name, arguments,
        call id); the assistant turn is logged first. Run under the invocation's lock, so the
        id seed names the round the calls get. A response that is not that provider's shape
        raises before a round is taken."""
        decoded = decode_response(protocol, response, id_seed=id_seed)
        round_no = take_round()
        if decoded.assistant is not None and decoded.calls:
            self._log.append(turn_entry(round_no, decoded.assistant))
            self._turns[round_no] = decoded.assistant
        return round_no, [(c.call_name, c.arguments, c.call_id) for c in decoded.calls]

    def transcript(self, records: Sequence[CallRecord], protocol: str | Provider,
                   rounds: Iterable[int] | None) -> list[dict[str, Any]]:
        """`Invocation.transcript` over `records`."""
        wanted = None if rounds is None else set(rounds)
        by_round: dict[int, list[Exchange]] = {}
        for r in records:
            # a nested call (the shell bridge) is not the model's
            if r.via is None and (wanted is None or r.round in wanted):
                by_round.setdefault(r.round, []).append(self._exchange(r))
        order = sorted(by_round)
        return encode_history(protocol, [by_round[k] for k in order], turns=[self._turns.get(k) for k in order])

    def render_result(self, records: Sequence[CallRecord], result: ToolResult | str,
                      protocol: str | Provider | None, invocation_id: str) -> Any:
        """`Invocation.render_result` over `records`."""
        call_id = result.call_id if isinstance(result, ToolResult) else result
        record = next((r for r in reversed(records) if r.call_id == call_id
                       and (not isinstance(result, ToolResult) or r.result is result or r.result == result)), None)
        if record is None:
            raise ToolbenchError("bench.misuse",
                                 f"no call `{call_id}` with that result in invocation `{invocation_id}`")
        exchange = self._exchange(record)
        if protocol is not None:
            return encode_result(protocol, exchange)
        return {name: encode_result(name, exchange) for name in names()}

    def _exchange(self, r: CallRecord) -> Exchange:
        result = r.result
        views = attachments.views(self._store, result.attachments) if result.attachments else ()
        return Exchange(call_id=r.call_id, call_name=r.call_name, arguments=r.arguments.replay_object(),
                        arguments_text=r.arguments.sent_text,
                        result=ResultView(content=result.content, is_error=result.is_error, attachments=views),
                        signature=r.signature)
