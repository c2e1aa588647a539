"""Test seams that ship with toolbench: a scripted model for sub-agents, and small helpers.

    from toolbench.testing import ScriptedModel

    bench.agents.model = ScriptedModel([
        [("workspace_read_file", {"path": "work/notes.md"})],       # turn 1: one call
        [("task_return", {"summary": "The notes mention a dragon."})],  # turn 2
    ])

A turn is a list of `(call_name, arguments)` pairs (a third item sets the call id), or a str
(a text answer). The model records what it was given (`model.requests`); asking it for a turn
past the end of its plan raises `ToolbenchError("testing.script_exhausted")`, which fails the
task it drives with that message.

It is a `toolbench.models.Model` too, so `inv.run(ScriptedModel([...]), prompt)` runs offline:
each turn is answered as a response body of its `protocol` (default `"openai"`; any provider
that makes answer bodies: the built-in ones, and a registered or installed one of their shapes,
`ScriptedModel(turns, protocol="mistral")`), and `model.bodies` holds the requests. Requests,
messages, answers and their reading are the provider's (`text_body`, `calls_body`,
`request_body`, `read_reply`); the built-in ones answer from the same builder as
`LocalProvider`'s canned bodies (`toolbench.protocols._bodies`) in its bare `SCRIPTED` style:
short ids (`call_{n}_{i}`), `created` 0, no usage (Anthropic's required block is zero
tokens), no thinking, only the fields the SDK types require.

`LocalProvider` (from `toolbench.testing_provider`) serves the providers' HTTP APIs on 127.0.0.1
from a script, so the real SDK clients and the `toolbench.models` adapters run offline.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import _testing_streams as streams
from .core.arguments import MISSING
from .core.errors import ToolbenchError
from .models import ModelReply
from .protocols import ChatCompletionsProvider, FullProvider, ResponsesProvider, full_provider, get_provider
from .protocols._model_side import has_bodies
from .testing_provider import LocalProvider

Turn = str | list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What a model was given for one turn: the messages and the tool list."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]

    @property
    def tool_names(self) -> list[str]:
        """The call names offered (OpenAI Chat Completions tool list)."""
        return [t["function"]["name"] for t in self.tools]


class ScriptedModel:
    """Plays a planned list of turns, in order, one per request, whoever asks."""

    model = "scripted"

    def __init__(self, turns: Sequence[Turn], *, protocol: str = "openai") -> None:
        try:
            if not isinstance(protocol, str):  # a run log records the name
                raise ToolbenchError("bench.misuse", f"protocol is a provider's name, not {type(protocol).__name__}")
            provider = full_provider(protocol)
        except ToolbenchError as exc:
            raise ToolbenchError("bench.misuse", f"a scripted model answers as a provider: {exc.message}") from None
        if not has_bodies(provider):
            raise ToolbenchError("bench.misuse", f"provider {protocol!r} makes no answer bodies (text_body, "
                                 "calls_body), so a scripted model cannot answer as it")
        self._turns: list[Turn] = [_check_turn(n, t) for n, t in enumerate(turns, 1)]
        self.protocol = protocol
        self.requests: list[ModelRequest] = []
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # sync models run in worker threads
        self._provider: FullProvider = provider

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        return self._next(ModelRequest(list(messages), list(tools)))

    def _next(self, request: ModelRequest, body: dict[str, Any] | None = None) -> Turn:
        with self._lock:
            n = len(self.requests)
            if n >= len(self._turns):
                raise ToolbenchError("testing.script_exhausted",
                                     f"the script has {len(self._turns)} turns and turn {n + 1} was asked for")
            self.requests.append(request)
            if body is not None:
                self.bodies.append(body)
            turn = self._turns[n]
        return turn if isinstance(turn, str) else list(turn)

    # toolbench.models.Model -------------------------------------------------------------------
    def user_message(self, text: str) -> dict[str, Any]:
        return self._provider.user_message(text)

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        return self._provider.request_body("scripted", system=system, messages=messages, tools=tools,
                                           tool_choice=tool_choice)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        n = len(self.requests) + 1
        messages = body.get("messages", body.get("input", body.get("contents", [])))
        turn = self._next(ModelRequest(list(messages), list(body.get("tools", []))), body)
        if isinstance(turn, str):  # bare (the `SCRIPTED` style), no usage
            return self._provider.text_body(turn, n=n)
        return self._provider.calls_body(turn, n=n)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The same answer as `send`, as its API's stream events (`inv.run(..., stream=True)`)."""
        answer = await self.send(body)
        for _, data in streams.events(_shape_of(self.protocol), answer):
            if isinstance(data, dict):  # the `[DONE]` sentinel is the SDK's to consume
                yield data

    def read(self, body: Mapping[str, Any]) -> ModelReply:
        return self._provider.read_reply(body)

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self._turns)} turns, {self.remaining} left)"


def _shape_of(protocol: str) -> str:
    """The built-in API whose stream events a provider's answers take (a registered Chat
    Completions or Responses provider streams as OpenAI's)."""
    if protocol in streams.PROTOCOLS:
        return protocol
    provider = get_provider(protocol)
    for kind, shape in ((ChatCompletionsProvider, "openai"), (ResponsesProvider, "openai-responses")):
        if isinstance(provider, kind):
            return shape
    raise ToolbenchError("bench.misuse", f"a scripted {protocol} model cannot stream: its events are not known")


def _check_turn(n: int, turn: Any) -> Turn:
    if isinstance(turn, str):
        return turn
    if isinstance(turn, (list, tuple)):
        calls = []
        for call in turn:
            if not isinstance(call, (list, tuple)) or not 2 <= len(call) <= 3 or not isinstance(call[0], str):
                raise ToolbenchError("bench.misuse", f"turn {n}: a call is (call_name, arguments[, call_id]), "
                                     f"not {call!r}")
            calls.append(tuple(call))
        return calls
    raise ToolbenchError("bench.misuse", f"turn {n} is a list of calls or a str, not {type(turn).__name__}")


def call(bench: Any, call_name: str, arguments: Any = MISSING, *, scene: str = "chat") -> Any:
    """Run one call in a fresh invocation of `bench` and return its `ToolResult`."""
    return bench.invocation(scene).call(call_name, arguments)


__all__ = ["LocalProvider", "ModelRequest", "ScriptedModel", "call"]
