"""The client half of a connection: what toolbench declares to a server, and how it answers the
requests a server sends back (roots, sampling, elicitation) and the progress it reports.

Capabilities are fixed at the handshake, so each connection keeps the set it declared; the
manager's `refresh()` reconnects a server whose set is no longer what the handlers ask for.

- `roots`: per connection, from its registration's `roots` (`_roots`). On `"workspace"` (the
  default) declared when the manager has a roots provider (the bench gives the workspace roots
  its profile makes visible, `workspace_roots`) and answered with their `file://` URIs, read at
  each request so a profile change shows at once (`roots_changed` tells these servers only); on
  a list of folders declared and answered with those; on `False` not declared at all, so a
  server keeps the folders it was started with (a `roots/list` it sends anyway is refused).
- `sampling` and `elicitation`: declared only while a handler is set. A capability is a promise:
  servers (server-everything, for one) register the tools that need it only when it is declared,
  so declaring it with nobody to answer would offer the model tools that always fail. Without a
  handler the server sees the SDK's refusal (JSON-RPC -32600) if it asks anyway, the call notes
  it, and the server's info warns that tools may be hidden (`mcp.capability_not_offered`).
- progress: every call asks for it (a `progressToken`); each event goes to the progress handler
  and the last `MAX_EVENTS` stay in the call's `structured["progress"]`.

Calls on one connection run one at a time, so a server's request during a call belongs to it.
Sync sampling and elicitation handlers run in a worker thread (a model or a person may take a
while; the bench loop goes on); a sync progress handler runs on the bench loop: keep it quick.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import mcp.types as types
from pydantic import ValidationError

from ..core.errors import ToolbenchError
from ._requests import (
    DECLINED,
    ProgressEvent,
    ReplyInvalid,
    elicitation_request,
    elicitation_result,
    sampling_request,
    sampling_result,
)
from ._roots import WORKSPACE, RootsSetting, declares
from ._sampling import SamplingModel, sample, speaks_protocol

CAPABILITIES = ("roots", "sampling", "elicitation")
MAX_EVENTS = 20  # progress events and server requests kept per call
_METHODS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
_log = logging.getLogger("toolbench.mcp")

Handler = Callable[..., Any]
RootsProvider = Callable[[], Sequence[Path | str]]


def workspace_roots(workspace: Path, visible_roots: Sequence[str]) -> list[Path]:
    """The folders a profile makes visible, as absolute paths (what `roots/list` answers)."""
    base = Path(workspace).resolve()
    return [base / name for name in visible_roots]


class Handlers:
    """The manager's handlers, shared by its connections (set from any thread, read on the loop)."""

    def __init__(self, roots: RootsProvider | None = None) -> None:
        self.roots = roots
        self.progress: Handler | None = None
        # (handler, is a model): set in one step. A model is a toolbench Model or `model(messages, tools)`.
        self.sampling: tuple[Handler | SamplingModel, bool] | None = None
        self.elicitation: Handler | None = None

    def set_progress(self, handler: Handler | None) -> None:
        self.progress = _callable_or_none("on_progress", handler)

    def set_sampling(self, handler: Handler | SamplingModel | None) -> None:
        if speaks_protocol(handler):  # a toolbench Model (an SDK adapter, a ScriptedModel): asked in its protocol
            self.sampling = (handler, True)
            return
        handler = _callable_or_none("on_sampling", handler)
        self.sampling = None if handler is None else (handler, _takes_two(handler))

    def set_elicitation(self, handler: Handler | None) -> None:
        self.elicitation = _callable_or_none("on_elicitation", handler)

    def wanted(self, roots: RootsSetting = WORKSPACE) -> frozenset[str]:
        """The capabilities a connection made now would declare to a server on `roots`."""
        on = {"roots": declares(roots, self.roots is not None), "sampling": self.sampling is not None,
              "elicitation": self.elicitation is not None}
        return frozenset(name for name, yes in on.items() if yes)


