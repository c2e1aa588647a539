"""`BaseProvider`: the history encoding every provider shares, written once over small hooks.

Encoding past rounds is the same walk for every API: refuse a history no provider accepts,
then, round by round, put the calls back among what the assistant turn held besides them
(`_turns.replay_order`), encode each call and each result, and wrap the round in the API's
messages. A provider gives only the three API-specific pieces: `encode_call`, `encode_result`
and `round_messages` (plus `call_ids_required` for an API that pairs calls by order, and the
`image_limits` its `encode_result` hands to `_results.result_parts`; the walk applies their
request-wide rule, `_media.crowd`, before encoding).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ._media import ImageLimits, crowd
from ._model_side import ModelSide
from ._shared import check_history, resolve_choice
from ._turns import arrange, check_turns, replay_order
from .types import (
    AssistantTurn,
    DecodedResponse,
    Exchange,
    Problem,
    RenderableTool,
    RenderOptions,
    Round,
    StreamAssembly,
)


@dataclass(frozen=True, slots=True)
class TurnPart:
    """One element of a round's assistant turn, in order: a call `encode_call` made (`call` is
    its exchange), or a block, item or part the provider sent besides the calls (`call` is None),
    a fresh copy of what `decode` kept."""

    element: dict[str, Any]
    call: Exchange | None = None


class BaseProvider(ModelSide, ABC):
    """A `Provider` whose `encode_history` is the shared skeleton; subclasses give the hooks.

    Subclass it for an API of a new shape; for an OpenAI-shaped one, `ChatCompletionsProvider`
    or `ResponsesProvider` with your own name and rules is usually enough. The model side
    (`read_reply`, `user_message`, ..., `calls_body`) starts from `ModelSide`'s defaults."""

    name: str
    # What the API refuses of an image in a tool result (`_media`); None: no image is checked
    image_limits: ImageLimits | None = None
    call_ids_required: ClassVar[bool] = True  # False: the API pairs calls and results by order
    # False: a call id must be unique in its round only (the results answer the message before them)
    call_ids_unique: ClassVar[bool] = True
    # A new assembly for one streamed answer (`StreamAssembly`); None: the API is not streamed
    stream_assembly: ClassVar[Callable[[], StreamAssembly] | None] = None

    @abstractmethod
    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]: ...

    @abstractmethod
    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]: ...

    @abstractmethod
    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse: ...

    @abstractmethod
    def encode_result(self, exchange: Exchange) -> dict[str, Any]: ...

    def encode_tool_choice(self, choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
        """The request's tool choice; `None`: send neither tools nor a choice (`resolve_choice`)."""
        resolved = resolve_choice(choice, call_names)
        return None if resolved is None else self.tool_choice(*resolved)

    @abstractmethod
    def tool_choice(self, kind: str, name: str | None) -> dict[str, Any] | str:
        """A checked choice (`none`, `auto`, `required`, or `specific` with the call name) in
        this provider's form."""

    @abstractmethod
    def encode_call(self, exchange: Exchange, extra: dict[str, Any]) -> dict[str, Any]:
        """One call as the assistant turn replays it; `extra` holds the call's own provider
        fields that `decode` kept (empty when the round has no turn of this provider)."""

    @abstractmethod
    def round_messages(self, turn: Sequence[TurnPart], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One round's messages: its assistant turn, then its results (`encode_result` of each
        call, in the turn's order)."""

    def encode_history(
        self, rounds: Sequence[Round], turns: Sequence[AssistantTurn | None] | None = None
    ) -> list[dict[str, Any]]:
        """See `toolbench.protocols.encode_history`; empty rounds are left out."""
        check_history(rounds, ids_required=self.call_ids_required, ids_unique=self.call_ids_unique)
        check_turns(rounds, turns)
        rounds = crowd(rounds, self.image_limits, self.name)  # a request-wide image rule (Anthropic's)
        messages: list[dict[str, Any]] = []
        for at, exchanges in enumerate(rounds):
            if not exchanges:
                continue
            order = replay_order(self.name, exchanges, turns[at] if turns else None)
            turn = [TurnPart(part) if ex is None else TurnPart(arrange(self.encode_call(ex, part), keys), ex)
                    for ex, part, keys in order]
            messages += self.round_messages(turn, [self.encode_result(p.call) for p in turn if p.call is not None])
        return messages
