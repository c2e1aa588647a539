"""Models for `inv.run`: adapters over the providers' official SDK clients.

Each takes a client the user built (so keys, base URLs, proxies and retries are the SDK's own)
and a model name; it knows its protocol, so a run's request carries exactly
`inv.snapshot.render(protocol)` and the run's transcript in that provider's shape:

    from openai import OpenAI
    from toolbench.models import OpenAIChat
    run = inv.run(OpenAIChat(OpenAI(), "gpt-4.1"), "List the notes folder")

`OpenAIChat` serves any OpenAI-compatible server (`OpenAI(base_url="http://localhost:11434/v1",
api_key="ollama")` for Ollama). A model of your own implements `Model` (see `_base`);
`toolbench.testing.ScriptedModel` is the offline one.
"""

from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import ToolbenchError
from ..protocols import full_provider
from ._anthropic import Anthropic
from ._base import Model, ModelError, ModelReply, StreamingModel, assemble, provider_error, stream_assembly
from ._gemini import Gemini
from ._openai import OpenAIChat, OpenAIResponses

Reader = Callable[[Mapping[str, Any]], ModelReply]


def reader_for(protocol: str) -> Reader:
    """The pure reader of a protocol's response bodies (text, usage, finish): its provider's
    `read_reply`. A provider with only `Provider`'s six methods, or a name no longer known (a
    run log of a provider that is not registered now), gets an empty reading."""
    try:
        return full_provider(protocol).read_reply
    except ToolbenchError as exc:
        if exc.code != "protocol.unknown":
            raise
        return lambda body: ModelReply(dict(body))


__all__ = ["Anthropic", "Gemini", "Model", "ModelError", "ModelReply", "OpenAIChat", "OpenAIResponses",
           "StreamingModel", "assemble", "provider_error", "reader_for", "stream_assembly"]