def _callable_or_none(what: str, handler: Any) -> Handler | None:
    if handler is not None and not callable(handler):
        raise ToolbenchError("bench.misuse", f"{what} takes a callable or None, not {type(handler).__name__}")
    return handler  # type: ignore[no-any-return]


def _takes_two(handler: Handler) -> bool:
    """True for a model (`model(messages, tools)`), False for a handler of one request."""
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in parameters if p.kind in positional and p.default is inspect.Parameter.empty]
    if not required and any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return False  # `handler(*args)`: give it the request
    if len(required) not in (1, 2):
        raise ToolbenchError("bench.misuse", "a sampling handler takes one request, or (messages, tools) like "
                             f"a model; this one requires {len(required)} positional arguments")
    return len(required) == 2


async def invoke(fn: Handler, *args: Any) -> Any:
    """Await an async handler; run a sync one in a worker thread."""
    call = getattr(fn, "__call__", fn)  # noqa: B004 - an instance with an async __call__ counts too
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call):
        return await fn(*args)
    reply = await asyncio.to_thread(fn, *args)
    return await reply if inspect.isawaitable(reply) else reply


async def notify(handler: Handler | None, event: Any, what: str) -> None:
    """Give `event` to a display callback (sync, on the bench loop, or async); its failure is
    logged, never passed on: a display must not break the call or the session."""
    if handler is None:
        return
    try:
        reply = handler(event)
        if inspect.isawaitable(reply):
            await reply
    except Exception:
        _log.exception("the MCP %s handler raised", what)


class CallTrace:
    """What happened around one call besides its answer: progress, and the server's requests."""

    def __init__(self, side: ClientSide, tool: str, call_id: str | None) -> None:
        self._side = side
        self.tool = tool
        self.call_id = call_id
        self.events: deque[ProgressEvent] = deque(maxlen=MAX_EVENTS)
        self.event_count = 0
        self.requests: deque[dict[str, Any]] = deque(maxlen=MAX_EVENTS)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback for this call (recorded first: the answer may be next)."""
        event = ProgressEvent(self._side.server, self.tool, self.call_id, progress, total, message)
        self.events.append(event)
        self.event_count += 1
        await notify(self._side.handlers.progress, event, "progress")

    def note(self, method: str, outcome: str, detail: str | None = None) -> None:
        entry = {"method": method, "outcome": outcome}
        if detail:
            entry["detail"] = detail
        self.requests.append(entry)

    def extras(self) -> dict[str, Any]:
        """The keys this call adds to its result's `structured` (none when nothing happened)."""
        out: dict[str, Any] = {}
        if self.event_count:
            out["progress"] = {"count": self.event_count, "last": [e.to_json() for e in self.events]}
        if self.requests:
            out["serverRequests"] = list(self.requests)
        return out


