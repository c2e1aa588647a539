"""Helpers every provider module shares: JSON copies, the schema walk, name rules, result text."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from ..core.arguments import quote
from ..core.errors import ToolbenchError
from .types import DecodedCall, Exchange, Problem

# Keywords whose value is a schema, a list of schemas, or a map of name -> schema. Everything
# else (enum, const, default, examples, ...) is a plain value and is never walked into.
SCHEMA_KEYS: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
    }
)
SCHEMA_LIST_KEYS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAP_KEYS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})

ERROR_HEADING: Final = "## Tool error"
UNKNOWN_OUTCOME_TEXT: Final = (
    "The outcome of this call is unknown: it may or may not have run, and no result was recorded. "
    "Check the current state before repeating the call."
)


def clone_json(value: Any) -> Any:
    """A fresh copy of a JSON value: new dicts and lists, shared immutable leaves.

    Much faster than `copy.deepcopy` on schemas, and enough: leaves are str, numbers, bool, None."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _LEAVES else clone_json(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _LEAVES else clone_json(v) for v in value]
    if isinstance(value, dict):
        return {k: clone_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clone_json(v) for v in value]
    return value


_LEAVES: Final = frozenset({str, int, float, bool, type(None)})


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def pointer(parent: str, *parts: str | int) -> str:
    """A JSON pointer extended by `parts`, escaped as RFC 6901 says."""
    out = parent
    for part in parts:
        out += "/" + str(part).replace("~", "~0").replace("/", "~1")
    return out


def rebuild(schema: Any, drop: frozenset[str]) -> Any:
    """`schema` without the keywords in `drop` at any schema position, copied on write.

    Subtrees that hold none of those keywords are shared with the input, not copied. Property
    names and plain values are never touched: a property called `$id` stays."""
    if type(schema) is not dict:
        return schema
    out: dict[str, Any] | None = None
    for key, value in schema.items():
        if key in drop:
            new: Any = _DROPPED
        elif key in SCHEMA_MAP_KEYS and type(value) is dict:
            new = _rebuild_map(value, drop)
        elif key in SCHEMA_LIST_KEYS and type(value) is list:
            new = _rebuild_list(value, drop)
        elif key in SCHEMA_KEYS:
            new = _rebuild_list(value, drop) if type(value) is list else rebuild(value, drop)
        else:
            continue
        if new is not value and out is None:
            out = dict(schema)
        if out is not None and new is not value:
            if new is _DROPPED:
                del out[key]
            else:
                out[key] = new
    return schema if out is None else out


_DROPPED: Final = object()


def _rebuild_map(value: dict[str, Any], drop: frozenset[str]) -> dict[str, Any]:
    changed = {name: new for name, sub in value.items() if (new := rebuild(sub, drop)) is not sub}
    return {**value, **changed} if changed else value


def _rebuild_list(value: list[Any], drop: frozenset[str]) -> list[Any]:
    new = [rebuild(sub, drop) for sub in value]
    return new if any(a is not b for a, b in zip(new, value, strict=True)) else value


def walk(schema: Any, path: str = "") -> Iterator[tuple[dict[str, Any], str]]:
    """Every subschema (dicts only) with its JSON pointer, the root first."""
    if not isinstance(schema, dict):
        return
    yield schema, path
    for key, value in schema.items():
        if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
            for name, sub in value.items():
                yield from walk(sub, pointer(path, key, name))
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from walk(sub, pointer(path, key, i))
        elif key in SCHEMA_KEYS:
            if isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from walk(sub, pointer(path, key, i))
            else:
                yield from walk(value, pointer(path, key))


def is_object_schema(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object" or (isinstance(kind, list) and "object" in kind) or (kind is None and "properties" in schema)
    )


