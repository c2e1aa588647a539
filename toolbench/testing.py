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
each turn is answered as a response body of its `protocol` (default `"openai"`; also
`"openai-responses"`, `"anthropic"`, `"gemini"`), and `model.bodies` holds the requests. The
answers come from the same builder as `LocalProvider`'s canned bodies (`toolbench._testing_bodies`)
in its bare `SCRIPTED` style: short ids (`call_{n}_{i}`), `created` 0, no usage (Anthropic's
required block is zero tokens), no thinking, only the fields the SDK types require.

`LocalProvider` (from `toolbench.testing_provider`) serves the providers' HTTP APIs on 127.0.0.1
from a script, so the real SDK clients and the `toolbench.models` adapters run offline.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import _testing_bodies as bodies
from . import _testing_streams as streams
from .core.arguments import MISSING
from .core.errors import ToolbenchError
from .models import Anthropic, Gemini, Model, ModelReply, OpenAIChat, OpenAIResponses, reader_for
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
        if protocol not in _BODIES:
            raise ToolbenchError("bench.misuse", f"a scripted model answers as one of {', '.join(_BODIES)}, "
                                 f"not {protocol!r}")
        self._turns: list[Turn] = [_check_turn(n, t) for n, t in enumerate(turns, 1)]
        self.protocol = protocol
        self.requests: list[ModelRequest] = []
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # sync models run in worker threads
        self._shape = _ADAPTERS[protocol]

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
        return self._shape.user_message(text)

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        return self._shape.request(system=system, messages=messages, tools=tools, tool_choice=tool_choice)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        n = len(self.requests) + 1
        messages = body.get("messages", body.get("input", body.get("contents", [])))
        turn = self._next(ModelRequest(list(messages), list(body.get("tools", []))), body)
        return _answer(self.protocol, turn, n)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The same answer as `send`, as its API's stream events (`inv.run(..., stream=True)`)."""
        answer = await self.send(body)
        for _, data in streams.events(self.protocol, answer):
            if isinstance(data, dict):  # the `[DONE]` sentinel is the SDK's to consume
                yield data

    def read(self, body: Mapping[str, Any]) -> ModelReply:
        return reader_for(self.protocol)(body)

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self._turns)} turns, {self.remaining} left)"


def _wire(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps({} if arguments is MISSING else arguments)


def _object(arguments: Any) -> Any:
    """Anthropic and Gemini send arguments as an object: raw text that is one is parsed."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments  # sent as is: the runtime answers with tool.invalid_arguments
    return {} if arguments is MISSING else arguments


# Per protocol: its text answer, its calls answer with the thinking state off, and how it carries
# a call's arguments (text for OpenAI's two APIs, an object for Anthropic's and Gemini's).
_BODIES: dict[str, tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]], Callable[[Any], Any]]] = {
    "openai": (bodies.chat_text, bodies.chat_calls, _wire),
    "openai-responses": (bodies.responses_text, partial(bodies.responses_calls, reasoning=None), _wire),
    "anthropic": (bodies.anthropic_text, partial(bodies.anthropic_calls, thinking=None), _object),
    "gemini": (bodies.gemini_text, partial(bodies.gemini_calls, thought=None, signature=None), _object)}


def _answer(protocol: str, turn: Turn, n: int) -> dict[str, Any]:
    """`turn` as `protocol`'s response body number n: bare (the `SCRIPTED` style), no usage."""
    text, calls, carry = _BODIES[protocol]
    bare: dict[str, Any] = {"n": n, "usage": None, "model": "scripted", "style": bodies.SCRIPTED}
    if isinstance(turn, str):
        return text(turn, **bare)
    return calls([(c[0], carry(c[1]), *c[2:]) for c in turn], **bare)


# The request bodies a scripted model is given: the real adapters' (no client: they never send).
_ADAPTERS: dict[str, Model] = {
    "openai": OpenAIChat(None, "scripted"), "openai-responses": OpenAIResponses(None, "scripted"),
    "anthropic": Anthropic(None, "scripted", max_tokens=1024), "gemini": Gemini(None, "scripted")}


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
