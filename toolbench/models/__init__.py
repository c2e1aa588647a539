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

from ._anthropic import Anthropic, read_messages
from ._base import Model, ModelError, ModelReply, StreamingModel, assemble, provider_error
from ._gemini import Gemini, read_generate
from ._openai import OpenAIChat, OpenAIResponses, read_chat, read_responses

Reader = Callable[[Mapping[str, Any]], ModelReply]
_READERS: dict[str, Reader] = {"openai": read_chat, "openai-responses": read_responses, "anthropic": read_messages,
                               "gemini": read_generate}


def reader_for(protocol: str) -> Reader:
    """The pure reader of a protocol's response bodies (text, usage, finish); a provider of
    the user's own gets an empty reading (its calls still decode through the provider)."""
    return _READERS.get(protocol, lambda body: ModelReply(dict(body)))


__all__ = ["Anthropic", "Gemini", "Model", "ModelError", "ModelReply", "OpenAIChat", "OpenAIResponses",
           "StreamingModel", "assemble", "provider_error", "reader_for"]