def check_name(
    protocol: str, call_name: str, pattern: re.Pattern[str], max_bytes: int, charset: str
) -> list[Problem]:
    """`name.pattern` and `name.length` problems of one call name (length in bytes, like the APIs)."""
    problems = []
    size = len(call_name.encode("utf-8"))
    if size == 0 or size > max_bytes:
        problems.append(
            Problem(
                protocol,
                call_name,
                "name.length",
                f"call name is {size} bytes; {protocol} takes 1 to {max_bytes}",
                True,
            )
        )
    if size and not pattern.fullmatch(call_name):
        problems.append(
            Problem(
                protocol,
                call_name,
                "name.pattern",
                f"call name `{call_name}` has characters {protocol} refuses; allowed: {charset}",
                True,
            )
        )
    return problems


def check_common(protocol: str, call_names: Iterable[str]) -> list[Problem]:
    """List-level problems every provider shares: duplicate call names."""
    seen: set[str] = set()
    problems = []
    for name in call_names:
        if name in seen:
            problems.append(
                Problem(
                    protocol,
                    name,
                    "name.duplicate",
                    f"call name `{name}` is offered twice; tool names must be unique",
                    True,
                )
            )
        seen.add(name)
    return problems


def check_root(protocol: str, call_name: str, schema: Any) -> list[Problem]:
    """The root must be an object schema for every provider."""
    if not isinstance(schema, dict):
        return [
            Problem(
                protocol,
                call_name,
                "schema.not_object",
                f"input schema is {type(schema).__name__}, not a JSON object",
                True,
            )
        ]
    if schema.get("type") != "object":
        return [
            Problem(
                protocol,
                call_name,
                "schema.root_not_object",
                f'{protocol} needs `"type": "object"` at the root of the input schema; '
                f"got {compact_json(schema.get('type'))}",
                True,
            )
        ]
    return []


def result_text(exchange: Exchange) -> tuple[str, bool]:
    """What the model reads for one result, and whether it is an error.

    Errors get the `## Tool error` heading, a blank line, then the trimmed text; a call with no
    confirmed result gets the outcome-unknown error text."""
    result = exchange.result
    if result is None:
        return f"{ERROR_HEADING}\n\n{UNKNOWN_OUTCOME_TEXT}", True
    if result.is_error:
        return f"{ERROR_HEADING}\n\n{result.content.strip()}", True
    return result.content, False


