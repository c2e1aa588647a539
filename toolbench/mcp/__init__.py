"""MCP servers as a tool source: register (stdio, streamable HTTP, in-process, any SDK transport),
discover, call; and the rest of a server: resources, prompts, completion, logs, ping.

The bench wires one `McpManager` in as `bench.mcp`. Tool ids are `mcp/<registration-id>:<tool>`;
the display name seeds call names. A transport is a value (`McpTransport`: `StdioTransport`,
`HttpTransport`, `InProcessTransport`, `SdkTransport`, or a subclass of your own), given as
`add(name, transport=...)`. Modules: `_config` (registration options, ids, `mcp.json` types),
`_mcp_json` (placeholders, `envFile`), `_roots` (a registration's roots: `"workspace"`, `False`
or folders), `_transport` (the transport classes), `_oauth` / `_sign_in` / `_token_store`
(OAuth: which SDK provider, the loopback sign-in, the token files), `_wire` (the stream monitor
and trace), `_connection` (one session; every SDK exception is caught there, `_failures` builds
the errors), `_client_side` (what the client declares and answers: roots, sampling, elicitation,
progress; `_requests` holds their values), `_tools` (which listed tools are offered,
outputSchema checks), `_mapping` (the text a model reads), `_entry` (per-server state,
lifecycle and views), `_manager` (the facade), `_procs` (process groups, stderr logs),
`_server_features` (resources, prompts, completions, log messages as values), `_notices` (what a
server says unasked: logs, resource updates, list changes), `_manager_features` (the facade's
methods beyond tools, mixed into `McpManager`).

Rules where the issue was silent:

- The handshake is the SDK's `mode="auto"`: `server/discover` (protocol 2026-07-28) first, then
  `initialize` when the server refuses it, so servers of either revision connect.
- HTTP servers that answer 401 are signed in to with OAuth (`_oauth`, `_sign_in`: the SDK's
  providers; tokens in `_token_store`, outside the workspace; `on_authorize` opens the URL).
- States: `pending` (registered, not connected: `connect=False`, or after `close()`), `active`,
  `disabled`, `failed`. A lost connection makes a server `failed` (`mcp.server_exited`); there is
  no automatic reconnect: `refresh()` reconnects servers that are not active and re-lists the
  others (`restart=True` reconnects all).
- List changes: `notifications/tools/list_changed` re-lists that server's tools in the background
  (one listing at a time; a listing that fails fails the server, as in `refresh()`).
  `resources/list_changed` and `prompts/list_changed` need nothing: those lists are not kept,
  each `resources()` / `prompts()` asks the server.
- Protocol revisions: on a 2026-07-28 session there is no ping, `logging/setLevel` or
  `resources/subscribe`, and a server says nothing unasked. `ping()` and `set_log_level()` raise
  `mcp.not_in_protocol`; `subscribe()` puts the URI on a `subscriptions/listen` stream, which the
  connection holds open while any resource is subscribed and reopens when the URIs change
  (events in between are not replayed); `on_resource_updated` gets the updates either way. The
  stream is not opened for tool-list changes (held for a whole session it would keep an HTTP
  connection open and a server from shutting down cleanly), so there `refresh()` re-lists them.
  Log messages reach a 2026-07-28 client only with requests that opt in to a level, which
  toolbench does not send, so `logs()` stays empty there.
- Requests beyond tools (see `_manager_features`) run beside the calls, not behind the per-call
  lock, each bounded by the timeout (a listing: all its pages, at most `MAX_PAGES`), and raise
  coded `ToolbenchError`s: `mcp.server_unavailable`, `mcp.capability_missing`,
  `mcp.not_in_protocol`, `mcp.request_failed`, `mcp.request_timeout`.
- The timeout (default 60 s) bounds connecting + initialising + listing together, and each call
  separately (waiting for the per-server call lock is not counted).
- Outcomes: a request handed to the transport counts as sent. After that, a timeout, a closed
  connection or an answer over `max_response_chars` (default 2,000,000 characters: text, binary
  data and structured JSON) is `OutcomeUnknown("mcp.call_outcome_unknown")`, with the reason
  (`mcp.call_timeout`, `mcp.connection_lost`, `mcp.response_too_large`) in `structured`. A
  timeout keeps the server active (the SDK sends a cancel); a lost connection fails it. A call
  refused before it left (server not active, tool off or unknown, connection already closed, an
  HTTP POST that could not connect) is a plain `ToolError`.
- Invalid tools (see `_tools`): a name that is empty, padded, or holds a non-printable
  character; an `inputSchema` that is not an object schema valid for its dialect; a duplicate
  name. Each is a diagnostic, not a descriptor, and is not callable. A name over the spec's 128
  characters is offered (as upstream does) with a warning (`warnings`, `mcp.tool_name_long`).
- Descriptors carry the server's description, `title`, `annotations` (the hints readOnlyHint,
  destructiveHint, idempotentHint, openWorldHint: recorded, not trusted) and `outputSchema`
  verbatim, and `server=<display name>`; arguments are not checked against the schema here (the
  server does that). A result whose `structuredContent` breaks the `outputSchema` is returned
  with a note (`mcp.structured_content_invalid` in `structured["diagnostics"]`), not refused.
- Client capabilities (see `_client_side`): roots per registration (`roots=`, see `_roots`): on
  `"workspace"` (the default) the workspace roots the manager's provider gives, declared when it
  has one and announced on a profile change (`roots_changed`, to these servers only); on a list
  of folders those (declared even while missing, with `mcp.roots_missing`); on `False` none, so a
  server such as server-filesystem keeps the folders it was started with. Sampling and
  elicitation while a handler is set (`on_sampling`, `on_elicitation`), since servers hide tools
  when they are not declared (`warnings` says so, `mcp.capability_not_offered`; never about the
  roots of a server registered with `roots=False`).
  Every call asks for progress (`on_progress`; the last events in `structured["progress"]`).
- Stdio servers get the SDK's safe default environment plus `env`, nothing of toolbench's own;
  their stderr goes to `<log_dir>/<registration-id>.stderr.log`, rewritten at each connect; the
  last line joins the diagnostic and `stderr_tail` keeps 20. A transport class says whether its
  server has such a log (`stderr_log`) and reports the process it started (`context.pid`).
- `mcp.json` (see `_config`, `_mcp_json`): `type` picks the transport class (`stdio`, `http`,
  `streamable-http`; `sse` is refused); `${env:NAME}` (VS Code, Cursor), `${NAME}` and
  `${NAME:-default}` (Claude Code) and `${userHome}` are expanded in command, args, env, cwd,
  url, headers and roots, and `envFile` is read; an unset variable without a default is
  `mcp.config_invalid`.
"""

