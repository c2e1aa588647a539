"""The two error families and every error code toolbench uses.

    Exception
     +-- ToolbenchError      misuse of the library, invalid configuration, storage failures:
     |                       raised to the developer, never shown to a model as a result.
     +-- ToolError           a recoverable outcome a tool reports to the model: the runtime
                             turns it into a ToolResult with is_error=True and that code.

Codes are dotted strings, stable across versions: tests, notebooks and models key on them,
never on the sentence. `CODES` lists each with one line of meaning.
"""

from __future__ import annotations

from typing import Any

CODES: dict[str, str] = {
    # identity
    "tool.id_invalid": "a ToolId has no `:` separating provider and native name",
    "tool.provider_id_empty": "a ToolId's provider part is empty",
    "tool.provider_id_invalid": "a ToolId's provider part is not builtin, mcp/<id> or extension/<id>",
    "tool.native_name_empty": "a ToolId's native name is empty",
    "extension.tool_identity_required": "an extension tool needs a non-blank extension id and name",
    # arguments
    "tool.invalid_arguments": "the call's arguments are not a JSON object, or break the tool's schema",
    # catalog, descriptors, snapshots
    "tool.catalog_duplicate_id": "two tools in one catalog share a ToolId",
    "tool.description_override_unknown_property": "a description override names a parameter the tool lacks",
    "tool.description_override_properties_invalid": "a description override's properties is not an object",
    "tool.description_override_property_schema_invalid": "the overridden parameter's schema is not an object",
    "agent.tool_override_invalid": "an external tool's description override is invalid; the tool is left out",
    "tool.snapshot_budget_invalid": "a snapshot's total budget is 0",
    "tool.snapshot_duplicate_id": "a snapshot binds the same ToolId twice",
    "tool.snapshot_duplicate_alias": "a snapshot gives two tools the same call name",
    "tool.snapshot_alias_empty": "a snapshot binding has an empty call name",
    "tool.snapshot_tool_budget_invalid": "a binding's per-tool budget is 0",
    "tool.snapshot_id_empty": "a snapshot has an empty id",
    "tool.snapshot_schema_unsupported": "a stored snapshot has a schemaVersion other than 1",
    # profiles
    "agent.profile_invalid": "a profile has a wrong type, an unknown key or a bad value",
    "agent.profile_unknown_tool": "a profile names a builtin tool that does not exist",
    "extension.tool_unavailable": "an extension tool is enabled or offered but not registered",
    # the gate and the turn
    "model.unknown_tool_call": "the model called a name that is not in the invocation's snapshot",
    "agent.tool_budget_exhausted": "the invocation's or the tool's call budget is used up",
    "agent.tool_after_finish": "a completion tool was not the last call of its round",
    "agent.tool_not_started": "the call was refused before its tool started (pairing result)",
    "agent.invocation_blocked": "an earlier call's outcome is unknown; the invocation takes no more calls",
    # dispatch
    "extension.tool_error": "an extension tool raised or reported an error",
    "mcp.call_outcome_unknown": "an MCP call may have run but its result was lost; the invocation is blocked",
    "tool.result_identity_mismatch": "a tool returned a result for another call or tool",
    "tool.internal_error": "a builtin tool failed unexpectedly; the message says how",
    # storage
    "storage.write_failed": "a runtime file could not be written",
    "storage.already_exists": "a write-once runtime file exists already",
    "storage.run_log_invalid": "a stored run log could not be read back",
    # misuse
    "bench.closed": "the workbench was closed",
    "bench.misuse": "the library was called in a way it does not support",
}


class ToolbenchError(Exception):
    """A developer-facing error: misuse, invalid configuration or a storage failure."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ToolError(Exception):
    """A recoverable outcome for the model; becomes an error `ToolResult` with this code.

    `structured` is kept in the records (never sent to the model)."""

    def __init__(self, code: str, message: str, *, structured: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.structured = structured


class OutcomeUnknown(ToolError):
    """The request may have reached the tool, but no result came back (a server died, a
    connection broke after sending). The runtime records the result and blocks the invocation:
    repeating the call could repeat its effect."""

