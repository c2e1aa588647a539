"""The child loop's helpers for `toolbench.runtime.agents`: the older callable model form as a
`Model` (`CallableModel`), and the texts a child sees (its opening, delivered mail, a text
answer kept in the conversation, a handoff brief). Split out so the service keeps the tasks
and the roster; the loop itself is `drive.py`."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...core.errors import ToolbenchError
from ...models import Model
from ...models._base import ProviderShaped
from ...models._openai import OpenAIChat
from ...protocols import decode_calls, full_provider

if TYPE_CHECKING:
    from ...core.descriptors import ToolDescriptor
    from ...core.ids import ToolId
    from ...core.profile import Profile
    from .service import AgentSpec, _Task

# The older model form: `model(messages, tools)` with OpenAI Chat Completions messages and tools.
ChatCallable = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]
AnyModel = Model | ChatCallable


async def ask(model: ChatCallable | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
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


_CHAT = OpenAIChat(None, "callable")  # the request and message shapes of the callable form


class CallableModel(ProviderShaped):
    """The older model form as a `Model`: `fn(messages, tools)` gets the OpenAI Chat Completions
    messages (the system prompt first) and the `"openai"` tool list, and answers a list of
    `(call_name, arguments[, call_id])` tuples, a text, or a Chat Completions response body.
    A sync `fn` runs in a worker thread, an async one is awaited; what it raises goes out as is
    (the child fails with its type and message)."""

    protocol = "openai"

    def __init__(self, fn: ChatCallable) -> None:
        self.fn = fn
        self.model = str(getattr(fn, "model", None) or getattr(fn, "__name__", type(fn).__name__))

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body = _CHAT.request(system=system, messages=messages, tools=tools, tool_choice=tool_choice)
        body.pop("model")
        return body

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = await ask(self.fn, list(body["messages"]), list(body.get("tools") or []))
        if isinstance(reply, Mapping):
            return dict(reply)
        calls, text = read_reply(reply)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:  # a call without an id gets one from the decoder (unique per round)
            message["tool_calls"] = [{"id": c[2] if len(c) > 2 else "", "type": "function", "function": {
                "name": c[0], "arguments": c[1] if isinstance(c[1], str) else json.dumps(c[1])}} for c in calls]
        else:
            message["content"] = text
        return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}

    def __repr__(self) -> str:
        return f"CallableModel({self.model!r})"


def as_model(model: AnyModel) -> Model:
    """`model` itself when it is a `Model` (an adapter, a ScriptedModel), else the callable form."""
    return model if isinstance(model, Model) else CallableModel(model)


def answer_messages(model: Model, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
    """A text answer (no calls) as the provider's assistant message(s), to keep it in the
    conversation: the blocks, items or parts as they came, thinking and all (the provider's
    `answer_messages`)."""
    return full_provider(model.protocol).answer_messages(body, text)


def opening(task: _Task) -> tuple[str, str]:
    """The child's system prompt and its first user text (the task brief)."""
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
    return system, user


def deliver(task: _Task) -> list[str]:
    """The texts of the mail waiting for the child (its inbox is emptied)."""
    mail, task.inbox = task.inbox, []
    return [f"Message from `{m['from']}` ({m['channel']}):\n\n{m['message']}" for m in mail]


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
