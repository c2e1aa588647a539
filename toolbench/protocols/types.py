"""The small interfaces the protocol functions work against, and the values they return.

Nothing here imports the runtime: a tool to render is anything with a `call_name` and a
`descriptor` carrying `description` and `input_schema` (a snapshot binding fits); a provider
is anything with a `name` and the six methods of `Provider`; `FullProvider` adds the model
side (reading replies, conversation messages, sampling, replay shapes, scripted bodies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

ProtocolName: TypeAlias = Literal["openai", "openai-responses", "anthropic", "gemini"]
# The built-in providers' names; `toolbench.protocols.names()` adds the registered ones.
PROTOCOLS: tuple[ProtocolName, ...] = ("openai", "openai-responses", "anthropic", "gemini")


class ToolDescriptorLike(Protocol):
    """The part of a tool descriptor a provider is told about."""

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...


class RenderableTool(Protocol):
    """A tool as offered to a model: its call name and its descriptor.

    An optional `tool_id` attribute (a ToolId or its text) is read by `golden()` and `diff()`
    when present; it is not part of what a provider receives."""

    @property
    def call_name(self) -> str: ...

    @property
    def descriptor(self) -> ToolDescriptorLike: ...


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a provider would refuse (`fatal`) or quietly degrade a tool.

    `rule` is a stable dotted name (`name.pattern`, `schema.keyword_unsupported`, ...).
    `path` is a JSON pointer into the tool's input schema ("" for the name or the root).
    `repaired` says that `render(protocol)` fixes the problem by itself, usually with a loss
    of meaning that `message` states; a fatal problem that is not repaired will be refused."""

    protocol: str
    call_name: str
    rule: str
    message: str
    fatal: bool
    path: str = ""
    repaired: bool = False


@dataclass(frozen=True, slots=True)
class DecodedCall:
    """One tool call as a provider sent it.

    `arguments` is the raw wire value: a JSON string for the OpenAI protocols, an object for
    Anthropic and Gemini, or `toolbench.core.arguments.MISSING` when the field is absent;
    `ToolArguments.decode` turns it into arguments. `signature` is Gemini's `thoughtSignature`
    for the part (also kept in the response's `AssistantTurn`, which is what replays it)."""

    call_id: str
    call_name: str
    arguments: Any
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class AttachmentView:
    """One attachment of a result as the renderers take it: what it is, where it is kept
    (`path`, relative to the workspace), and its bytes (`None` when the file cannot be read).
    `left_out`: why the request being built leaves it out, decided over the whole request
    (Anthropic's many-image rule, `BaseProvider.encode_history`); None: judged on its own."""

    kind: str  # "image" | "audio" | "blob"
    mime_type: str
    path: str
    size: int
    data: bytes | None = None
    left_out: str | None = None


@dataclass(frozen=True, slots=True)
class ResultView:
    """The part of a tool result a model reads: its text, whether it is an error, and its
    attachments (each provider takes the kinds its API can read; the text lists the others)."""

    content: str
    is_error: bool = False
    attachments: tuple[AttachmentView, ...] = ()


@dataclass(frozen=True, slots=True)
class Exchange:
    """One call of a round and its result; `result=None` means no confirmed result.

    `arguments_text` is the JSON text `arguments` came as, when the provider sent text (OpenAI's
    two APIs): those APIs get it back verbatim, so the prompt prefix stays byte-identical for
    their caches (`None`: the compact JSON of `arguments` is sent). It must be that object's
    text; invalid arguments are replayed as `{}` with no text."""

    call_id: str
    call_name: str
    arguments: Mapping[str, Any]
    result: ResultView | None
    signature: str | None = None
    arguments_text: str | None = None


Round: TypeAlias = Sequence[Exchange]


