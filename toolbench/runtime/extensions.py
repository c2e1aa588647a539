"""Python callables as extension tools: `extension/<extension-id>:<name>`.

The input schema comes from the signature (a pydantic model built from the parameters)
unless one is given; a returned JSON value becomes the content (a string as-is, anything
else as compact JSON) and the structured result; a raised exception becomes
`extension.tool_error` with its message.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..core.descriptors import Scene, ToolDescriptor
from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId
from ..core.schema_check import check_arguments
from ..tools.base import ToolOutput


@dataclass(frozen=True, slots=True)
class ExtensionTool:
    descriptor: ToolDescriptor
    fn: Callable[..., Any]
    model: type[BaseModel] | None  # validates arguments when the schema came from the signature

    def invoke(self, args: dict[str, Any]) -> Any:
        """Call the function: a ToolOutput, or an awaitable of one for async functions."""
        if self.model is not None:
            try:
                kwargs = self.model.model_validate(args).__dict__  # fields only: extra is forbidden
            except ValidationError as exc:
                message = _describe(exc) + ". Fix the arguments and call again."
                raise ToolError("tool.invalid_arguments", message) from exc
        else:
            check_arguments(self.descriptor.input_schema, args)
            kwargs = args
        try:
            value = self.fn(**kwargs)
        except ToolError:
            raise
        except Exception as exc:
            raise _tool_error(exc) from exc
        if inspect.isawaitable(value):
            return _finish_async(value)
        return to_output(value)


async def _finish_async(awaitable: Any) -> ToolOutput:
    try:
        value = await awaitable
    except ToolError:
        raise
    except Exception as exc:
        raise _tool_error(exc) from exc
    return to_output(value)


def _tool_error(exc: Exception) -> ToolError:
    message = str(exc) or type(exc).__name__
    return ToolError("extension.tool_error", message, structured={"exception": type(exc).__name__})


def to_output(value: Any) -> ToolOutput:
    if isinstance(value, ToolOutput):
        return value
    if isinstance(value, str):
        return ToolOutput(content=value, structured=value)
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolError("extension.tool_error",
                        f"the extension returned a {type(value).__name__}, which is not a JSON value") from exc
    return ToolOutput(content=text, structured=value)


def make_extension_tool(
    extension_id: str,
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: dict[str, Any] | None = None,
    scenes: Sequence[Scene] = ("chat", "session"),
) -> ExtensionTool:
    if not callable(fn):
        raise ToolbenchError("bench.misuse", f"{fn!r} is not callable")
    tool_name = str(name or getattr(fn, "__name__", ""))
    tool_id = ToolId.extension(extension_id, tool_name)
    model = None
    if input_schema is None:
        model = _signature_model(fn, tool_name)
        input_schema = _clean_schema(model.model_json_schema())
    elif not isinstance(input_schema, dict) or input_schema.get("type") != "object":
        raise ToolbenchError("bench.misuse", "input_schema must be a JSON Schema object with type `object`")
    bad_scenes = set(scenes) - {"chat", "session"}
    if bad_scenes or not scenes:
        raise ToolbenchError("bench.misuse", "scenes must be a non-empty subset of ('chat', 'session')")
    text = description if description is not None else inspect.getdoc(fn) or ""
    descriptor = ToolDescriptor(id=tool_id, description=text, input_schema=input_schema,
                                scenes=frozenset(scenes))
    return ExtensionTool(descriptor=descriptor, fn=fn, model=model)


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
    cleaned = strip(schema)
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
