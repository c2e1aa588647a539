"""The child loop's pure helpers for `toolbench.runtime.agents`: asking a model (sync or async),
reading its reply, and the messages a child sees (its opening, delivered mail, each round's
results, a handoff brief). Split out so the service keeps the tasks and the roster."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError
from ..protocols import Exchange, ResultView, decode_calls, encode_history

if TYPE_CHECKING:
    from ..core.descriptors import ToolDescriptor
    from ..core.ids import ToolId
    from ..core.profile import Profile
    from .agents import AgentSpec, _Task

Model = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]


async def ask(model: Model | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    if model is None:
        raise ToolbenchError("agent.model_missing", "no model: set bench.agents.model")
    call = getattr(model, "__call__", model)  # noqa: B004 - an instance with an async __call__ counts too
    if inspect.iscoroutinefunction(model) or inspect.iscoroutinefunction(call):
        return await model(messages, tools)
    reply = await asyncio.to_thread(model, messages, tools)
    return await reply if inspect.isawaitable(reply) else reply


def read_reply(reply: Any) -> tuple[list[tuple[Any, ...]], str]:
    """(calls, text) from what a model answered; TypeError for anything else."""
    if isinstance(reply, str):
        return [], reply
    if isinstance(reply, Mapping):  # an OpenAI Chat Completions response body
        decoded = decode_calls("openai", reply)
        if decoded:
            return [(c.call_name, c.arguments, c.call_id) for c in decoded], ""
        message = reply["choices"][0].get("message") or {}
        return [], str(message.get("content") or "")
    if isinstance(reply, (list, tuple)):
        calls = []
        for call in reply:
            if not isinstance(call, (tuple, list)) or not 2 <= len(call) <= 3 or not isinstance(call[0], str):
                raise TypeError(f"a call must be (call_name, arguments[, call_id]), not {call!r}")
            calls.append(tuple(call))
        return calls, ""
    raise TypeError(f"the model answered {type(reply).__name__}; answer calls, a text or a response body")


def opening(task: _Task) -> list[dict[str, Any]]:
    spec, brief = task.agent, task.task
    names = task.invocation.snapshot.call_names
    reach = (" Use `agent_send_message` to reach `parent` or the other tasks." if "agent_send_message" in names else "")
    system = (f"You are the agent `{spec.id}`: {spec.description}\nYou work on one task (`{task.id}`) delegated "
              "to you by another agent, with your own tools and call budget. When you are done, call `task_return` "
              "with a summary (status `failed` if you could not do it): that ends the task and must be the last "
              f"call of its round. A text answer does not end the task.{reach}")
    if task.child is not None:
        who = task.child.identity
        where = "read-only tools only" if task.child.mode == "readonly" else "your own git worktree of the workspace"
        system += f"\nYour agent id is `{task.child.id}` (mode {task.child.mode}; {where})."
        system += "".join(f"\nYour {k}: {who[k]}" for k in ("name", "role", "identity") if who.get(k))
    user = f"# {task.title}\n\n{brief['objective']}"
    for key, label in (("context", "Context"), ("expectedOutput", "Expected output")):
        if brief.get(key):
            user += f"\n\n## {label}\n\n{json.dumps(brief[key], ensure_ascii=False, indent=2)}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def deliver(task: _Task) -> list[dict[str, Any]]:
    mail, task.inbox = task.inbox, []
    return [{"role": "user", "content": f"Message from `{m['from']}` ({m['channel']}):\n\n{m['message']}"}
            for m in mail]


def round_messages(records: Sequence[Any]) -> list[dict[str, Any]]:
    exchanges = [Exchange(call_id=r.call_id, call_name=r.call_name, arguments=r.arguments.replay_object(),
                          result=ResultView(content=r.result.content, is_error=r.result.is_error))
                 for r in records]
    return encode_history("openai", [exchanges])


def handoff_text(spec: AgentSpec, brief: Mapping[str, Any]) -> str:
    lines = [f"# Handoff to `{spec.id}`: {brief.get('title') or 'continue the job'}", "", str(brief["objective"])]
    for key, label in (("reason", "Reason"), ("contextSummary", "Context")):
        if brief.get(key):
            lines += ["", f"## {label}", "", str(brief[key])]
    for key, label in (("workspaceRefs", "Workspace files"), ("mustPreserve", "Must preserve"),
                       ("completionCriteria", "Done when")):
        if brief.get(key):
            lines += ["", f"## {label}", ""] + [f"- {item}" for item in brief[key]]
    return "\n".join(lines)


# Kept in a readonly child besides read-only tools (LiveAgent §8: "MCP business tools and SendMessage").
_READONLY_EXTRA = frozenset({"builtin:agent.send_message"})


def readonly_profile(profile: Profile, catalog: Mapping[ToolId, ToolDescriptor]) -> Profile:
    """`profile` with every offered tool denied whose descriptor is not `read_only`, except
    agent.send_message and MCP tools (upstream gives a readonly child those too)."""
    denied = [str(t) for t in profile.tools.active()
              if t in catalog and not catalog[t].read_only and t.kind != "mcp" and str(t) not in _READONLY_EXTRA]
    return profile.edit(deny=[*profile.tools.deny, *denied]) if denied else profile