@dataclass(frozen=True, slots=True)
class RecordedResult:
    """One result as a request carried it to the model (`decode_results`): the call it answers
    (`None` when the API pairs by order and name and the element names no id), its text without
    toolbench's `## Tool error` heading, and whether it is an error. `call_name` is set where the
    element names its call (Gemini)."""

    call_id: str | None
    content: str
    is_error: bool
    call_name: str | None = None

GeminiSchema: TypeAlias = Literal["json-schema", "openapi"]
GEMINI_SCHEMAS: tuple[GeminiSchema, ...] = ("json-schema", "openapi")


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How to render: `strict` asks for the provider's strict tool mode (OpenAI and Anthropic);
    `schema` is Gemini's field (`parametersJsonSchema`, or the OpenAPI subset in `parameters`);
    `defer_loading` names the Anthropic tools sent with `defer_loading: true`."""

    strict: bool = False
    schema: GeminiSchema = "json-schema"
    defer_loading: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """The assistant turn of one round as the provider sent it, kept to be replayed with its calls.

    Providers refuse a tool-use round replayed without its state (Anthropic's thinking blocks,
    OpenAI Responses' reasoning items, Gemini's thought signatures). `items` are in the order the
    provider sent them: `{"item": <block, item or part as sent, null fields left out>}` for what
    is not a call, `{"call": <call id>}` where a call stood, with `"extra"` holding the call's
    own provider fields to send back (a Gemini part's `thoughtSignature`, a Responses item's
    `id`) and `"keys"` the order its fields came in, when the encoder's differs. A Chat
    Completions turn holds the message itself as an item, its `tool_calls` empty. Plain JSON, so
    the run log keeps it as it is."""

    protocol: str
    items: tuple[Mapping[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "assistant": list(self.items)}


@dataclass(frozen=True, slots=True)
class DecodedResponse:
    """A response body's calls, and its assistant turn when it holds more than plain calls."""

    calls: tuple[DecodedCall, ...]
    assistant: AssistantTurn | None = None


@dataclass(frozen=True, slots=True)
class ModelReply:
    """A provider's answer: the response body as received, and what a run reads from it
    (`Provider.read_reply`; `toolbench.models.ModelReply` is this class)."""

    body: dict[str, Any]
    text: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    finish: str | None = None  # the provider's own stop/finish reason


@dataclass(frozen=True, slots=True)
class StreamDelta:
    """What one stream event added, for a live view: `kind` "text" (answer text), "thinking"
    (reasoning text), or "arguments" (a tool call's: `text` is a fragment of its arguments, the
    call's first delta has its `name`, `call_id` is the id the API gave it, None when it gives
    none). `index` tells the calls of an answer apart; `round` is the run round (0 outside a run)."""

    kind: Literal["text", "thinking", "arguments"]
    text: str = ""
    index: int | None = None
    name: str | None = None
    call_id: str | None = None
    round: int = 0


class StreamAssembly(Protocol):
    """A streamed answer put back together, event by event (a provider's `stream_assembly()`).

    `feed` takes one event's JSON object as the API sent it (named events carry their name in
    `type`, as every built-in API does) and returns what it added; a malformed event raises
    `ToolbenchError("model.stream_malformed")`. `complete` is True once the final event came;
    `body()` is the response body as the non-streamed API would have sent it (partial before)."""

    def feed(self, event: Any) -> list[StreamDelta]: ...

    @property
    def complete(self) -> bool: ...

    def body(self) -> dict[str, Any]: ...


