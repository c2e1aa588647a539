"""What a model is to a run: a provider protocol, a request body built from the run's state,
one send through the provider's SDK, and a pure reading of the reply body.

The request and the reply are plain JSON bodies in the provider's own wire shape, so a run
records exactly what went over the wire and `bench.replay` reads the same bodies back. An
adapter holds no conversation: the run owns the transcript and builds every request anew.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..core.errors import ToolbenchError
from ..protocols import FullProvider, ModelReply, full_provider
from ..protocols._reading import first, texts, usage_of

__all__ = ["ChatShapedAdapter", "Model", "ModelError", "ModelReply", "ProviderShaped", "ReadReply", "call_sdk", "first",
           "in_worker", "provider_error", "raw_json", "send_raw", "texts", "usage_of", "with_options"]


@runtime_checkable
class Model(Protocol):
    """A model a run can drive. `protocol` is a provider name of `toolbench.protocols.names()`."""

    @property
    def protocol(self) -> str: ...

    @property
    def model(self) -> str: ...

    def user_message(self, text: str) -> dict[str, Any]:
        """The provider's user message (or input item, or content) holding `text`."""
        ...

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        """The request body for one round: the conversation so far, the tools, the choice
        (`None`: the provider's default, and no tools sent when there are none)."""
        ...

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        """Send `body` and return the response body; raise `ModelError` for what the provider
        or its SDK reports (authentication, limits, timeouts, a refused request)."""
        ...

    def read(self, body: Mapping[str, Any]) -> ModelReply:
        """The reply's text, usage and finish reason (pure: replays read recorded bodies)."""
        ...


class ReadReply:
    """`adapter.read(body)`: the provider's `read_reply`, on an adapter (its protocol) and on
    the class too (`OpenAIChat.read(body)`, its built-in protocol), as the staticmethod was."""

    def __get__(self, obj: Any, owner: Any = None) -> Callable[[Mapping[str, Any]], ModelReply]:
        return full_provider((owner if obj is None else obj).protocol).read_reply


class ProviderShaped:
    """An adapter whose messages, bare request bodies and reply reading are its provider's
    (`toolbench.protocols.full_provider(self.protocol)`): `protocol=` names another provider of
    the same API shape (`OpenAIChat(client, "mistral-large-latest", protocol="mistral")`)."""

    protocol: str

    def _speak(self, protocol: str | None) -> None:
        if protocol is not None:
            if not isinstance(protocol, str):  # a run log records the name
                raise ToolbenchError("bench.misuse", f"protocol is a provider's name, not {type(protocol).__name__}")
            full_provider(protocol)  # an unknown name is protocol.unknown now, not at the first round
            self.protocol = protocol

    @property
    def provider(self) -> FullProvider:
        return full_provider(self.protocol)

    def user_message(self, text: str) -> dict[str, Any]:
        return self.provider.user_message(text)

    read = ReadReply()  # pure: replays and reopened runs read recorded bodies


class ChatShapedAdapter(ProviderShaped):
    """What the OpenAI and Anthropic adapters share: the client and model they were given, the
    options merged into every body, and the provider's bare request body under them."""

    def __init__(self, client: Any, model: str, *, protocol: str | None = None, **options: Any) -> None:
        self.client, self.model, self.options = client, model, options
        self._speak(protocol)

    def bare(self, system: str | None, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
             tool_choice: Any) -> dict[str, Any]:
        """The provider's request body for one round, before the adapter's options."""
        return self.provider.request_body(self.model, system=system, messages=messages, tools=tools,
                                          tool_choice=tool_choice)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"


class ModelError(ToolbenchError):
    """A provider or SDK failure, with the provider's message and, when it gave one, the HTTP status."""

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(code, message)
        self.status = status


def provider_error(exc: BaseException) -> ModelError:
    """The coded error for what an SDK raised (OpenAI's, Anthropic's and google-genai's errors
    share the shape this reads: a status code, a message; timeouts and connection errors by name)."""
    if isinstance(exc, ModelError):
        return exc
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        code_attr = getattr(exc, "code", None)  # google.genai.errors.APIError
        status = code_attr if isinstance(code_attr, int) else None
    message = str(getattr(exc, "message", None) or exc) or name
    if "Timeout" in name:
        return ModelError("model.provider_timeout", f"the provider did not answer in time ({name}): {message}")
    # httpx's transport errors (a refused connection, a server that hangs up mid-request) reach
    # the caller raw from google-genai; OpenAI and Anthropic wrap them in APIConnectionError.
    transport = any(k.__name__ in ("TransportError", "RequestError") for k in type(exc).__mro__)
    if status is None and ("Connection" in name or "Connect" in name or transport):
        return ModelError("model.provider_unreachable", f"cannot reach the provider ({name}): {message}")
    if status in (401, 403):
        return ModelError("model.provider_auth", f"the provider refused the credentials ({status}): {message}",
                          status=status)
    if status == 429:
        return ModelError("model.provider_rate_limited", f"rate limited ({status}): {message}", status=status)
    if status is not None and 400 <= status < 500:
        return ModelError("model.request_rejected", f"the provider rejected the request ({status}): {message}",
                          status=status)
    where = f" ({status})" if status is not None else f" ({name})"
    return ModelError("model.provider_error", f"the provider failed{where}: {message}", status=status)


# A sync client's request runs in a worker thread of its own pool: a stopped run cannot stop
# it (it ends at the SDK's timeout; an async client stops at once), and a few of those must
# not use up the bench loop's default pool, which approvals and closing need.
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="toolbench-model")


async def in_worker(fn: Callable[[], Any]) -> Any:
    return await asyncio.get_running_loop().run_in_executor(_POOL, fn)


async def call_sdk(method: Callable[..., Any], **kwargs: Any) -> Any:
    """Call an SDK method, awaiting an async client's and running a sync client's in a worker
    thread (the run loop stays free); any failure becomes a `ModelError`."""
    try:
        if inspect.iscoroutinefunction(method):
            return await method(**kwargs)
        reply = await in_worker(functools.partial(method, **kwargs))
        return await reply if inspect.isawaitable(reply) else reply
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise provider_error(exc) from exc


async def send_raw(method: Callable[..., Any], **kwargs: Any) -> dict[str, Any]:
    """Call a `with_raw_response` method (OpenAI, Anthropic) and return the response body
    exactly as received. The body is read where the call ran (a sync client's worker thread);
    the raw response's `text` is a property in openai and a method (async on an async client)
    in anthropic."""
    try:
        if inspect.iscoroutinefunction(method):
            text = (await method(**kwargs)).text
            text = text() if callable(text) else text
            text = await text if inspect.isawaitable(text) else text
        else:
            def call() -> Any:
                text = method(**kwargs).text
                return text() if callable(text) else text

            text = await in_worker(call)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise provider_error(exc) from exc
    return raw_json(text)


def raw_json(raw: Any) -> dict[str, Any]:
    """A response body's text as a JSON object; anything else is `model.invalid_response`."""
    try:
        body = json.loads(raw)
    except (ValueError, TypeError) as exc:
        raise ModelError("model.invalid_response", f"the provider's answer is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ModelError("model.invalid_response", "the provider's answer is not a JSON object")
    return body


def with_options(base: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with the adapter's request options merged in; the run's own fields win."""
    return {**options, **base}

