"""The public functions: each takes a provider or its registered name (`_registry`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..core.errors import ToolbenchError
from ._recorded import ResultReader, pair
from ._registry import get_provider, names
from .types import (
    GEMINI_SCHEMAS,
    AssistantTurn,
    DecodedCall,
    DecodedResponse,
    Exchange,
    Problem,
    Provider,
    RecordedResult,
    RenderableTool,
    RenderOptions,
    Round,
)


def _options(strict: bool, schema: str, defer_loading: Iterable[str]) -> RenderOptions:
    if schema not in GEMINI_SCHEMAS:
        raise ToolbenchError("bench.misuse", f"schema {schema!r} is not one of {', '.join(GEMINI_SCHEMAS)}")
    if isinstance(defer_loading, str):
        raise ToolbenchError("bench.misuse", "defer_loading is a list of call names, not one string")
    return RenderOptions(bool(strict), schema, frozenset(defer_loading))


def render(
    protocol: str | Provider,
    tools: Sequence[RenderableTool],
    *,
    strict: bool = False,
    schema: str = "json-schema",
    defer_loading: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The `tools` list exactly as the provider's API takes it.

    OpenAI protocols pass the schema through; Anthropic drops `$schema`/`$id`; Gemini returns
    `[{"functionDeclarations": [...]}]` (or `[]` when there are no tools) with the schema in
    `parametersJsonSchema`, or with `schema="openapi"` sanitised into `parameters` (the
    OpenAPI subset older models take). `strict=True` asks for the provider's strict tool mode:
    OpenAI's (the schema rewritten, `strict: true`) and Anthropic's (its own rewrite,
    `strict: true`); Gemini has none per tool. `defer_loading` names Anthropic tools sent with
    `defer_loading: true` (for tool search). Rendering never changes the tools; to keep it fast,
    the result shares the parts of each schema it leaves unchanged with the tool's own schema,
    so treat it as read-only (copy it before editing it)."""
    provider = get_provider(protocol)
    return provider.render_list(tools, _options(strict, schema, defer_loading))


def check(
    tools: Sequence[RenderableTool],
    *,
    strict: bool = False,
    protocols: Iterable[str | Provider] | None = None,
    schema: str = "json-schema",
) -> list[Problem]:
    """Every name and schema problem of `tools`, per protocol, with the rule it breaks.

    `protocols` are providers or their names; `None` means every name of `names()` (the
    built-in providers, then the registered ones). Problems are found in the tools as given
    (what a provider would get if the schema were sent as is); `Problem.repaired` says whether
    `render()` fixes it. `strict=True` adds the strict-mode rules of OpenAI and Anthropic;
    `schema` is the Gemini field to check for (as in `render`)."""
    options = _options(strict, schema, ())
    providers = [get_provider(p) for p in (names() if protocols is None else protocols)]
    problems: list[Problem] = []
    for provider in providers:
        problems += provider.check_tools(tools, options)
    return problems


def decode_calls(protocol: str | Provider, response: Any, *, id_seed: str | None = None) -> list[DecodedCall]:
    """The tool calls of a provider's full response body, in order, with their raw arguments.

    Raises `ToolbenchError` with `model.invalid_tool_call` (a call without a name, an Anthropic
    or Responses call without an id, a repeated id, or not an object), `model.provider_refusal`,
    `model.output_truncated` or `model.invalid_response` (the body is not that provider's shape).
    Call names are not checked against the advertised tools: the runtime answers an unknown name
    with a recoverable result. `id_seed` names the calls that came without an id (Gemini, and
    Chat Completions from compatible endpoints): give one unique per round."""
    return list(decode_response(protocol, response, id_seed=id_seed).calls)


def decode_response(protocol: str | Provider, response: Any, *, id_seed: str | None = None) -> DecodedResponse:
    """`decode_calls`, with the response's assistant turn: what must be replayed with the calls
    (thinking blocks, reasoning items, thought signatures, text), or `None` when nothing is."""
    return get_provider(protocol).decode(response, id_seed)


def decode_results(protocol: str | Provider, request: Any,
                   calls: Sequence[DecodedCall] = ()) -> dict[str, RecordedResult]:
    """The tool results a request body carries in its history, by call id: what the model was
    told each call returned (`RecordedResult`: content without the `## Tool error` heading, and
    is_error). Reads Chat Completions `tool` messages, Responses `function_call_output` items,
    Anthropic `tool_result` blocks and Gemini `functionResponse` parts. A Gemini result without
    an id, or with an id that names none of `calls` (a client's own, on calls Gemini sent
    without one), is paired by name, in order, with `calls` (the decoded calls of the response
    it answers), from the request's newest results only. A body that is not the provider's
    shape raises `ToolbenchError` with `model.invalid_response`."""
    reader = _reader(protocol)
    # An API whose calls need no ids (`call_ids_required` False) pairs by order and name.
    by_order = getattr(reader, "call_ids_required", True) is False
    return pair(reader.read_results(request), calls, by_order=by_order)


def decode_result(protocol: str | Provider, element: Any) -> RecordedResult:
    """One result element as `encode_result` makes it, read back as `decode_results` reads it."""
    return _reader(protocol).read_result(element)


def _reader(protocol: str | Provider) -> ResultReader:
    provider = get_provider(protocol)
    if not (callable(getattr(provider, "read_results", None)) and callable(getattr(provider, "read_result", None))):
        raise ToolbenchError("bench.misuse", f"provider {provider.name!r} cannot read recorded results: give it "
                             "read_results(request) and read_result(element) (see the built-in providers)")
    return provider  # type: ignore[return-value]  # checked just above: a Provider does not declare them


def encode_history(
    protocol: str | Provider, rounds: Sequence[Round], *, turns: Sequence[AssistantTurn | None] | None = None
) -> list[dict[str, Any]]:
    """The provider's messages for past rounds: each round's calls, then one result per call.

    Arguments are replayed as the object given (invalid ones should be passed as `{}`), or, to
    the APIs that carry them as text, as the exchange's `arguments_text` when it has one; errors
    read `## Tool error`, a blank line, then the text; a call whose result is `None` gets an
    error result saying the outcome is unknown and to check the state before repeating it.
    `turns`, one per round (or `None` for a round), are the rounds' assistant turns from
    `decode_response`: a turn of this protocol is replayed as it came, its calls in their place;
    a turn of another protocol is left out (its state means nothing to this provider)."""
    return get_provider(protocol).encode_history(rounds, turns)


def encode_result(protocol: str | Provider, exchange: Exchange) -> dict[str, Any]:
    """One call's result as the provider's API takes it, as `encode_history` puts it: the Chat
    Completions `tool` message, the Responses `function_call_output` item, the Anthropic
    `tool_result` block, or the Gemini `functionResponse` part. Attachments the API can read go
    with it (images, PDFs, ...; see `toolbench.protocols._results`); the text lists them all, and
    says why one was left out (an image past the API's limits, `_media`). A result alone is not
    a request: in `encode_history`, past 20 images, Anthropic's smaller many-image limit applies."""
    return get_provider(protocol).encode_result(exchange)


def encode_tool_choice(protocol: str | Provider, choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    """The provider's tool choice for `"none"`, `"auto"`, `"required"` or `{"name": call_name}`.

    `None` means "send neither tools nor a tool choice" (none or auto with no tools). Gemini's
    value is the request's `toolConfig` object."""
    return get_provider(protocol).encode_tool_choice(choice, call_names)


__all__ = ["check", "decode_calls", "decode_response", "decode_result", "decode_results", "encode_history",
           "encode_result", "encode_tool_choice", "render"]