class ClientSide:
    """One connection's client half: the callbacks handed to the SDK client, and the call trace.

    `roots` is the registration's setting: what this connection declares and answers as roots."""

    def __init__(self, server: str, handlers: Handlers, roots: RootsSetting = WORKSPACE) -> None:
        self.server = server
        self.handlers = handlers
        self.roots = roots
        self.declared = handlers.wanted(roots)
        self.current: CallTrace | None = None

    def options(self) -> dict[str, Any]:
        """`mcp.Client` keyword arguments: the SDK declares a capability when its callback is given."""
        options: dict[str, Any] = {}
        if "roots" in self.declared:
            options["list_roots_callback"] = self._list_roots
        if "sampling" in self.declared:
            options["sampling_callback"] = self._sample
        if "elicitation" in self.declared:
            options["elicitation_callback"] = self._elicit
        return options

    def begin(self, tool: str, call_id: str | None) -> CallTrace:
        self.current = CallTrace(self, tool, call_id)
        return self.current

    def end(self, trace: CallTrace) -> None:
        if self.current is trace:
            self.current = None

    def note_request(self, method: str) -> None:
        """A request arrived from the server (seen on the wire): note those the SDK refuses for us."""
        capability = _METHODS.get(method)
        if capability is not None and capability not in self.declared and self.current is not None:
            self.current.note(method, "refused", f"mcp.capability_not_offered: toolbench did not declare {capability}")

    # -- the SDK callbacks ------------------------------------------------------------------

    async def _list_roots(self, context: Any) -> types.ListRootsResult | types.ErrorData:
        provider = self.handlers.roots
        try:
            if self.roots == WORKSPACE:
                paths = list(provider()) if provider is not None else []
            else:  # a list (a connection on False declares no roots, so the SDK refuses for us)
                paths = list(self.roots or ())
            roots = [types.Root.model_validate({"uri": Path(p).resolve().as_uri(), "name": Path(p).name})
                     for p in paths]
        except Exception as exc:  # a provider failing must reach the server as an error, not kill the session
            self._note("roots/list", "failed", f"{type(exc).__name__}: {exc}")
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"toolbench could not list its roots: {exc}")
        self._note("roots/list", "answered")
        return types.ListRootsResult(roots=roots)

    async def _sample(self, context: Any, params: Any) -> Any:
        method = "sampling/createMessage"
        sampling = self.handlers.sampling
        if sampling is None:
            return self._refuse(method, "toolbench has no sampling handler now (it was removed after connecting)")
        handler, is_model = sampling
        trace = self.current
        request = sampling_request(self.server, trace.tool if trace else None, trace.call_id if trace else None,
                                   params.model_dump(by_alias=True, mode="json", exclude_none=True))
        args = (request.messages, []) if is_model else (request,)
        model = getattr(handler, "model", None)
        try:
            if speaks_protocol(handler):
                wire: dict[str, Any] | None = await sample(handler, request)
            else:
                call = cast(Handler, handler)  # not a Model: set_sampling took it as a callable
                wire = sampling_result(await invoke(call, *args), model if isinstance(model, str) else "toolbench")
            if wire is None:
                self._note(method, "declined")
                return types.ErrorData(code=DECLINED, message="the sampling request was declined")
            result = types.CreateMessageResult.model_validate(wire)
        except (ReplyInvalid, ValidationError) as exc:
            return self._fail(method, f"the sampling handler's answer is not valid: {_first_line(exc)}")
        except Exception as exc:  # the handler's own failure goes to the server as an error
            return self._fail(method, f"the sampling handler failed: {type(exc).__name__}: {exc}")
        self._note(method, "answered")
        return result

    async def _elicit(self, context: Any, params: Any) -> types.ElicitResult | types.ErrorData:
        method = "elicitation/create"
        handler = self.handlers.elicitation
        if handler is None:
            return self._refuse(method, "toolbench has no elicitation handler now (it was removed after connecting)")
        trace = self.current
        request = elicitation_request(self.server, trace.tool if trace else None, trace.call_id if trace else None,
                                      params.model_dump(by_alias=True, mode="json", exclude_none=True))
        try:
            result = types.ElicitResult.model_validate(elicitation_result(await invoke(handler, request)))
        except (ReplyInvalid, ValidationError) as exc:
            return self._fail(method, f"the elicitation handler's answer is not valid: {_first_line(exc)}")
        except Exception as exc:
            return self._fail(method, f"the elicitation handler failed: {type(exc).__name__}: {exc}")
        self._note(method, result.action)
        return result

    def _note(self, method: str, outcome: str, detail: str | None = None) -> None:
        if self.current is not None:
            self.current.note(method, outcome, detail)

    def _refuse(self, method: str, message: str) -> types.ErrorData:
        self._note(method, "refused", message)
        return types.ErrorData(code=types.INVALID_REQUEST, message=message)

    def _fail(self, method: str, message: str) -> types.ErrorData:
        self._note(method, "failed", message)
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message)


def _first_line(exc: Exception) -> str:
    lines = str(exc).splitlines()
    return " ".join(lines[:3]) if lines else type(exc).__name__
