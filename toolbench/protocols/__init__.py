"""Provider protocols: pure functions from tools and calls to what each provider's API takes.

    render(protocol, tools)             the `tools` list for a request
    check(tools)                        name and schema problems, per provider, with the rule broken
    decode_calls(protocol, response)    a response body's tool calls, raw arguments kept
    decode_response(protocol, response) the calls and the assistant turn to replay with them
    decode_results(protocol, request)   the tool results a request's history carried (replay)
    encode_history(protocol, rounds)    past calls and their results as provider messages
    encode_result(protocol, exchange)   one result as the provider takes it (text and attachments)
    abridge(value)                      JSON for display, base64 payloads cut short
    encode_tool_choice(protocol, ...)   none / auto / required / a specific tool
    golden(tools), diff(before, after)  a tool list kept as a golden file, and what changed

Protocols: "openai" (Chat Completions), "openai-responses", "anthropic" (Messages), "gemini",
and any provider a user adds. Each function takes a name or a `Provider` object:

    register(provider) / unregister(name)   make a provider known by name (CLI, widgets too)
    names()                                 every name, the built-in ones (`PROTOCOLS`) first
    get_provider(name_or_provider)          the provider a name stands for
    full_provider(name_or_provider)         the same with its model side (`FullProvider`)
    notices()                               installed providers that were skipped, and why
    ChatCompletionsProvider("mistral", ...) an OpenAI-shaped API with its own name rules
    ResponsesProvider(...), BaseProvider    the Responses shape; a base for a new shape
    ImageLimits(max_side=..., ...)          what an API refuses of an image (`image_limits`)
    provider.stream_assembly()              a streamed answer put back together (`StreamAssembly`,
                                            each event's `StreamDelta`s)

A provider is one object for everything provider-specific: the six methods of `Provider`
(render, check, decode, encode history, a result, a tool choice) and its model side
(`FullProvider`: `read_reply` for a reply's text, usage and finish; `user_message`,
`system_messages` and `request_body`; `sampling_message` and `sampling_limits` for MCP
sampling; `answer_messages` for a sub-agent's text answers; `looks_like` for replay's shape
detection; `text_body`, `calls_body`, `error_body` for `ScriptedModel` and `LocalProvider`).
`BaseProvider` has the model side (the built-in shapes' own, so `ChatCompletionsProvider("x")`
reads and answers as OpenAI's API does); a provider with only the six methods still works
where it did, with an empty reading of replies (`full_provider`).

Installed packages add providers through the entry-point group `toolbench.providers` (one
entry point per provider, named as it is: `mistral = "tb_mistral:MISTRAL"`, a provider or a
zero-argument callable making one); they load on the first lookup of a name that is not built
in, and one that cannot be used is skipped with a notice (`notices()`), never an error.

No I/O happens here; the runtime wires these into snapshots and transcripts.
"""

from ._api import (
    check,
    decode_calls,
    decode_response,
    decode_result,
    decode_results,
    encode_history,
    encode_result,
    encode_tool_choice,
    render,
)
from ._base import BaseProvider, TurnPart
from ._diff import ToolListDiff, diff, golden
from ._media import ImageLimits, pixel_size
from ._openai_chat import ChatCompletionsProvider
from ._openai_responses import ResponsesProvider
from ._registry import full_provider, get_provider, names, notices, register, unregister
from ._results import abridge
from .types import (
    GEMINI_SCHEMAS,
    PROTOCOLS,
    AssistantTurn,
    AttachmentView,
    DecodedCall,
    DecodedResponse,
    Exchange,
    FullProvider,
    GeminiSchema,
    ModelReply,
    Problem,
    ProtocolName,
    Provider,
    RecordedResult,
    RenderableTool,
    RenderOptions,
    ResultView,
    Round,
    StreamAssembly,
    StreamDelta,
    ToolDescriptorLike,
)

__all__ = [
    "GEMINI_SCHEMAS",
    "PROTOCOLS",
    "AssistantTurn",
    "AttachmentView",
    "BaseProvider",
    "ChatCompletionsProvider",
    "DecodedCall",
    "DecodedResponse",
    "Exchange",
    "FullProvider",
    "GeminiSchema",
    "ImageLimits",
    "ModelReply",
    "Problem",
    "ProtocolName",
    "Provider",
    "RecordedResult",
    "RenderOptions",
    "RenderableTool",
    "ResponsesProvider",
    "ResultView",
    "Round",
    "StreamAssembly",
    "StreamDelta",
    "ToolDescriptorLike",
    "ToolListDiff",
    "TurnPart",
    "abridge",
    "check",
    "decode_calls",
    "decode_response",
    "decode_result",
    "decode_results",
    "diff",
    "encode_history",
    "encode_result",
    "encode_tool_choice",
    "full_provider",
    "get_provider",
    "golden",
    "names",
    "notices",
    "pixel_size",
    "register",
    "render",
    "unregister",
]
