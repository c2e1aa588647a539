"""Gemini's generateContent through the official `google-genai` client.

The recorded request is the REST body (`contents`, `systemInstruction`, `tools`, `toolConfig`,
`generationConfig`) and it is the body that goes over the wire: the adapter calls
`client.models.generate_content` (or `client.aio.models...` when `aio=True`) with the body's
fields as the request's `http_options.extra_body`, which the SDK merges over its own converted
body (so its reshaping, e.g. `parameters_json_schema` for `parametersJsonSchema`, does not reach
the wire). The reply is the raw response body (`should_return_http_response`), every field kept.
The client's own `http_options` (base URL, timeout, retries, headers) still apply; an
`extra_body` set on the client is replaced by the request's."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._base import ModelError, ProviderShaped, call_sdk, raw_json, sdk_stream

# generateContent's top-level fields besides contents; every other option is a generationConfig field.
_TOP_LEVEL = frozenset({"safetySettings", "cachedContent", "labels"})


def _chunk(response: Any) -> dict[str, Any]:
    return raw_json(getattr(response, "body", None))


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


class Gemini(ProviderShaped):
    """`Gemini(genai.Client(), "gemini-2.5-flash", temperature=0, thinking_config={...})`;
    options are GenerateContentConfig fields (snake_case or camelCase). `aio=True` uses the
    client's async face."""

    protocol = "gemini"

    def __init__(self, client: Any, model: str, *, aio: bool = False, protocol: str | None = None,
                 **options: Any) -> None:
        self.client, self.model, self.aio = client, model, aio
        self.options = {_camel(k): v for k, v in options.items()}
        self._speak(protocol)

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body = self.provider.request_body(self.model, system=system, messages=messages, tools=tools,
                                          tool_choice=tool_choice)
        generation = body.pop("generationConfig", {})
        body.update({k: v for k, v in self.options.items() if k in _TOP_LEVEL})
        generation = {**generation, **{k: v for k, v in self.options.items() if k not in _TOP_LEVEL}}
        body["generationConfig"] = generation  # the SDK sends one, empty or not: the record is the wire
        return body

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        # The SDK's converters would reshape the body (a FunctionDeclaration's
        # `parametersJsonSchema` goes out as `parameters_json_schema`); its per-request
        # `http_options.extra_body` is merged over the converted body, so the REST body goes out
        # as built and recorded. `should_return_http_response` hands back the raw answer.
        # Lists are replaced whole, so `contents` goes too (the SDK would send an image part's
        # `inlineData.mimeType` as `inline_data.mime_type`).
        config = {"http_options": {"extra_body": dict(body)}, "should_return_http_response": True}
        models = self.client.aio.models if self.aio else self.client.models
        response = await call_sdk(models.generate_content, model=self.model, contents=body["contents"],
                                  config=config)
        raw = getattr(getattr(response, "sdk_http_response", None), "body", None)
        if not isinstance(raw, str):
            raise ModelError("model.invalid_response", f"the SDK answered {type(response).__name__} without a body")
        return raw_json(raw)

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The chunks of `:streamGenerateContent?alt=sse` as received. The SDK's
        `generate_content_stream` refuses raw access to its chunks (and its converters drop the
        fields it does not model), so this calls the request method that function calls, with
        the REST body as built: the client's base URL, key, headers, timeout and retries apply."""
        api = (self.client.aio if self.aio else self.client)._api_client
        from google.genai import _transformers  # the SDK's own model path: models/..., publishers/...

        path = f"{_transformers.t_model(api, self.model)}:streamGenerateContent?alt=sse"
        request = api.async_request_streamed if self.aio else api.request_streamed
        return sdk_stream(functools.partial(request, "post", path, dict(body)), _chunk)

    def __repr__(self) -> str:
        return f"Gemini({self.model!r})"
