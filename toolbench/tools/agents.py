"""Sub-agent tools: `agent.delegate`, `agent.await`, `agent.handoff`, `agent.send_message`, and
`task.return` (injected into delegated children only; a profile cannot select it).

The schemas follow tauritavern reference §8 (send_message follows LiveAgent §8). The handlers
are thin: they reach the bench's agents service through `ctx.agents` and turn what it answers
into the text the model reads. Every tool here is chat-only (reference §3.3). Delegate and
handoff first ask the caller's run policy (`profile.run.check_delegation`: upstream's
`agent.delegation_policy_denied` / `agent.handoff_policy_denied`).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.agents import (
    AWAIT_MODES,
    CHANNELS,
    DEFAULT_AWAIT_MS,
    DEFAULT_TEMPLATE,
    HANDOFF_TEXT,
    MAX_AWAIT_MS,
    MAX_CHILDREN,
    MAX_PACKET_FIELD,
    MODES,
    delegate_entries,
    packet_problem,
)
from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .agents_port import AgentsPort
from .base import BuiltinTool, ToolContext

_STR = {"type": "string"}
_STRS = {"type": "array", "items": {"type": "string"}}
_TASK = {
    "type": "object",
    "properties": {
        "objective": {"type": "string", "minLength": 1,
                      "description": f"What the agent must do, in full (at most {MAX_PACKET_FIELD} bytes of UTF-8)."},
        "title": {"type": "string", "description": "A short name for the task."},
        "context": {"type": "object", "description": "Facts the agent needs (it sees nothing else of yours)."},
        "expectedOutput": {"type": "object", "description": "The shape of the answer you want back."},
    },
    "required": ["objective"],
    "additionalProperties": False,
}
_AGENT_ID = {"type": "string", "minLength": 1, "description": "The agent to run, from the agent directory."}
_ENTRY = {  # LiveAgent's entry (reference liveagent-tools §8); the rules are core.agents.agents_batch_issues
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": (
            "A stable id for this sub-agent (a letter or digit, then up to 63 of A-Z a-z 0-9 . _ -). Reusing an "
            "id resumes that agent's own context.")},
        "prompt": {"type": "string", "description": "The task, in full (the agent sees nothing else of yours)."},
        "name": _STR, "role": _STR, "identity": {"type": "string", "description": "Who the agent is."},
        "template": {"type": "string", "description": "An enabled template (default `general`)."},
        "mode": {"type": "string", "enum": list(MODES), "description": (
            "readonly (default for a new agent; a resumed one keeps its last mode): read-only tools only. "
            "worktree: file and shell tools in a git worktree of the workspace (needs a git repository).")},
        "resume": {"type": "boolean", "description": "false starts the id afresh (default true)."},
        "apply_policy": {"type": "string", "enum": ["none", "explicit", "auto"], "description": (
            "worktree only: none (default) keeps the changes in the worktree; auto copies them into the workspace "
            "when the agent completes; explicit does so only if every changed file is in allowed_output_paths.")},
        "allowed_output_paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": (
            "With apply_policy explicit: workspace paths (folders, files or globs with *, **/ and ?).")},
        "retain_worktree": {"type": "boolean", "description": "Keep the worktree after the agent (default false)."},
    },
    "required": ["id", "prompt"],
    "additionalProperties": False,
}

DELEGATE = ToolDescriptor(
    id=ToolId.builtin("agent.delegate"),
    parent_only=True,
    description=(
        "Start a sub-agent on a task; it runs in the background with its own tools and budget and returns "
        "a summary. Give `agentId` and `task`, or `tasks` (a list of {agentId, task}) to start several at "
        f"once: a batch is checked as a whole and nothing starts if any entry is wrong. At most {MAX_CHILDREN} "
        "sub-agents run at once. Or give `agents` (a list of {id, prompt, name?, role?, identity?, template?, "
        "mode?, resume?, apply_policy?, allowed_output_paths?, retain_worktree?}): named sub-agents you can "
        "resume by id; name, role, identity and template are fixed "
        "when an id is first used. Collect results with agent_await."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "agentId": _AGENT_ID,
            "task": _TASK,
            "tasks": {"type": "array", "minItems": 1, "maxItems": MAX_CHILDREN, "items": {
                "type": "object", "properties": {"agentId": _AGENT_ID, "task": _TASK},
                "required": ["agentId", "task"], "additionalProperties": False}},
            "agents": {"type": "array", "minItems": 1, "maxItems": MAX_CHILDREN, "items": _ENTRY},
            "concurrency": {"type": "number", "description": (
                f"With `agents`: how many run at once (1 to {MAX_CHILDREN}; default all of them).")},
        },
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
)

AWAIT = ToolDescriptor(
    id=ToolId.builtin("agent.await"),
    parent_only=True,
    description=(
        "Wait for delegated tasks. `mode` nextCompleted (default) returns the next task to finish, "
        "allCompleted waits for all of them, statusOnly answers at once with every status. `taskIds` "
        f"limits it to those tasks (default: yours that are unfinished or unreported). `timeoutMs` "
        f"defaults to {DEFAULT_AWAIT_MS} (at most {MAX_AWAIT_MS}). Messages sent to you are delivered here too."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "taskIds": _STRS,
            "mode": {"type": "string", "enum": list(AWAIT_MODES)},
            "timeoutMs": {"type": "integer", "minimum": 0, "maximum": MAX_AWAIT_MS},
        },
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
    read_only=True,
)

HANDOFF = ToolDescriptor(
    id=ToolId.builtin("agent.handoff"),
    parent_only=True,
    description=(
        "Hand the rest of this job to another agent and end your own turn: it starts fresh with the "
        "brief you give (it sees nothing else). This must be the last call of its round. Unfinished "
        "sub-agent tasks are cancelled, unless `pendingTaskPolicy` is denyIfPending, which refuses instead."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "agentId": _AGENT_ID,
            "handoff": {
                "type": "object",
                "properties": {
                    "objective": {"type": "string", "minLength": 1, "description": (
                        f"What the agent must finish. It, title, reason and contextSummary are at most "
                        f"{MAX_PACKET_FIELD} bytes of UTF-8 each.")},
                    "title": _STR, "reason": _STR, "contextSummary": _STR,
                    "workspaceRefs": _STRS, "mustPreserve": _STRS, "completionCriteria": _STRS,
                },
                "required": ["objective"],
                "additionalProperties": False,
            },
            "pendingTaskPolicy": {"type": "string", "enum": ["denyIfPending"]},
        },
        "required": ["agentId", "handoff"],
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
    completes_round=True,
)

SEND_MESSAGE = ToolDescriptor(
    id=ToolId.builtin("agent.send_message"),
    description=(
        "Send a short Markdown message to `parent`, to a sibling or child (a named sub-agent by its id, "
        "else by its task id), or to `*` (everyone you can reach). `channel`: direct (default for one "
        "recipient), shared (broadcast; `to` may be omitted), decision or question. It is delivered at the "
        "recipient's next turn."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "`parent`, a sub-agent id or task id, or `*`."},
            "message": {"type": "string", "minLength": 1},
            "channel": {"type": "string", "enum": list(CHANNELS)},
        },
        "required": ["message"],
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
)

TASK_RETURN = ToolDescriptor(
    id=ToolId.builtin("task.return"),
    description=(
        "Return your result to the agent that delegated this task; this ends the task, so call it last, "
        "alone. `summary` is what the caller reads; set `status` failed when you could not do it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "summary": {"type": "string", "minLength": 1},
            "status": {"type": "string", "enum": ["completed", "failed"]},
            "confidence": {"type": "string", "enum": ["low", "medium", "high"]},
            "artifacts": {"type": "array", "items": {
                "type": "object", "properties": {"path": _STR, "kind": _STR, "role": _STR},
                "required": ["path", "kind", "role"], "additionalProperties": False}},
            "findings": {"type": "array", "items": {"type": "object"}},
            "warnings": _STRS,
            "suggestedNextActions": _STRS,
            "questionsForCaller": _STRS,
        },
        "required": ["summary"],
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
    completes_round=True,
)


def _port(ctx: ToolContext) -> AgentsPort:
    if ctx.agents is None:
        raise ToolError("agent.unavailable", "Sub-agents are not available here.")
    port: AgentsPort = ctx.agents
    return port


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


async def delegate(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    entries = delegate_entries(args)
    if "agents" in args:
        # The run policy names templates; an entry without one uses the default template.
        ctx.profile.run.check_delegation("delegate", [str(e.get("template") or DEFAULT_TEMPLATE) for e in entries])
        started = await _port(ctx).delegate_agents(ctx.invocation_id, entries, args.get("concurrency"))
    else:
        # The caller's run policy first (upstream checks canDelegate before the target).
        ctx.profile.run.check_delegation("delegate", [str(e.get("agentId", "")) for e in entries])
        started = await _port(ctx).delegate(ctx.invocation_id, entries)
    lines = [f"- `{t['taskId']}` ({t.get('childId', t['agentId'])}): {t['title']}" for t in started]
    content = (f"Started {len(started)} task{'s' if len(started) != 1 else ''}:\n" + "\n".join(lines)
               + "\nCall agent_await to collect the results.")
    return ToolOutput(content=content, structured={"tasks": started})


async def await_(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    answer = await _port(ctx).await_tasks(ctx.invocation_id, args.get("taskIds"), args.get("mode", "nextCompleted"),
                                          args.get("timeoutMs", DEFAULT_AWAIT_MS))
    if answer["timedOut"]:
        raise ToolError("agent.await_timeout",
                        "No task finished in time; the tasks are still running. Statuses:\n" + _json(answer),
                        structured=answer)
    return ToolOutput(content=_json(answer), structured=answer)


async def handoff(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ctx.profile.run.check_delegation("handoff", [args["agentId"]])
    problem = packet_problem(args["handoff"], "handoff", HANDOFF_TEXT)  # before the agent, as upstream
    if problem is not None:
        raise ToolError("tool.invalid_arguments", problem)
    record = await _port(ctx).handoff(ctx.invocation_id, args["agentId"], args["handoff"],
                                      args.get("pendingTaskPolicy"))
    cancelled = record["cancelledTasks"]
    content = (f"Handed off to `{record['agentId']}` (invocation `{record['invocationId']}`). Your part is done."
               + (f" Cancelled unfinished tasks: {', '.join(cancelled)}." if cancelled else ""))
    return ToolOutput(content=content, structured=record)


async def send_message(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    message = args["message"].strip()  # LiveAgent sends the trimmed body, and checks it before `to`
    if not message:
        raise ToolError("tool.invalid_arguments", "agent_send_message needs a non-empty `message`.")
    sent = await _port(ctx).send(ctx.invocation_id, args.get("to"), message, args.get("channel"))
    to = ", ".join(f"`{r}`" for r in sent["to"])
    return ToolOutput(content=f"Sent on channel {sent['channel']} to {to}.", structured=sent)


async def task_return(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    record = await _port(ctx).task_returned(ctx.invocation_id, args)
    return ToolOutput(content=f"Returned to the caller ({record['status']}). Your task is over.", structured=record)


TOOLS = (
    BuiltinTool(DELEGATE, delegate),
    BuiltinTool(AWAIT, await_),
    BuiltinTool(HANDOFF, handoff),
    BuiltinTool(SEND_MESSAGE, send_message),
)
# Not in the catalog: prepare(..., return_mode=TASK_RETURN) appends it to delegated children.
INJECTED = (BuiltinTool(TASK_RETURN, task_return),)