@runtime_checkable
class Provider(Protocol):
    """What a provider's API takes and sends, as six pure functions under one `name`.

    The public functions (`render`, `check`, `decode_response`, `encode_history`, ...) take a
    provider or the name it is registered under (`toolbench.protocols.register`). `name` is
    what `Problem.protocol` and `AssistantTurn.protocol` carry: a turn is replayed only to a
    provider of the same name. None of the methods does I/O or keeps state between calls.
    `BaseProvider` writes `encode_history` from smaller hooks; `ChatCompletionsProvider` and
    `ResponsesProvider` are OpenAI-shaped APIs with their own name and name rules."""

    @property
    def name(self) -> str: ...

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        """The request's `tools` value (see `toolbench.protocols.render`)."""
        ...

    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
        """Name and schema problems of `tools`, each with `protocol == self.name`."""
        ...

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
        """A full response body's calls and assistant turn; a body that is not this API's shape,
        a refusal or a cut output raises `ToolbenchError` with a `model.*` code."""
        ...

    def encode_history(
        self, rounds: Sequence[Round], turns: Sequence[AssistantTurn | None] | None = None
    ) -> list[dict[str, Any]]:
        """Past rounds as this API's messages, every call paired with a result."""
        ...

    def encode_result(self, exchange: Exchange) -> dict[str, Any]:
        """One call's result as `encode_history` puts it."""
        ...

    def encode_tool_choice(self, choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
        """The request's tool choice, or `None` for "send neither tools nor a choice"."""
        ...


class FullProvider(Provider, Protocol):
    """A `Provider` with the model side too: what a run, a reopened or replayed run, MCP
    sampling, sub-agents, `ScriptedModel` and `LocalProvider` ask of it (defaults and details in
    `toolbench.protocols._model_side`). `BaseProvider` has them all (the built-in shapes' own,
    or defaults); `full_provider(p)` gives the defaults to a provider with only the six methods.
    `register` asks for the six only."""

    def read_reply(self, body: Mapping[str, Any]) -> ModelReply:
        """A reply body's text, usage and finish reason (pure: reopened runs read logged bodies)."""
        ...

    def user_message(self, text: str) -> dict[str, Any]:
        """The user message holding `text` (a run's prompt, a sub-agent's brief and mail)."""
        ...

    def system_messages(self, system: str | None) -> list[dict[str, Any]]:
        """The messages carrying a system prompt inside the conversation (`[]`: a request field)."""
        ...

    def request_body(self, model: str, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        """A bare request body: the conversation, the system prompt, the tools and the choice."""
        ...

    def sampling_message(self, role: str, blocks: Sequence[Any]) -> dict[str, Any]:
        """One MCP `sampling/createMessage` message (its role and content blocks) in this shape."""
        ...

    def sampling_limits(self, body: dict[str, Any], *, max_tokens: int | None, temperature: float | None,
                        stop: Sequence[str] | None) -> dict[str, Any]:
        """`body` with a sampling request's limits under this API's field names."""
        ...

    def answer_messages(self, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        """A text answer (no calls) as the messages that keep it in a sub-agent's conversation."""
        ...

    def looks_like(self, pair: Mapping[str, Any]) -> bool:
        """Whether a recorded `{"request", "response"}` pair has this API's shape (replay)."""
        ...

    def text_body(self, text: str, *, n: int = 1, usage: tuple[int, int] | None = None,
                  model: str = "scripted") -> dict[str, Any]:
        """A bare answer body of `text` (`ScriptedModel`, `LocalProvider`)."""
        ...

    def calls_body(self, calls: Sequence[Sequence[Any]], *, n: int = 1, text: str | None = None,
                   usage: tuple[int, int] | None = None, model: str = "scripted") -> dict[str, Any]:
        """A bare answer body making `calls`, each `(call_name, arguments[, call_id])`."""
        ...

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The error body this API answers with an HTTP `status`."""
        ...

__all__ = [
    "GEMINI_SCHEMAS",
    "PROTOCOLS",
    "AssistantTurn",
    "DecodedCall",
    "DecodedResponse",
    "Exchange",
    "FullProvider",
    "GeminiSchema",
    "ModelReply",
    "Problem",
    "ProtocolName",
    "Provider",
    "RecordedResult",
    "RenderOptions",
    "RenderableTool",
    "ResultView",
    "Round",
    "StreamAssembly",
    "StreamDelta",
    "ToolDescriptorLike",
]
