"""A tiny provider on 127.0.0.1 for the tests that drive agents, cron and sampling through a
real SDK client: it answers each POST with the next queued (status, JSON body) and keeps the
request bodies. Bounded: the clients get a short timeout and no retries."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Provider:
    def __init__(self, answers: list[tuple[int, dict[str, Any]]]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.url = ""


@contextmanager
def local_provider(answers: list[tuple[int, dict[str, Any]]]) -> Iterator[Provider]:
    provider = Provider(answers)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                provider.requests.append(json.loads(body or b"{}"))
                provider.paths.append(self.path)
                status, answer = provider.answers.pop(0) if provider.answers else (500, {"error": "no answer left"})
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    provider.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def chat_body(text: str | None = None, calls: list[tuple[str, str, dict[str, Any]]] = ()) -> dict[str, Any]:
    """A Chat Completions response: a text, or calls of (id, name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in calls]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "local-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
