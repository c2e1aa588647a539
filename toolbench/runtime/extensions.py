"""Python callables as extension tools: `extension/<extension-id>:<name>`.

The input schema comes from the signature (a pydantic model built from the parameters)
unless one is given. The runtime checks arguments against that schema as JSON Schema reads it,
like every builtin's (`ExtensionSource.checks_arguments`); the model then converts them to the
parameters' types. A returned JSON value
becomes the content (a string as-is, anything else as compact JSON) and the structured
result; a `ToolOutput` is taken as it is (its `attachments` are kept as files of the result),
and a lone `Attachment` is a result with no text and that attachment; a raised exception
becomes `extension.tool_error` with its message.

Time limits (`extension.tool_timeout`): an async function is awaited on the bench loop for at
most its tool's `timeout` or else the profile's `tools.extension_timeout_seconds`, then
cancelled (a coroutine that ignores the cancellation is left running). A sync function runs
inline, unbounded, unless it was registered with `timeout=`: it then runs on a daemon worker
thread, and the call ends when the time is up, but the thread cannot be killed and runs on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import math
import threading
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..core.descriptors import Scene, ToolDescriptor
from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId
from ..core.loop import CANCEL_GRACE_SECONDS
from ..core.results import Attachment, ToolOutput
from ..core.schema_check import SchemaInvalid, compile_schema
from ..tools.base import ToolContext
from .sources import PERMISSIONS, ToolSource


@dataclass(frozen=True, slots=True)
class ExtensionTool:
    descriptor: ToolDescriptor
    fn: Callable[..., Any]
    model: type[BaseModel] | None  # validates arguments when the schema came from the signature
    timeout: float | None = None  # seconds; set: a sync fn runs on a worker thread with this limit

    def invoke(self, args: dict[str, Any], *, timeout: float = 60.0) -> ToolOutput | Awaitable[ToolOutput]:
        """Call the function: a ToolOutput, or an awaitable of one (async functions, and sync
        functions with a per-tool timeout). `timeout` is the profile's limit for async functions."""
        # The runtime has checked `args` against the schema the model sees ("21" is no integer);
        # for a signature, pydantic converts them to the parameters' Python types.
        kwargs = args
        if self.model is not None:
            try:
                kwargs = self.model.model_validate(args).__dict__  # fields only: extra is forbidden
            except ValidationError as exc:
                message = _describe(exc) + ". Fix the arguments and call again."
                raise ToolError("tool.invalid_arguments", message) from exc
        if self.timeout is not None and not inspect.iscoroutinefunction(self.fn):
            return _in_thread(self, kwargs, self.timeout)
        try:
            value = self.fn(**kwargs)
        except ToolError:
            raise
        except Exception as exc:
            raise _tool_error(exc) from exc
        if inspect.isawaitable(value):
            return _finish_async(self, value, timeout if self.timeout is None else self.timeout)
        return to_output(value)


async def _finish_async(tool: ExtensionTool, awaitable: Any, timeout: float) -> ToolOutput:
    try:
        value = await _bounded(tool, awaitable, timeout, threaded=False)
    except ToolError:
        raise
    except Exception as exc:
        raise _tool_error(exc) from exc
    return to_output(value)


async def _bounded(tool: ExtensionTool, awaitable: Any, timeout: float, *, threaded: bool) -> Any:
    """Await in a task of its own for at most `timeout` s; then cancel it and do not wait for it
    (`asyncio.wait_for` would wait for a coroutine that ignores the cancellation). When the
    caller is cancelled, the task is cancelled too, and its clean-up gets up to
    `CANCEL_GRACE_SECONDS` to run before the caller's cancellation goes on."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_GRACE_SECONDS)
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_consume)  # no "exception never retrieved" when it ends later
        raise _timeout_error(tool, timeout, threaded=threaded)
    return task.result()


async def _in_thread(tool: ExtensionTool, kwargs: dict[str, Any], timeout: float) -> ToolOutput:
    """Run a sync function on a daemon thread (one per call: a stuck call must not hold a
    pool's slot nor the interpreter's exit) and wait at most `timeout` s for it."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.set_running_or_notify_cancel()  # running: a timeout cannot cancel it, the thread sets it

    def work() -> None:
        try:
            future.set_result(tool.fn(**kwargs))
        except BaseException as exc:  # handed to the caller, like an inline call's exception
            future.set_exception(exc)

    name = f"toolbench-extension-{tool.descriptor.id.name}"
    threading.Thread(target=work, name=name, daemon=True).start()
    try:
        value = await _bounded(tool, asyncio.wrap_future(future), timeout, threaded=True)
        if inspect.isawaitable(value):  # a sync function that returned a coroutine
            value = await _bounded(tool, value, timeout, threaded=False)
    except ToolError:
        raise
    except Exception as exc:
        raise _tool_error(exc) from exc
    return to_output(value)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _timeout_error(tool: ExtensionTool, timeout: float, *, threaded: bool) -> ToolError:
    name = tool.descriptor.id.name
    if threaded:
        why = "it may still be running in the background (a thread cannot be stopped)"
    else:
        why = "it was cancelled, but it may still be running if it ignores cancellation"
    message = (f"`{name}` did not finish within {timeout:g} seconds; {why}, so its effects may still "
               "appear. Check the state before calling it again.")
    return ToolError("extension.tool_timeout", message,
                     structured={"timeoutSeconds": timeout, "mayStillBeRunning": True,
                                 "ranIn": "thread" if threaded else "loop"})


