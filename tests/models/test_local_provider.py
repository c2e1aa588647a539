"""LocalProvider itself, with no SDK: answers in order, records requests, never hangs past its script."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from toolbench.testing import LocalProvider


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json",
                                                                       **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read()), dict(answer.headers.items())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers.items())


def test_answers_in_order_and_records_each_request() -> None:
    error = LocalProvider.error(429, LocalProvider.error_body("anthropic", 429, "slow down"), {"retry-after": "3"})
    with LocalProvider([LocalProvider.chat_text("hi"), error]) as provider:
        first = post(f"{provider.url}/v1/chat/completions", {"model": "m"}, {"X-Test": "1"})
        second = post(f"{provider.url}/v1/messages", {"model": "c"})
        third = post(f"{provider.url}/v1beta/models/g:generateContent", {"contents": []})
    assert first[0] == 200 and first[1]["choices"][0]["message"]["content"] == "hi"
    assert second[0] == 429 and second[1]["error"]["type"] == "rate_limit_error"
    assert second[2]["retry-after"] == "3"
    assert third[0] == 500 and third[1]["error"]["code"] == "script_exhausted"
    assert [(r.method, r.path, r.body) for r in provider.requests] == [
        ("POST", "/v1/chat/completions", {"model": "m"}), ("POST", "/v1/messages", {"model": "c"}),
        ("POST", "/v1beta/models/g:generateContent", {"contents": []})]
    assert provider.requests[0].headers["x-test"] == "1" and provider.remaining == 0


def test_the_url_needs_a_started_provider() -> None:
    with pytest.raises(RuntimeError):
        _ = LocalProvider().url


@pytest.mark.parametrize(("protocol", "key"), [("openai", "error"), ("anthropic", "error"), ("gemini", "error")])
def test_error_bodies_carry_the_message(protocol: str, key: str) -> None:
    assert LocalProvider.error_body(protocol, 401, "bad key")[key]["message"] == "bad key"
