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
    "tool.provider_id_invalid": "a ToolId's provider part is not builtin, mcp/<id>, extension/<id> or <kind>/<id>",
    "tool.source_unavailable": "a tool of a source's own kind is enabled or offered but its source offers it not",
    "tool.native_name_empty": "a ToolId's native name is empty",
    "extension.tool_identity_required": "an extension tool needs a non-blank extension id and name",
    # arguments
    "tool.schema_invalid": "the tool's own input schema cannot be compiled (a $ref that does not resolve, "
    "not JSON Schema); the call is not run and retrying will not help",
    "tool.invalid_arguments": "the call's arguments are not a JSON object, or break the tool's schema",
    # catalog, descriptors, snapshots
    "tool.catalog_duplicate_id": "two tools in one catalog share a ToolId",
    "tool.description_override_unknown_property": "a description override names a parameter the tool lacks",
    "tool.description_override_properties_invalid": "a description override's properties is not an object",
    "tool.description_override_property_schema_invalid": "the overridden parameter's schema is not an object",
    "tool.scene_excluded": "the tool is not offered in this scene (diagnostic)",
    "agent.return_mode_excluded": "a delegated child does not get this tool (diagnostic)",
    "mcp.tool_unavailable": "no active MCP server offers this tool (diagnostic)",
    "tool.not_implemented": "a known upstream builtin this version does not offer yet (diagnostic)",
    "tool.cancelled": "the call was cancelled before it finished",
    "model.invalid_tool_call": "a tool call is malformed (e.g. a call id used twice in one round)",
    "tool.snapshot_invalid": "a stored snapshot does not have the snapshot's shape",
    "agent.tool_override_invalid": "an external tool's description override is invalid; the tool is left out",
    "tool.snapshot_budget_invalid": "a snapshot's total budget is 0",
    "tool.snapshot_duplicate_id": "a snapshot binds the same ToolId twice",
    "tool.snapshot_duplicate_alias": "a snapshot gives two tools the same call name",
    "tool.snapshot_alias_empty": "a snapshot binding has an empty call name",
    "tool.snapshot_tool_budget_invalid": "a binding's per-tool budget is 0",
    "tool.snapshot_id_empty": "a snapshot has an empty id",
    "tool.snapshot_schema_unsupported": "a stored snapshot has a schemaVersion other than 1",
    "tool.turn_tool_not_in_snapshot": "a turn contract names a tool its snapshot does not offer",
    "tool.turn_duplicate_id": "a turn contract names a tool twice",
    "tool.turn_specific_not_available": "a turn contract's choice names a tool that is not among its tools",
    "tool.turn_required_empty": "a turn contract's choice is `required` but it offers no tools",
    # profiles
    "agent.profile_invalid": "a profile has a wrong type, an unknown key or a bad value",
    "agent.profile_unknown_tool": "a profile names a builtin tool that does not exist",
    "agent.profile_schema_unsupported": "a profile's schemaVersion is newer (or other) than this version reads",
    "agent.profile_migrated": "an older or TauriTavern profile was read in the current form (migration note)",
    "agent.profile_tool_prefixed": "a bare tool name in an older profile was read as `builtin:<name>` (migration note)",
    "agent.profile_tool_retired": "a retired builtin (skill.*, agent.list) was dropped from a profile (migration note)",
    "agent.profile_key_renamed": "a legacy profile key was renamed or moved (migration note)",
    "agent.profile_key_dropped": "an upstream profile key toolbench does not use was dropped (migration note)",
    "extension.tool_unavailable": "an extension tool is enabled or offered but not registered",
    # the gate and the turn
    "model.unknown_tool_call": "the model called a name that is not in the invocation's snapshot",
    "model.tool_not_in_turn": "the model called a snapshot tool the round's turn contract does not offer",
    "model.tool_choice_violation": "a call breaks the round's tool choice (`none`, or another tool than the one named)",
    "agent.max_tool_rounds_exceeded": "the invocation used the profile's `run.maxRounds` rounds; the run stops",
    "agent.tool_budget_exhausted": "the invocation's or the tool's call budget is used up",
    "agent.tool_after_finish": "a completion tool was not the last call of its round",
    "agent.tool_not_started": "the call was refused before its tool started (pairing result)",
    "agent.invocation_blocked": "an earlier call's outcome is unknown; the invocation takes no more calls",
    # dispatch
    "extension.tool_error": "an extension tool raised or reported an error",
    "extension.tool_timeout": "an extension tool did not finish in its time limit; it may still be running",
    "mcp.call_outcome_unknown": "an MCP call may have run but its result was lost; the invocation is blocked",
    "tool.result_identity_mismatch": "a tool returned a result for another call or tool",
    "tool.internal_error": "a builtin tool failed unexpectedly; the message says how",
    "tool.approval_required": "the tool asks for approval and no approval handler is set (bench.on_approval)",
    "tool.approval_denied": "the user (the approval handler) denied the call",
    "tool.approval_timeout": "no approval decision came in time",
    "tool.timeout": "a builtin tool did not finish in its time limit (profile tools.builtinTimeoutSeconds)",
    # workspace paths and files
    "workspace.invalid_path": "a path has NUL, `..`, a drive letter, `:` in a segment, a UNC form or an over-long name",
    "workspace.path_not_visible": "a path lies in a root tools cannot see (runtime folders, a link leaving it)",
    "workspace.path_not_writable": "a write or delete targets a read-only root (tool-results/, skills/, ...)",
    "workspace.file_not_found": "a path does not exist; up to 5 did-you-mean sibling names are given",
    "workspace.path_is_directory": "a file operation names a folder (or a root)",
    "workspace.root_not_deletable": "delete was asked to remove a workspace root",
    "workspace.directory_not_empty": "delete of a non-empty folder without recursive=true",
    "workspace.stale_file": "a replace or patch without a full, current read (upstream patch_stale_file)",
    "workspace.file_not_text": "a file tool met a binary or non-UTF-8 file",
    "workspace.file_too_large": "a file is larger than the workspace's max_file_bytes",
    "workspace.line_out_of_range": "read_file's start_line is past the end of the file",
    "workspace.media_mismatch": "read_file: a file's bytes are not the image or PDF format its extension names",
    "workspace.media_unreadable": "read_file: an image's header is broken or cut short, so it has no pixel size",
    "workspace.image_too_large": "read_file: an image is over the 5 MiB a provider takes in one request",
    "workspace.page_out_of_range": "read_file's page_start is past the last page of the PDF",
    "workspace.pdf_encrypted": "read_file: a PDF needs a password (an empty user password is tried)",
    "workspace.pdf_no_text": "read_file: no page of the window has extractable text (scanned or image-only pages)",
    "workspace.pdf_unreadable": "read_file: pypdf could not parse a file that starts like a PDF",
    "workspace.regex_invalid": "search_files' query is not a valid regular expression",
    "workspace.glob_invalid": "a glob pattern could not be parsed",
    "workspace.io_error": "the operating system refused to read or write a workspace file",
    "workspace.file_not_regular": "a path names a FIFO, socket or device; file tools read and write regular files only",
    "workspace.parent_not_directory": "a part of the path's parent is a file, so nothing can be created beneath it",
    # workspace edits
    "workspace.edit_no_match": "an Edit's old_string was found by no pass (exact, line endings, trailing ws, indent)",
    "workspace.edit_ambiguous": "an Edit's old_string matched several places and replace_all was not set",
    "workspace.edit_count_mismatch": "an Edit's expected_replacements differs from the count it would apply",
    # provider protocols (render, decode, encode)
    "protocol.unknown": "neither a registered provider name (built in: openai, openai-responses, anthropic, "
                        "gemini) nor a Provider object",
    "protocol.name_taken": "a provider name is built in or already registered (register(..., replace=True) "
                           "replaces a registered one)",
    "protocol.plugin_skipped": "an installed provider (entry point `toolbench.providers`) could not be used; "
                               "toolbench.protocols.notices() says which and why",
    "mcp.transport_plugin_skipped": "an installed MCP transport (entry point `toolbench.transports`) could not "
                                    "be used; toolbench.mcp.transport_notices() says which and why",
    "bench.cluster_failed": "a Ray worker of executor=\"ray\" died or could not build its bench; the run stopped",
    "tool.source_plugin_skipped": "an installed tool source (entry point `toolbench.sources`) could not be used; "
                                  "bench.add_installed_sources() returns which and why",
    "protocol.unsupported": "the provider lacks a method this asks for (answer bodies for ScriptedModel)",
    "protocol.history_invalid": "a history to encode has an empty call name, or an empty or repeated call id",
    "protocol.tool_choice_invalid": "a tool choice is not none, auto, required or {name: <call name>}",
    "protocol.golden_invalid": "a golden tool-list entry lacks call_name or input_schema",
    "model.invalid_response": "a provider response body does not have that provider's shape",
    "model.provider_refusal": "the provider or model refused (refusal, content filter, safety block)",
    "model.output_truncated": "the model's output was cut by a token or context limit; calls may be incomplete",
    # a run's provider (toolbench.models): what the SDK reported, with the provider's own message
    "model.provider_auth": "the provider refused the credentials (401/403): check the client's API key",
    "model.provider_rate_limited": "the provider rate-limited the request (429): wait, or set the SDK's retries",
    "model.provider_timeout": "the provider did not answer within the client's timeout",
    "model.provider_unreachable": "the provider could not be reached (connection refused or dropped)",
    "model.request_rejected": "the provider rejected the request as invalid (4xx): its message says which part",
    "model.provider_error": "the provider or its SDK failed otherwise (5xx, an unexpected SDK error)",
    # a streamed answer (inv.run(..., stream=True)): nothing of a cut or broken stream is run
    "model.stream_interrupted": "the stream ended before its final event (the connection closed mid-answer); "
                                "no call of that answer ran: run again",
    "model.stream_stalled": "the stream sent nothing for longer than the idle limit (stream_idle_timeout)",
    "model.stream_malformed": "a stream event is not JSON or not this provider's event shape",
    "agent.tool_choice_requires_tools": "tool choice required or a specific tool, with no tools advertised",
    "agent.tool_choice_tool_not_advertised": "tool choice names a call name that is not advertised",
    # workspace shell
    "workspace.shell_exit": "the shell command exited with a non-zero status",
    "workspace.shell_timeout": "the shell command hit its time limit and was stopped; completed writes persist",
    "workspace.shell_cancelled": "the shell command was cancelled; completed writes persist",
    "workspace.shell_failed": "the shell could not run the command: parse error, bad workdir, resource cap",
    # MCP servers (toolbench.mcp)
    "mcp.config_invalid": "an MCP server registration or mcp.json entry is malformed (raised)",
    "mcp.server_exists": "an MCP server with that name or id is registered already (raised)",
    "mcp.manage_scope": "mcp.manage refused a write, restart or stop outside a main chat invocation",
    "mcp.manage_unavailable": "mcp.manage was called where the runtime gives no MCP manager",
    "mcp.server_not_editable": "mcp.manage cannot rebuild a bench-registered server: a patch switches enabled "
                               "or brings a whole transport (command or url)",
    "mcp.server_unknown": "no MCP server is registered under that name, id or ToolId (raised)",
    "mcp.server_start_failed": "an MCP server could not start or finish its handshake (diagnostic)",
    "mcp.server_timeout": "an MCP server did not finish its handshake or tool listing in time (diagnostic)",
    "mcp.server_exited": "an active MCP server's process exited or its connection broke (diagnostic)",
    "mcp.sign_in_required": "an HTTP MCP server asks for OAuth and nobody may be asked to sign in here "
                            "(toolbench check without --sign-in; diagnostic)",
    "mcp.sign_in_failed": "signing in to an HTTP MCP server (OAuth) failed: discovery, registration, the "
                          "authorization or the token request (diagnostic)",
    "mcp.token_store_unsafe": "the OAuth token folder is inside the workspace, a link, or not the user's own",
    "mcp.tool_listing_failed": "an MCP server's tools/list failed or answered invalid JSON (diagnostic)",
    "mcp.tool_name_invalid": "a listed MCP tool's name is empty, too long or not printable; not offered",
    "mcp.tool_schema_invalid": "a listed MCP tool's inputSchema is not a valid object schema; not offered",
    "mcp.tool_invalid": "a listed MCP tool breaks the MCP wire format otherwise; not offered",
    "mcp.tool_duplicate": "an MCP server listed two tools with one name; the later is not offered",
    "mcp.tool_name_long": "warning: a listed MCP tool's name is over the MCP spec's 128 characters; offered anyway",
    "mcp.output_schema_invalid": "warning: a listed MCP tool's outputSchema is not valid; offered, results not checked",
    "mcp.server_stdout_noise": "warning: an active stdio MCP server wrote lines on stdout that are not JSON-RPC "
    "(dropped; stricter clients fail on them)",
    "mcp.tool_renamed": "note (toolbench check): a model sees an MCP tool under a call name other than its server "
    "prefix and its own name (sanitised, truncated or de-duplicated)",
    "mcp.capability_not_offered": "warning: toolbench did not declare roots/sampling/elicitation; tools may be hidden",
    "mcp.roots_missing": "warning: a folder of a server's `roots` list does not exist; declared all the same",
    "mcp.tool_unknown": "the call names no registered MCP server or no tool it offers; not sent",
    "mcp.tool_off": "the MCP tool's permission is off; not sent",
    "mcp.server_unavailable": "the MCP server is pending, disabled or failed; not sent",
    "mcp.call_not_sent": "the MCP request could not be handed to the server; the tool did not run",
    "mcp.tool_error": "the MCP tool ran and reported an error (isError)",
    "mcp.server_error": "the MCP server answered the call with a protocol error or an invalid result",
    "mcp.unsupported_response": "the MCP server answered with a response shape toolbench does not support",
    "mcp.call_timeout": "reason of an unknown outcome: no answer within the server's timeout",
    "mcp.connection_lost": "reason of an unknown outcome: the connection closed after the request left",
    "mcp.response_too_large": "reason of an unknown outcome: the answer exceeded the manager's size limit",
    "mcp.call_content_unsupported": "result note: a content block the model cannot read was left out",
    "mcp.call_metadata_unsupported": "result note: result metadata was recorded but not shown",
    "mcp.structured_content_invalid": "result note: structuredContent is missing or breaks the tool's outputSchema",
    # MCP servers beyond tools: resources, prompts, completion, logging, ping (bench.mcp, raised)
    "mcp.capability_missing": "the MCP server declared no such capability at the handshake (resources, prompts, "
                              "completions, logging, resource subscriptions)",
    "mcp.not_in_protocol": "the request does not exist in the server's protocol revision (ping and "
                           "logging/setLevel on 2026-07-28)",
    "mcp.request_failed": "the MCP server answered a request with a JSON-RPC error (code and message given) or an "
                          "invalid result, or its listing did not end",
    "mcp.request_timeout": "the MCP server did not answer a request within the registration's timeout",
    "mcp.listed_item_invalid": "a listed resource, resource template or prompt has a blank or repeated name or URI, "
                               "an argument without a name or named twice, or unpaired template braces; listed anyway",
    # chat history and world info (bench.load_chat / bench.load_worldinfo, the chat tools)
    "chat.file_unreadable": "a chat file could not be read, or is not UTF-8 (raised by load_chat)",
    "chat.file_invalid": "a chat JSONL line is not an object of either chat form; the line is named (raised)",
    "chat.not_loaded": "no chat history was loaded when the invocation was created",
    "chat.message_out_of_range": "a message index or start_message is past the last message; the valid range is given",
    "chat.line_out_of_range": "a message's start_line is past its last line; the valid range is given",
    "worldinfo.file_unreadable": "a world-info file could not be read, or is not UTF-8 (raised by load_worldinfo)",
    "worldinfo.file_invalid": "a world-info file is not SillyTavern world info; the entry and field are named (raised)",
    "worldinfo.not_loaded": "no world info was loaded when the invocation was created",
    "worldinfo.ref_unknown": "a ref names no active world-info entry; the active refs are listed",
    "worldinfo.line_out_of_range": "an entry's start_line is past its last line; the valid range is given",
    # sub-agents (bench.agents, the agent.* tools and task.return)
    "agent.unknown_agent": "delegate or handoff names an agent id that is not in bench.agents' directory",
    "agent.model_missing": "no model drives that agent; set bench.agents.model (or the agent's own)",
    "agent.child_limit_reached": "8 delegated children are pending or running on the bench already",
    "agent.child_finish_denied": "a delegated child answered with text instead of calling task_return",
    "agent.child_round_limit": "a delegated child used all its model rounds without task_return (task failed)",
    "agent.child_model_failed": "the model driving a child raised or answered neither calls nor text (task failed)",
    "agent.task_cancelled": "a delegated task was cancelled (a handoff, or the bench closed)",
    "agent.task_unknown": "a task id that is not one of the caller's tasks, or task_return outside a child",
    "agent.await_timeout": "agent_await timed out before the tasks it waited for finished",
    "agent.delegation_policy_denied": "the profile's run policy forbids delegating, or to that agent",
    "agent.handoff_policy_denied": "the profile's run policy forbids handing off, or to that agent",
    "agent.foreground_commit_required": "workspace.finish in a foreground run before any explicit workspace.commit",
    "agent.handoff_pending_tasks": "handoff with pendingTaskPolicy denyIfPending while tasks are unfinished",
    "agent.unknown_recipient": "send_message names no one on the sender's roster (parent, a child or task id, *)",
    "agent.duplicate_agent_id": "a delegate batch names the same child id twice (compared case-insensitively)",
    "agent.unknown_template": "a delegate entry names a template that is not enabled in bench.agents",
    "agent.identity_conflict": "a delegate entry gives a name, role, identity or template other than the child's",
    "agent.roster_unreadable": "the stored sub-agent roster (.toolbench/agents/roster.json) is torn, corrupt, "
    "of another version or a planted entry (the notice's cause: storage.*): the bench starts a fresh roster, and "
    "the next child's run replaces the file (notice)",
    "agent.roster_write_failed": "the sub-agent roster could not be written when a child's run ended; the bench "
    "keeps it in memory (notice)",
    "agent.worktree_unavailable": "a delegate entry asks for mode worktree but the workspace is not a git "
    "repository with a commit",
    "agent.output_path_outside_workspace": "an allowed_output_paths entry is absolute or leaves the workspace",
    "agent.provision_failed": "a worktree for a delegate entry could not be made; nothing was started",
    "agent.worktree_failed": "a git command for a worktree child failed (add, status, merge or remove), or the "
    "repository's config names too many drivers to neutralise; the worktree is kept",
    "agent.apply_conflict": "a worktree child and the workspace both changed the same files and they do not merge "
    "(same lines, a deletion against a change, both added, binary): nothing was applied, the worktree keeps the "
    "child's versions (`conflicts` names the files)",
    "agent.apply_refused": "a worktree child's change cannot be applied safely (a link on the way, a file that is "
    "not regular, past the size or count limits): nothing was applied, the worktree is kept",
    "agent.apply_not_allowed": "apply_policy explicit and a changed file matches no allowed_output_paths entry: "
    "nothing was applied, the worktree is kept (the reason names the files)",
    "agent.apply_failed": "writing a worktree child's changes to the workspace failed part-way (a disk or "
    "permission error); the worktree keeps the child's versions",
    "agent.unavailable": "the agent tools ran without the bench's agents service",
    "testing.script_exhausted": "a ScriptedModel was asked for a turn past the end of its plan",
    # memory (memory.manage / memory.query)
    "memory.slug_invalid": "a memory slug is not 3-64 kebab-case characters, or is reserved for daily journals",
    "memory.slug_exists": "write names a slug its scope holds already; update it instead",
    "memory.slug_not_found": "no memory has that slug in the scope; candidates and a search call are suggested",
    "memory.scope_ambiguous": "the slug exists in global and project scope; give `scope`",
    "memory.scope_required": "write, delete and accept need scope global or project",
    "memory.scope_invalid": "a daily journal was addressed in project scope (dailies are global)",
    "memory.type_invalid": "write or update has no type, or type daily (daily journals are append-managed)",
    "memory.body_too_large": "the body is over 8 KB (32 KB for a daily journal); refused, not cut",
    "memory.quota_exceeded": "the scope holds its quota of non-daily entries (500)",
    "memory.risk_hard_blocked": "the text contains a secret-like pattern (private key, AWS, Anthropic, GitHub, Slack)",
    "memory.mode_invalid": "append on an ordinary entry, or a daily journal updated without mode append",
    "memory.action_not_allowed": "the action does not apply to this entry (accept on a daily journal)",
    "memory.read_only": "a mutation in read-only mode (memory.query, sub-agents) or on an archived daily",
    "memory.line_out_of_range": "read's offset is past the end of the memory's body",
    "memory.actor_invalid": "a developer passed MemoryStore an actor other than tool, extractor or user",
    "memory.front_matter_invalid": "a memory file's YAML front matter is refused (not YAML, anchors or aliases, "
    "too deep, too large); the file is reported and left out, never rewritten",
    "memory.folder_outside_workspace": "a memory folder inside the workspace leads out of it through a link; "
                                        "nothing is read or written there",
    "memory.file_unreadable": "a memory file is a link, FIFO, device or folder, too large, or not UTF-8; it is "
    "reported and left out, never read",
    # todo.write
    "todo.too_many_in_progress": "more than one todo item is in_progress",
    # cron tasks
    "cron.expression_invalid": "a cron expression is not six valid fields (second minute hour day month weekday)",
    "cron.task_invalid": "a cron task's fields do not fit together (no script/prompt, bad workdir, blank name)",
    "skills.action_unsupported": "a skills.manage action this toolbench does not offer (the ClawHub ones)",
    "skills.archive_invalid": "an install archive is not a readable zip, or an entry is corrupt (CRC), encrypted, "
    "a duplicate, both file and folder, a `.` file, or has a name part over 255 bytes",
    "skills.archive_too_large": "an install archive has too many entries or inflates past the byte cap",
    "skills.archive_unsafe": "an install archive entry is absolute, climbs out with `..`, or is a link",
    "skills.argument_invalid": "skills.manage arguments that do not fit together (`name` with several skills)",
    "skills.argument_missing": "a skills.manage action lacks a field it needs",
    "skills.exists": "the skill already exists and conflict is `fail`",
    "skills.file_unreadable": "a SKILL.md is a link, FIFO, device or folder, over 10 MB, or not UTF-8",
    "skills.front_matter_invalid": "a SKILL.md's YAML front matter is refused (not YAML, anchors or aliases, too "
    "deep, too large); the file is named",
    "skills.invalid": "a skill does not validate (front matter, name, description, links, scripts)",
    "skills.name_invalid": "a skill name breaks the rules (lowercase, digits, single hyphens, 64 characters)",
    "skills.not_found": "no installed skill folder has that name",
    "skills.path_invalid": "a path inside a skill is absolute, climbs with `..`, is hidden, or names its metadata",
    "skills.source_not_found": "an install source does not exist or holds no skill folder",
    "skills.source_too_large": "an install source is past the file or byte caps",
    "skills.source_unsafe": "an install source folder holds a link",
    "skills.source_unsupported": "an install source that is a URL or not a folder, archive or SKILL.md",
    "cron.task_not_found": "no cron task has that id",
    "cron.store_unreadable": "the cron store (.toolbench/cron/tasks.json) or a task's run log is not a regular "
    "file, too large, a link out of the workspace, or not JSON; the cron tools and run_due refuse until it is fixed",
    # storage
    "storage.write_failed": "a runtime file could not be written",
    "storage.workspace_not_directory": "the workspace path (or a folder it would be made in) is a file",
    "storage.not_writable": "the workspace's runtime folders cannot be created or written (read-only, permissions)",
    "storage.already_exists": "a write-once runtime file exists already",
    "storage.run_log_invalid": "a stored run log could not be read back",
    "storage.not_regular_file": "a runtime file (or a folder on its way) is a FIFO, device, socket, link or folder "
    "where a regular file (or folder) belongs; it is left as it is, never opened for reading",
    "storage.link_outside_workspace": "a runtime file, or a folder on its way, is a link out of the workspace; "
    "the bench neither reads nor writes through it",
    "storage.file_too_large": "a runtime file is over the size the bench reads of it (named beside its reader)",
    "storage.read_failed": "a runtime file could not be read (permissions, an I/O error, a loop of links)",
    # misuse
    "bench.closed": "the workbench was closed",
    "bench.misuse": "the library was called in a way it does not support",
    # replay (bench.replay)
    "replay.source_invalid": "a replay source is not a Run, an Invocation or its id, a list of request/response "
                             "pairs or a JSON/JSONL file of them, or a body in it is not its provider's shape",
    "replay.protocol_undetected": "the provider of raw request/response pairs cannot be told from their shape; "
                                  "pass protocol=",
    "replay.result_missing": "a recorded call has no recorded result (no later request carries it back)",
    # the app's chat panel (shown in the panel, never raised to a cell)
    "app.no_model": "the chat has no model to pick, or none is picked: give the app models (models=...)",
    "app.empty_prompt": "the chat's prompt is empty; nothing was sent",
    # the command line
    "lab.jupyterlab_missing": "`toolbench lab` needs JupyterLab, which is not installed (the `lab` extra)",
    "lab.dir_not_a_folder": "`toolbench lab --dir D`: D (or a parent of it) exists and is not a folder",
    "lab.dir_unwritable": "`toolbench lab --dir D`: the notebooks cannot be copied into D (permissions, disk)",
    "lab.address_unavailable": "`toolbench lab --ip/--port`: that address cannot be listened on (taken, unknown)",
    "lab.notebooks_missing": "this installation carries no notebooks for `toolbench lab` (a broken install)",
    "lab.server_exited": "`toolbench lab`: jupyter lab exited before it answered (its exit status is in the line)",
    "lab.server_not_answering": "`toolbench lab`: jupyter lab did not answer at all within the start limit; stopped",
    "cli.snapshot_empty": "`toolbench snapshot`: the snapshot offers no tool (the profile denies or misnames each)",
    "cli.result_files_removed": "`toolbench call`: the result names files of a temporary workspace, removed at exit",
    "cli.eval_below_pass_rate": "`toolbench eval`: a case and model passed less often than --min-pass-rate",
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


def check_positive_int(name: str, value: object) -> int:
    """`value` when it is a positive int (not a bool or a float), else `bench.misuse` naming it."""
    if type(value) is not int or value < 1:
        raise ToolbenchError("bench.misuse", f"{name} is a positive int, not {value!r}")
    return value