def _tool_error(exc: Exception) -> ToolError:
    message = str(exc) or type(exc).__name__
    return ToolError("extension.tool_error", message, structured={"exception": type(exc).__name__})


def to_output(value: Any) -> ToolOutput:
    if isinstance(value, ToolOutput):
        return value
    if isinstance(value, str):
        return ToolOutput(content=value, structured=value)
    if isinstance(value, Attachment):
        return ToolOutput(content="", attachments=(value,))
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolError("extension.tool_error",
                        f"the extension returned a {type(value).__name__}, which is not a JSON value") from exc
    return ToolOutput(content=text, structured=value)


class ExtensionSource(ToolSource):
    """The bench's registered Python callables, and their `ask` permissions."""

    def __init__(self) -> None:
        self._tools: dict[ToolId, ExtensionTool] = {}

    def register(self, tool: ExtensionTool) -> ToolId:
        self._tools[tool.descriptor.id] = tool
        return tool.descriptor.id

    def unregister(self, tool_id: ToolId) -> None:
        self._tools.pop(tool_id, None)

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [t.descriptor for t in self._tools.values()]

    def has(self, tool_id: ToolId) -> bool:
        return tool_id in self._tools

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        tool = self._tools.get(tool_id)
        if tool is None:  # unregistered after the snapshot was made
            raise ToolError("extension.tool_unavailable",
                            f"`{tool_id.name}` is no longer registered; use another tool.")
        return tool.invoke(arguments, timeout=ctx.profile.tools.extension_timeout_seconds)

    def set_permission(self, tool_id: ToolId, permission: str) -> ToolId:
        if permission in PERMISSIONS and tool_id not in self._tools:
            raise ToolbenchError("extension.tool_unavailable", f"`{tool_id}` is not registered")
        return super().set_permission(tool_id, permission)


def make_extension_tool(
    extension_id: str,
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: dict[str, Any] | None = None,
    scenes: Sequence[Scene] = ("chat", "session"),
    timeout: float | None = None,
) -> ExtensionTool:
    if not callable(fn):
        raise ToolbenchError("bench.misuse", f"{fn!r} is not callable")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not math.isfinite(timeout) or timeout <= 0):
        raise ToolbenchError("bench.misuse", f"timeout must be a positive number of seconds or None, not {timeout!r}")
    tool_name = str(name or getattr(fn, "__name__", ""))
    tool_id = ToolId.extension(extension_id, tool_name)
    model = None
    if input_schema is None:
        model = _signature_model(fn, tool_name)
        input_schema = _clean_schema(model.model_json_schema())
    elif not isinstance(input_schema, dict) or input_schema.get("type") != "object":
        raise ToolbenchError("bench.misuse", "input_schema must be a JSON Schema object with type `object`")
    else:
        try:  # refused here, where the developer can fix it, not at the model's first call
            compile_schema(input_schema)
        except SchemaInvalid as exc:
            raise ToolbenchError("bench.misuse", f"input_schema {exc}") from None
    bad_scenes = set(scenes) - {"chat", "session"}
    if bad_scenes or not scenes:
        raise ToolbenchError("bench.misuse", "scenes must be a non-empty subset of ('chat', 'session')")
    text = description if description is not None else inspect.getdoc(fn) or ""
    descriptor = ToolDescriptor(id=tool_id, description=text, input_schema=input_schema,
                                scenes=frozenset(scenes))
    return ExtensionTool(descriptor=descriptor, fn=fn, model=model,
                         timeout=None if timeout is None else float(timeout))


def _signature_model(fn: Callable[..., Any], tool_name: str) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        hints = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolbenchError("bench.misuse", f"`{tool_name}`: *args and **kwargs cannot become a schema; "
                                 "give input_schema")
        annotation = hints.get(param.name, Any if param.annotation is param.empty else param.annotation)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    try:
        return create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as exc:
        message = f"`{tool_name}`: cannot derive a schema from the signature: {exc}"
        raise ToolbenchError("bench.misuse", message) from exc


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles (noise for a model) and close the object."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    cleaned: dict[str, Any] = strip(schema)
    cleaned.setdefault("properties", {})
    cleaned["additionalProperties"] = False
    return cleaned


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            parts.append(f"`{where}` is not supported")
        elif err["type"] == "missing":
            parts.append(f"`{where}` is required")
        else:
            parts.append(f"`{where}`: {err['msg']}")
    return "; ".join(parts)
