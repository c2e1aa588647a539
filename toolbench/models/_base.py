"""What a model is to a run: a provider protocol, a request body built from the run's state,
one send through the provider's SDK, and a pure reading of the reply body.

The request and the reply are plain JSON bodies in the provider's own wire shape, so a run
records exactly what went over the wire and `bench.replay` reads the same bodies back. An
adapter holds no conversation: the run owns the transcript and builds every request anew.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..core.errors import ToolbenchError
from ..protocols import FullProvider, ModelReply, full_provider, get_provider
from ..protocols._reading import first, texts, usage_of
from ..protocols.types import StreamAssembly, StreamDelta

__all__ = [
    "ChatShapedAdapter",
    "Model",
    "ModelError",
    "ModelReply",
    "ProviderShaped",
    "ReadReply",
    "StreamingModel",
    "assemble",
    "call_sdk",
    "first",
    "in_worker",
    "provider_error",
    "raw_json",
    "sdk_stream",
    "send_raw",
    "stream_assembly",
    "stream_error",
    "texts",
    "to_dict",
    "usage_of",
    "with_options",
]


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

    # A model may also stream (`inv.run(..., stream=True)`, see `StreamingModel`):
    #     def stream(self, body) -> AsyncIterator[dict]: the answer's events as JSON objects

    def read(self, body: Mapping[str, Any]) -> ModelReply:
        """The reply's text, usage and finish reason (pure: replays read recorded bodies)."""
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A `Model` that streams: `stream(body)` sends `body` as a streamed request and yields each
    event as the JSON object the API sent (its provider's `stream_assembly()` puts them back
    together). The built-in adapters add their API's streaming fields (`"stream": true`, the
    usage chunk) themselves."""

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]: ...


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
        self.partial: dict[str, Any] | None = None  # a cut stream's body as far as it came


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



# A streamed answer ------------------------------------------------------------------------------
# What the SDKs raise while a stream is read (httpx's errors reach the caller raw from all three):
# a connection closed mid-body, a read that timed out, a `data:` line that is not JSON.
_CUT = ("RemoteProtocolError", "ReadError", "StreamError", "IncompleteRead", "ChunkedEncodingError")


def stream_error(exc: BaseException) -> ModelError:
    """The coded error for what an SDK raised after a stream began."""
    if isinstance(exc, ModelError):
        return exc
    names = {k.__name__ for k in type(exc).__mro__}
    if "JSONDecodeError" in names or type(exc.__cause__).__name__ == "JSONDecodeError":  # google-genai wraps it
        return ModelError("model.stream_malformed", f"a stream event is not JSON: {exc}")
    if any("Timeout" in n for n in names):
        return ModelError("model.stream_stalled", f"the stream sent nothing within the client's timeout "
                          f"({type(exc).__name__})")
    if names & set(_CUT) or "Connection" in type(exc).__name__:
        return ModelError("model.stream_interrupted", f"the stream was cut ({type(exc).__name__}: {exc})")
    return provider_error(exc)


_END = object()


async def sdk_stream(open_stream: Callable[[], Any], event: Callable[[Any], Any]) -> AsyncIterator[Any]:
    """The events of an SDK stream as JSON objects (`event` turns one SDK item into one).

    `open_stream` starts the request: an async client's call is awaited on the loop; a sync
    client's runs in a worker thread, which then reads the stream and hands each item to the
    loop. A failure before the first event is the SDK's error (`provider_error`); after it,
    `stream_error`."""
    started = False
    try:
        if inspect.iscoroutinefunction(open_stream):
            stream = await open_stream()
        else:  # a sync client, or an async one whose method is a plain wrapper returning a coroutine
            stream = await in_worker(open_stream)
            stream = await stream if inspect.isawaitable(stream) else stream
        items = stream if hasattr(stream, "__aiter__") else _threaded(stream)
        try:
            async for item in items:
                started = True
                yield event(item)
        finally:
            await _close(stream)
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception as exc:
        raise (stream_error(exc) if started else provider_error(exc)) from exc


async def _close(stream: Any) -> None:
    """Close an SDK stream (a stopped run's too), so its connection and reader end."""
    close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
    if not callable(close):
        return
    with contextlib.suppress(Exception):
        if inspect.iscoroutinefunction(close):
            await close()
        else:
            closed = await in_worker(close)
            if inspect.isawaitable(closed):
                await closed


async def _threaded(stream: Any) -> AsyncIterator[Any]:
    """A sync SDK stream read in a worker thread; its items cross to the loop through a queue.
    When the reader stops early the caller closes the stream, which ends the thread's read."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[Any, BaseException | None]] = asyncio.Queue()
    stop = False

    def read() -> None:
        try:
            for item in stream:
                if stop:
                    return
                loop.call_soon_threadsafe(queue.put_nowait, (item, None))
            loop.call_soon_threadsafe(queue.put_nowait, (_END, None))
        except BaseException as exc:  # handed to the reader, raised there
            if not stop:
                loop.call_soon_threadsafe(queue.put_nowait, (_END, exc))

    loop.run_in_executor(_POOL, read)
    try:
        while True:
            item, error = await queue.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item
    finally:
        stop = True


def stream_assembly(protocol: str) -> StreamAssembly | None:
    """A new assembly for one streamed answer of `protocol`, or None when its provider has none."""
    make = getattr(get_provider(protocol), "stream_assembly", None)
    return make() if callable(make) else None


def to_dict(item: Any) -> Any:
    """An SDK event object as the JSON object it was sent as (the fields it carried, unknown
    ones too: the openai and anthropic models keep them)."""
    dump = getattr(item, "to_dict", None)
    return dump() if callable(dump) else item


async def assemble(events: AsyncIterator[Any], assembly: StreamAssembly, *,
                   on_delta: Callable[[StreamDelta], Any] | None = None) -> dict[str, Any]:
    """A streamed answer's body, assembled by its provider's `StreamAssembly`; each event's
    deltas go to `on_delta`. A stream that ends before its final event, or stalls past the
    client's timeout, or sends a malformed event raises the coded `ModelError` with the body as far
    as it came (`partial`), so nothing of it is run."""
    iterator = aiter(events)
    try:
        async for event in iterator:
            for delta in assembly.feed(event):
                if on_delta is not None:
                    on_delta(delta)
    except ToolbenchError as exc:
        error = exc if isinstance(exc, ModelError) else ModelError(exc.code, exc.message)
        error.partial = assembly.body()
        raise error from exc
    finally:
        close = getattr(iterator, "aclose", None)
        if callable(close):
            await close()
    if not assembly.complete:
        error = ModelError("model.stream_interrupted", "the stream ended before its final event; no call of this "
                           "answer ran")
        error.partial = assembly.body()
        raise error
    return assembly.body()
