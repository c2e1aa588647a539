"""ToolArguments: the one place where a provider's wire arguments become a JSON object.

One layer of string encoding is removed, then one rule applies: an object is an object; the
empty forms (missing, null, blank string, "null") are the empty object; anything else is
invalid and keeps its raw text verbatim, so it can be quoted back and stored as sent. A dict
handed in directly is copied through JSON, so it is exactly what the same JSON text would give.
JSON means RFC 8259: `NaN`, `Infinity` and numbers past a float's range (`1e400`) are not
JSON, and providers refuse them when the arguments are replayed, so they are invalid here.
Arguments nested deeper than `MAX_DEPTH` levels are invalid too: valid JSON, but past what the
serialisers behind the records, the schema checks and the MCP SDK take (about 255 levels).

An object that came as JSON text (OpenAI's two APIs send arguments as a string) keeps that text
(`sent_text`): a transcript sends it back verbatim, so the prompt a provider caches stays
byte-identical; the object is what it means. The empty forms keep no text: they are no object
text to send back, and are replayed as `{}` like invalid arguments.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final

from .errors import ToolError

INVALID_ARGUMENTS_QUOTE_CHARS: Final = 200
MAX_DEPTH: Final = 128  # levels of arrays and objects (module doc)


class _Missing:
    """Sentinel for an absent `arguments` field."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


class ToolArguments:
    """Decoded call arguments: a valid object, or the raw invalid text. Frozen.

    Equality and hashing are by meaning (the object, or the invalid text): the same object sent
    as differently spaced text is the same arguments; `sent_text` only shapes the replay."""

    __slots__ = ("_raw", "_text", "_value")
    _value: dict[str, Any] | None
    _raw: str | None
    _text: str | None

    def __init__(self, value: dict[str, Any] | None, raw: str | None, text: str | None = None) -> None:
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_text", text if value is not None else None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ToolArguments is frozen")

    @classmethod
    def decode(cls, wire: Any = MISSING) -> ToolArguments:
        """Decode what a provider sent; never raises."""
        if wire is MISSING or wire is None:
            return cls({}, None)
        if isinstance(wire, dict):
            # Through JSON, as the wire would carry it: the caller's later changes to its dict
            # cannot reach the record, and a value JSON cannot hold is invalid, as on the wire.
            try:
                text = json.dumps(wire, allow_nan=False)
                return cls(_loads(text), None) if not _too_deep(text) else cls(None, _compact(wire))
            except (TypeError, ValueError, RecursionError):
                return cls(None, _compact(wire))
        if isinstance(wire, str):
            if not wire.strip():
                return cls({}, None)
            try:
                parsed = _loads(wire)
            except (ValueError, RecursionError):
                return cls(None, wire)
            if _too_deep(wire):
                return cls(None, wire)
            if parsed is None:
                return cls({}, None)
            if isinstance(parsed, dict):
                return cls(parsed, None, wire)
            return cls(None, wire)
        return cls(None, _compact(wire))

    @property
    def is_valid(self) -> bool:
        return self._value is not None

    @property
    def value(self) -> dict[str, Any]:
        if self._value is None:
            raise AttributeError("invalid arguments have no value; read .raw")
        return self._value

    @property
    def raw(self) -> str:
        if self._raw is None:
            raise AttributeError("valid arguments have no raw text; read .value")
        return self._raw

    def as_dict(self) -> dict[str, Any]:
        """The object, or `ToolError(tool.invalid_arguments)` quoting the raw text."""
        if self._value is not None:
            return self._value
        assert self._raw is not None
        raise ToolError("tool.invalid_arguments", invalid_arguments_message(self._raw))

    @property
    def sent_text(self) -> str | None:
        """The JSON text a valid object came as (module doc); None when it came as an object,
        or for the empty forms and invalid arguments (`raw` holds invalid text)."""
        return self._text

    def replay_text(self) -> str:
        """The object as compact JSON (`{}` for invalid arguments): the canonical text."""
        return _compact(self._value) if self._value is not None else "{}"

    def stored_text(self) -> str | None:
        """`sent_text` when it differs from `replay_text()` (what a record must keep to give it
        back; the same text is rebuilt from the object), else None."""
        text = self._text
        return text if text is not None and text != self.replay_text() else None

    def replay_object(self) -> dict[str, Any]:
        return self._value if self._value is not None else {}

    def to_json(self) -> Any:
        """Persistence form: the object, or the raw invalid text as a JSON string."""
        return self._value if self._value is not None else self._raw

    @classmethod
    def from_json(cls, value: Any, text: Any = None) -> ToolArguments:
        """The persistence form read back; `text` is the `stored_text()` kept beside it, taken
        only when it is JSON text of that very object (a log is data, not trusted to agree)."""
        if not isinstance(value, dict):
            return cls.decode(value)
        if isinstance(text, str):
            sent = cls.decode(text)
            if sent._text is not None and sent._value == value:
                return cls(value, None, text)
        return cls(value, None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolArguments):
            return NotImplemented
        return self._value == other._value and self._raw == other._raw

    def __hash__(self) -> int:
        return hash(self.replay_text() if self._raw is None else ("invalid", self._raw))

    def __repr__(self) -> str:
        if self._value is not None:
            return f"ToolArguments({self._value!r})"
        return f"ToolArguments.invalid({quote(self._raw or '')!r})"


def quote(raw: str) -> str:
    """The first 200 characters of raw text, then `…` if there was more."""
    if len(raw) <= INVALID_ARGUMENTS_QUOTE_CHARS:
        return raw
    return raw[:INVALID_ARGUMENTS_QUOTE_CHARS] + "…"


def invalid_arguments_message(raw: str) -> str:
    return (
        "Tool arguments must be a JSON object; send an empty object {} when the call takes no "
        f"arguments. Received: `{quote(raw)}`{_why_not_json(raw)}"
    )


def _why_not_json(raw: str) -> str:
    """Why `raw` is not an argument object (` (not JSON: <reason>)`, or too deep), so the model
    knows what to fix; "" when it parses (it is then simply not an object)."""
    try:
        _loads(raw)
    except RecursionError:
        return " (not JSON: nested too deeply)"
    except ValueError as exc:
        reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        if "integer string conversion" in reason:  # Python's own limit; the advice it gives is not the model's
            reason = f"an integer has over {sys.get_int_max_str_digits()} digits"
        return f" (not JSON: {quote(reason)})"
    if _too_deep(raw):
        return f" (nested deeper than {MAX_DEPTH} levels of arrays and objects; send flatter arguments)"
    return ""


def _not_json(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


def _finite(token: str) -> float:
    number = float(token)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"{token} is past the range of a JSON number a provider accepts")
    return number


def _too_deep(text: str) -> bool:
    """Whether the JSON `text` nests arrays and objects deeper than MAX_DEPTH.

    Text with fewer brackets than that cannot, so the common case costs two counts."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in text:  # brackets inside strings do not count
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def _loads(text: str) -> Any:
    """`json.loads` as RFC 8259 reads JSON (module doc)."""
    return json.loads(text, parse_constant=_not_json, parse_float=_finite)


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        # Not JSON (a Python object handed in by hand): keep a readable text instead of raising.
        import reprlib

        for render in (repr, reprlib.repr):  # reprlib: shallow and bounded, past repr's recursion
            try:
                return render(value)
            except Exception:  # a repr that raises, an int past str()'s digit limit, too deep
                continue
        return f"<{type(value).__name__} that cannot be shown>"
