"""A local stand-in for the providers' HTTP APIs, for running the real SDK clients offline.

    from toolbench.testing import LocalProvider
    from toolbench.models import OpenAIChat

    with LocalProvider([LocalProvider.chat_calls([("dice_roll", {"formula": "d6"})]),
                        LocalProvider.chat_text("You rolled a 4.")]) as provider:
        run = inv.run(OpenAIChat(provider.openai(), "gpt-4.1"), "Roll a d6")
    provider.requests[1].body["messages"]  # exactly what the SDK sent in round 2

`LocalProvider(script)` serves HTTP on 127.0.0.1 (a free port) from a daemon thread. Every POST
(Chat Completions `/v1/chat/completions`, Responses `/v1/responses`, Messages `/v1/messages`,
Gemini `/v1beta/models/{model}:generateContent`, from sync and async clients alike) takes the
next answer of the script: a response body (a dict, answered 200) or an `Answer` made by
`LocalProvider.error(...)`, `.hang_up()` (the connection closes without an answer) or
`.stall()` (no answer until the provider closes: a client's timeout fires first). A request past
the end of the script is answered 500 with a body that says so, so a test never hangs on it.
`.requests` records each request (method, path, headers, parsed JSON body, and `streamed`: it
asked for a stream).

Streams: a request that asks for one (a JSON body with `"stream": true` on the first three APIs,
Gemini's `:streamGenerateContent` path) and is scripted a 200 body is answered with that body as
the server-sent events its API sends (`text/event-stream`, HTTP/1.1 chunked, each event written
and flushed on its own; the protocol is told by the path; see `toolbench._testing_streams`). An
error answer to it is the status and JSON body as for any request. `LocalProvider.stream(body,
...)` scripts a stream with faults (served as a stream whatever the request asked):

- `cut_after=N`: N events, then the connection closes mid-body (mid tool-call arguments when N
  falls there): the client reads an incomplete chunked body;
- `stall_after=N`: N events, then nothing until the provider closes (at most STALL_LIMIT s): a
  client's read timeout fires;
- `malformed_after=N`: N events, then one whose data is `{not json` (named as the event it
  replaces), and the body ends;
- `drop_final=True`: the closing events are left out (Chat: the finish chunk, usage chunk and
  `[DONE]`; Responses: response.completed; Anthropic: message_delta and message_stop; Gemini: the
  last chunk, with finishReason) and the body ends cleanly;
- `chunk=8`: the length of the text and argument fragments.

The canned bodies (`chat_calls`, `responses_calls`, `anthropic_calls`, `gemini_calls`, their
`*_text` answers, refusals and `error_body`) have the providers' documented shapes, usage blocks,
thinking blocks with signatures, reasoning items with `encrypted_content` and Gemini
`thoughtSignature` parts included; `usage=None` leaves the usage block out, `thinking=None`,
`reasoning=None`, `thought=None` and `signature=None` the thinking state (see
`toolbench.protocols._bodies`, which also makes `ScriptedModel`'s answers). For any provider, a
registered or installed one too, `LocalProvider.text_body(protocol, text)`,
`.calls_body(protocol, calls)` and `.error_body(protocol, status, message)` are its own bare
bodies (`Provider.text_body`, ...): `usage=(input, output)` adds a usage block.

The SDKs are imported only by the client conveniences (`openai()`, `anthropic()`, `gemini()`, ...):
they are test extras, not dependencies. Each client is built with retries off, so a 429 or a
500 reaches the run as it was answered.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from . import _testing_streams as streams
from .protocols import _bodies as bodies
from .protocols import full_provider

# How long a stalled answer waits for the provider to close, at most (a client's timeout is
# meant to fire long before; this only bounds a test that forgot to set one).
STALL_LIMIT = 30.0


@dataclass(frozen=True, slots=True)
class Answer:
    """One scripted answer: a status, a JSON body, headers; or a hang-up or a stall; or a stream
    of the body with `faults`."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    action: str = "answer"  # "answer" | "hang_up" | "stall" | "stream"
    faults: streams.Faults = field(default_factory=streams.Faults)


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """A request the provider received: header names in lower case, `body` the parsed JSON (None
    if it was not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    streamed: bool = False  # it asked for a stream: `"stream": true`, or Gemini's streaming path


class LocalProvider:
    """The scripted HTTP server (see the module docstring); a context manager."""

    # canned bodies ---------------------------------------------------------------------------
    chat_calls = staticmethod(bodies.chat_calls)
    chat_text = staticmethod(bodies.chat_text)
    chat_refusal = staticmethod(bodies.chat_refusal)
    responses_calls = staticmethod(bodies.responses_calls)
    responses_text = staticmethod(bodies.responses_text)
    responses_refusal = staticmethod(bodies.responses_refusal)
    anthropic_calls = staticmethod(bodies.anthropic_calls)
    anthropic_text = staticmethod(bodies.anthropic_text)
    anthropic_refusal = staticmethod(bodies.anthropic_refusal)
    gemini_calls = staticmethod(bodies.gemini_calls)
    gemini_text = staticmethod(bodies.gemini_text)
    gemini_safety = staticmethod(bodies.gemini_safety)

    @staticmethod
    def error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
        """The error body the provider's API answers with `status` (`Provider.error_body`)."""
        return full_provider(protocol).error_body(status, message)

    @staticmethod
    def text_body(protocol: str, text: str, **options: Any) -> dict[str, Any]:
        """A bare answer of `text` in the provider's shape (`n=`, `usage=(input, output)`, `model=`)."""
        return full_provider(protocol).text_body(text, **options)

    @staticmethod
    def calls_body(protocol: str, calls: Sequence[Sequence[Any]], **options: Any) -> dict[str, Any]:
        """A bare answer making `calls` in the provider's shape (`n=`, `text=`, `usage=`, `model=`)."""
        return full_provider(protocol).calls_body(calls, **options)

    def __init__(self, script: Sequence[Mapping[str, Any] | Answer] = ()) -> None:
        self._script: list[Answer] = [a if isinstance(a, Answer) else Answer(body=dict(a)) for a in script]
        self.requests: list[ProviderRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # answers ---------------------------------------------------------------------------------
    @staticmethod
    def error(status: int, body: Any = None, headers: Mapping[str, str] | None = None) -> Answer:
        """An error answer: `LocalProvider.error(429, LocalProvider.error_body("openai", 429,
        "Rate limit reached"), {"retry-after": "1"})`; without a body, a generic one."""
        return Answer(status, body if body is not None else {"error": {"message": f"error {status}"}},
                      dict(headers or {}))

    @staticmethod
    def hang_up() -> Answer:
        """The server closes the connection without answering."""
        return Answer(action="hang_up")

    @staticmethod
    def stall() -> Answer:
        """The server holds the request unanswered until the provider closes (at most STALL_LIMIT s)."""
        return Answer(action="stall")

    @staticmethod
    def stream(body: Mapping[str, Any], *, cut_after: int | None = None, stall_after: int | None = None,
               malformed_after: int | None = None, drop_final: bool = False, chunk: int = 8) -> Answer:
        """`body` streamed as its API's events, with a fault (see the module docstring):
        `LocalProvider.stream(LocalProvider.chat_calls(calls), cut_after=5)`."""
        return Answer(body=dict(body), action="stream",
                      faults=streams.Faults(cut_after, stall_after, malformed_after, drop_final, chunk))

    def add(self, *answers: Mapping[str, Any] | Answer) -> None:
        """Append answers to the script (while serving too)."""
        with self._lock:
            self._script.extend(a if isinstance(a, Answer) else Answer(body=dict(a)) for a in answers)

    @property
    def remaining(self) -> int:
        """Scripted answers not served yet."""
        with self._lock:
            return max(0, len(self._script) - len(self.requests))

    # serving ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (no trailing slash, no version)."""
        if self._server is None:
            raise RuntimeError("the LocalProvider is not started: use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> LocalProvider:
        if self._server is None:
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
            self._server.daemon_threads = True
            # polled every 50 ms, so closing (which waits for the loop to notice) is quick
            self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                            name="toolbench-local-provider", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # releases stalled answers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> LocalProvider:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _take(self, request: ProviderRequest) -> Answer:
        with self._lock:
            n = len(self.requests)
            self.requests.append(request)
            if n < len(self._script):
                return self._script[n]
        return Answer(500, {"error": {"type": "script_exhausted", "code": "script_exhausted", "message":
                                      f"LocalProvider: the script has {len(self._script)} answers and request "
                                      f"{n + 1} ({request.method} {request.path}) was not scripted"}})

    # clients (SDK imports are lazy: the SDKs are test extras) ---------------------------------
    def openai(self, **options: Any) -> Any:
        """`openai.OpenAI` on this server, no retries, key "test"."""
        import openai

        return openai.OpenAI(**{"base_url": f"{self.url}/v1", "api_key": "test", "max_retries": 0, **options})

    def async_openai(self, **options: Any) -> Any:
        import openai

        return openai.AsyncOpenAI(**{"base_url": f"{self.url}/v1", "api_key": "test", "max_retries": 0, **options})

    def anthropic(self, **options: Any) -> Any:
        """`anthropic.Anthropic` on this server (the SDK adds `/v1/messages`), no retries."""
        import anthropic

        return anthropic.Anthropic(**{"base_url": self.url, "api_key": "test", "max_retries": 0, **options})

    def async_anthropic(self, **options: Any) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**{"base_url": self.url, "api_key": "test", "max_retries": 0, **options})

    def gemini(self, *, timeout_ms: int | None = None) -> Any:
        """`google.genai.Client` on this server (the Gemini API, `v1beta`), one attempt per
        request: `HttpRetryOptions(attempts=1)` also turns off the async client's own retry of
        connection errors, which runs when no retry options are set. Its async face is `.aio`.
        `timeout_ms` is the SDK's timeout, in milliseconds."""
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url=self.url, api_version="v1beta", timeout=timeout_ms,
                                    retry_options=types.HttpRetryOptions(attempts=1))
        return genai.Client(api_key="test", http_options=options)


