"""The child loop of `bench.agents`: one loop for every model, in the model's own protocol.

Each round builds a request with `model.request` (the child's system prompt, its conversation
so far, its tools as `snapshot.render(model.protocol)`), sends it, reads the reply, and runs the
reply's calls in the child as one round (`inv.arespond`, so the assistant turn is kept as the
provider sent it). The conversation is kept as provider messages, so a resumed roster child
carries its earlier tasks' rounds: each round's calls and results come from
`inv.transcript(model.protocol, rounds=[n])`, a text answer from `answer_messages`, the brief,
mail and the denial of a text answer from `model.user_message`.

The older callable form (`model(messages, tools)`, OpenAI Chat Completions) is a `Model` too
(`CallableModel`), so it goes through the same loop.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.errors import ToolbenchError
from .loop import AnyModel, answer_messages, as_model, deliver, opening

if TYPE_CHECKING:
    from .service import _Task

DENIED = ("agent.child_finish_denied: a delegated task ends only with `task_return`. Call task_return with "
          "your summary (status `failed` if you cannot finish); a text answer is not delivered.")


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a child's loop ended: the task's status, and its error when it failed."""

    status: str
    code: str | None = None
    message: str = ""


async def drive(task: _Task, model: AnyModel | None, limit: int) -> Outcome:
    """Ask the model, run its calls in the child, until task_return, a failure or `limit` rounds.

    A failing model (an SDK's `ModelError`, a reply that is not the provider's shape, a callable
    that raises) fails the task with `agent.child_model_failed` and the error's type and text
    (a `ModelError` names its code: `ModelError: model.provider_rate_limited: ...`)."""
    if model is None:
        return Outcome("failed", "agent.child_model_failed", "ToolbenchError: agent.model_missing: no model: "
                       "set bench.agents.model")
    chosen = as_model(model)
    task.protocol = chosen.protocol
    inv = task.invocation
    tools = inv.snapshot.render(chosen.protocol)
    if not task.messages and not task.pending:
        task.system, brief = opening(task)
        task.pending.append(brief)
    for _ in range(limit):
        task.messages += [chosen.user_message(text) for text in [*task.pending, *deliver(task)]]
        task.pending.clear()
        task.rounds += 1
        body = chosen.request(system=task.system or None, messages=task.messages, tools=tools, tool_choice=None)
        try:
            response = await chosen.send(body)
            text = chosen.read(response).text
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # what the model or its SDK did: the task fails, the bench goes on
            return _failed(exc)
        try:
            results = await inv.arespond(chosen.protocol, response)
        except ToolbenchError as exc:  # a reply that is not the provider's shape, a refusal, a cut output
            if not exc.code.startswith("model."):
                raise  # the child's own storage or misuse: the service reports tool.internal_error
            return _failed(exc)
        if not results:
            task.messages += [*answer_messages(chosen, response, text), chosen.user_message(DENIED)]
            continue
        task.messages += inv.transcript(chosen.protocol, rounds=[_round_of(task, results[-1])])
        if task.result is not None:
            return Outcome(str(task.result.get("status", "completed")))
    return Outcome("failed", "agent.child_round_limit", f"The child used its {limit} rounds without calling "
                   "task_return.")


def _failed(exc: Exception) -> Outcome:
    return Outcome("failed", "agent.child_model_failed", f"{type(exc).__name__}: {exc}")


def _round_of(task: _Task, last: object) -> int:
    """The child round the reply's calls ran as (the newest records first)."""
    records = task.invocation.records
    return next((r.round for r in reversed(records) if r.result is last), records[-1].round)
