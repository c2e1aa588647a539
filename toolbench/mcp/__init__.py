"""MCP servers as a tool source: register (stdio, streamable HTTP, in-process), discover, call.

The bench wires one `McpManager` in as `bench.mcp`. Tool ids are `mcp/<registration-id>:<tool>`;
the display name seeds call names. Modules: `_config` (registrations, `mcp.json`, ids),
`_transport` (SDK transports and the stream monitor), `_connection` (one session; every SDK
exception is translated there), `_tools` (which listed tools are offered), `_mapping` (the text a
model reads), `_entry` (per-server state and views), `_manager` (the facade), `_procs` (/proc).

Rules where the issue was silent:

- States: `pending` (registered, not connected: `connect=False`, or after `close()`), `active`,
  `disabled`, `failed`. A lost connection makes a server `failed` (`mcp.server_exited`); there is
  no automatic reconnect: `refresh()` reconnects servers that are not active and re-lists the
  others (`restart=True` reconnects all). `tools/list_changed` notifications are not followed.
- The timeout (default 60 s) bounds connecting + initialising + listing together, and each call
  separately (waiting for the per-server call lock is not counted).
- Outcomes: a request handed to the transport counts as sent. After that, a timeout, a closed
  connection or an answer over `max_response_chars` (default 2,000,000 characters: text, binary
  data and structured JSON) is `OutcomeUnknown("mcp.call_outcome_unknown")`, with the reason
  (`mcp.call_timeout`, `mcp.connection_lost`, `mcp.response_too_large`) in `structured`. A
  timeout keeps the server active (the SDK sends a cancel); a lost connection fails it. A call
  refused before it left (server not active, tool off or unknown, connection already closed, an
  HTTP POST that could not connect) is a plain `ToolError`.
- Invalid tools (see `_tools`): a name that is empty, over 128 characters, padded, or holds a
  non-printable character; an `inputSchema` that is not an object schema valid for its dialect;
  a duplicate name. Each is a diagnostic, not a descriptor, and is not callable.
- Descriptors carry the server's description verbatim and `server=<display name>`; MCP
  annotations (read-only hints) are not trusted; arguments are not checked against the schema
  here (the server does that).
- Stdio servers get the SDK's safe default environment plus `env`; their stderr goes to
  `<log_dir>/<registration-id>.stderr.log`, rewritten at each connect; the last line joins the
  diagnostic and `stderr_tail` keeps 20.
"""

from ._info import McpDiagnostic, McpServerInfo, McpToolInfo, Permission, ServerState
from ._manager import McpManager
from ._mapping import EMPTY_RESULT

__all__ = [
    "EMPTY_RESULT",
    "McpDiagnostic",
    "McpManager",
    "McpServerInfo",
    "McpToolInfo",
    "Permission",
    "ServerState",
]