def _handler(provider: LocalProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            streamed = ":streamGenerateContent" in self.path or (isinstance(body, dict) and body.get("stream") is True)
            answer = provider._take(ProviderRequest(self.command, self.path, headers, body, streamed))
            if answer.action == "stream" or (streamed and answer.action == "answer" and answer.status < 400
                                             and isinstance(answer.body, Mapping)):
                self._stream(answer)
                return
            if answer.action == "stall":
                provider._closing.wait(STALL_LIMIT)
            if answer.action != "answer":
                self.close_connection = True
                return  # nothing written: the client sees the connection close
            payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            for key, value in {"content-type": "application/json", **answer.headers}.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, answer: Answer) -> None:
            protocol = _protocol(self.path)
            if protocol is None:
                self._fail(f"LocalProvider: a stream on {self.path} (no API streams there)")
                return
            sent, end = streams.plan(protocol, answer.body, answer.faults)
            self.protocol_version = "HTTP/1.1"  # chunked, so a cut is an incomplete body, not its end
            self.close_connection = True
            self.send_response(answer.status)
            for key, value in {"content-type": "text/event-stream", "cache-control": "no-cache",
                               **answer.headers}.items():
                self.send_header(key, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                for event in sent:
                    data = streams.encode(event)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))  # unbuffered: one send per event
                if end == "stall":
                    provider._closing.wait(STALL_LIMIT)
                if end == "end":
                    self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass  # the client went away (it timed out, or stopped reading)

        def _fail(self, message: str) -> None:
            payload = json.dumps({"error": {"type": "not_scripted", "code": "not_scripted",
                                            "message": message}}).encode()
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST  # an unexpected GET is recorded and answered the same way

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a test's output stays clean

    return Handler


def _protocol(path: str) -> str | None:
    """The API a path belongs to (the query left out)."""
    path = path.split("?", 1)[0]
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith((":streamGenerateContent", ":generateContent")):
        return "gemini"
    return None


__all__ = ["Answer", "LocalProvider", "ProviderRequest"]