from ..core.naming import mcp_name_changes, plain_mcp_name
from ._client_side import workspace_roots
from ._config import read_mcp_json
from ._connection import MAX_PAGES
from ._info import McpDiagnostic, McpServerInfo, McpToolInfo, Permission, ServerState
from ._manager import McpManager
from ._mapping import EMPTY_RESULT
from ._mcp_json import expanded_values
from ._notices import MAX_LOGS
from ._oauth import OAuth
from ._requests import ElicitationRequest, ProgressEvent, SamplingRequest
from ._server_features import (
    LOG_LEVELS,
    Completion,
    LogLevel,
    LogMessage,
    McpPrompt,
    McpPromptArgument,
    McpResource,
    McpResourceTemplate,
    PromptMessage,
    PromptResult,
    ResourceContent,
    ResourceRead,
    ResourceUpdate,
)
from ._token_store import default_token_dir
from ._transport import HttpTransport, InProcessTransport, McpTransport, SdkTransport, StdioTransport, TransportContext
from ._transport_types import register_transport_type, transport_notices, transport_types, unregister_transport_type
from ._wire import TraceMessage

__all__ = [
    "EMPTY_RESULT",
    "LOG_LEVELS",
    "MAX_LOGS",
    "MAX_PAGES",
    "Completion",
    "ElicitationRequest",
    "HttpTransport",
    "InProcessTransport",
    "LogLevel",
    "LogMessage",
    "McpDiagnostic",
    "McpManager",
    "McpPrompt",
    "McpPromptArgument",
    "McpResource",
    "McpResourceTemplate",
    "McpServerInfo",
    "McpToolInfo",
    "McpTransport",
    "OAuth",
    "Permission",
    "ProgressEvent",
    "PromptMessage",
    "PromptResult",
    "ResourceContent",
    "ResourceRead",
    "ResourceUpdate",
    "SamplingRequest",
    "SdkTransport",
    "ServerState",
    "StdioTransport",
    "TraceMessage",
    "TransportContext",
    "default_token_dir",
    "expanded_values",
    "mcp_name_changes",
    "plain_mcp_name",
    "read_mcp_json",
    "register_transport_type",
    "transport_notices",
    "transport_types",
    "unregister_transport_type",
    "workspace_roots",
]