def replay_object(arguments: Any) -> dict[str, Any]:
    """The arguments object to replay: a dict as is; a ToolArguments' replay object; else `{}`."""
    if isinstance(arguments, dict):
        return arguments
    replay = getattr(arguments, "replay_object", None)
    if callable(replay):
        value = replay()
        return value if isinstance(value, dict) else {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    return {}


def arguments_text(exchange: Exchange) -> str:
    """A call's arguments as the APIs that carry them as text take them back: the text the
    provider sent when the record kept it (verbatim: the prompt prefix stays byte-identical),
    else the object's compact JSON (`{}` for invalid arguments)."""
    text = exchange.arguments_text
    return text if isinstance(text, str) else compact_json(replay_object(exchange.arguments))


def check_history(rounds: Iterable[Iterable[Exchange]], *, ids_required: bool = True,
                  ids_unique: bool = True) -> None:
    """Refuse a history the provider does not accept: empty names, empty call ids (where ids
    pair calls and results), a call id used twice (in the whole history, or with
    `ids_unique=False` in one round: an API that pairs results with the assistant message just
    before them)."""
    seen: set[str] = set()
    for exchanges in rounds:
        if not ids_unique:
            seen = set()
        for ex in exchanges:
            if not ex.call_name:
                raise ToolbenchError("protocol.history_invalid", "a call in the history has an empty call name")
            if not ex.call_id:
                if ids_required:
                    raise ToolbenchError(
                        "protocol.history_invalid", f"call `{ex.call_name}` in the history has an empty call id"
                    )
                continue
            if ex.call_id in seen:
                raise ToolbenchError(
                    "protocol.history_invalid",
                    f"call id `{ex.call_id}` appears twice in the history; ids must be unique",
                )
            seen.add(ex.call_id)


def invalid_call(message: str) -> ToolbenchError:
    return ToolbenchError("model.invalid_tool_call", message)


def invalid_response(message: str) -> ToolbenchError:
    return ToolbenchError("model.invalid_response", message)


def refusal(what: str, explanation: Any = None) -> ToolbenchError:
    """model.provider_refusal: `what` happened, then the provider's own explanation (when it sent
    a non-blank one) in double quotes, cut at 200 characters: a model's text is not trusted to be short."""
    why = explanation.strip() if isinstance(explanation, str) else ""
    return ToolbenchError("model.provider_refusal", f'{what}: "{quote(why)}"' if why else what)


class OutputTruncated(ToolbenchError):
    """`model.output_truncated`; `calls` says whether the cut body holds any call (a run ends
    a cut answer without calls as `length`, its text kept, and one with calls as an error)."""

    def __init__(self, message: str, *, calls: bool) -> None:
        super().__init__("model.output_truncated", message)
        self.calls = calls


def truncated(message: str, *, calls: bool) -> OutputTruncated:
    return OutputTruncated(message, calls=calls)


def get_dict(container: Mapping[str, Any], key: str, what: str) -> dict[str, Any]:
    value = container.get(key)
    if not isinstance(value, dict):
        raise invalid_response(f"{what} is missing `{key}` or it is not an object")
    return value


def decoded_call(what: str, name: Any, call_id: Any, id_field: str, arguments: Any,
                 seen: set[str], *, fallback_id: str | None = None) -> DecodedCall:
    """One decoded call; a call without name or id (unless `fallback_id` stands in for the id),
    or an id seen before in the same response, is `model.invalid_tool_call` (`what` names the
    item, e.g. "tool call 2")."""
    checked_name = non_empty_str(name)
    if checked_name is None:
        raise invalid_call(f"{what} has an empty name")
    checked_id = non_empty_str(call_id) or fallback_id
    if checked_id is None:
        raise invalid_call(f"{what} (`{checked_name}`): {id_field} is required")
    if checked_id in seen:
        raise invalid_call(f"{id_field} `{checked_id}` appears twice in one response")
    seen.add(checked_id)
    return DecodedCall(checked_id, checked_name, arguments)


def non_empty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def seed_digest(id_seed: str | None, response_id: Any, material: Any) -> str:
    """12 hex characters naming one response, for the ids of calls it sent without one: from
    `id_seed` if given (the runtime passes one unique per round), else the response's own id,
    else `material` (the calls' part of the body) as canonical JSON."""
    seed = id_seed or non_empty_str(response_id)
    if seed is None:
        seed = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:12]


ChoiceKind = str  # "none" | "auto" | "required" | "specific"


def resolve_choice(choice: Any, call_names: Iterable[str]) -> tuple[ChoiceKind, str | None] | None:
    """Check a tool choice against the advertised names; `None` means "send no tool choice".

    `"none"` and `"auto"` with no tools give `None` (the request then carries neither `tools`
    nor a tool choice); `"required"` or a specific tool with no tools is an error."""
    names = set(call_names)
    name: str | None = None
    if isinstance(choice, str) and choice in ("none", "auto", "required"):
        kind = choice
    elif isinstance(choice, Mapping) and set(choice) == {"name"} and isinstance(choice["name"], str):
        kind, name = "specific", choice["name"]
    else:
        raise ToolbenchError(
            "protocol.tool_choice_invalid",
            f'tool choice {choice!r} is not "none", "auto", "required" or {{"name": <call name>}}',
        )
    if not names:
        if kind in ("required", "specific"):
            raise ToolbenchError(
                "agent.tool_choice_requires_tools", f"tool choice {kind} needs at least one advertised tool"
            )
        return None
    if name is not None and name not in names:
        raise ToolbenchError(
            "agent.tool_choice_tool_not_advertised",
            f"tool choice names `{name}`, which is not among the advertised tools",
        )
    return kind, name
