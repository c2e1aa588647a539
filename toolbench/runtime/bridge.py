"""Nested calls: the `ToolPort` an invocation gives a builtin (the shell bridge) for its own tools.

A nested call is an ordinary call of the invocation, made by a running builtin instead of the
model: `run(call_name, arguments, call_id)` is the invocation's own path (gate, argument check,
approval, source, projection, record). What this module adds is the identity of such a call:
it runs in the caller's round, its call id is `<caller's id>/<n>` (n counts from 1 per caller),
and its record's `via` is the caller's id, so a transcript can leave it out (the model never
sent it). While a nested call runs, `nested_in()` names its caller; the invocation gives such a
call no port, which bounds nesting at one level whatever the tools do.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from ..core.descriptors import ToolDescriptor
from ..core.ids import ToolId
from ..core.results import ToolResult
from ..core.snapshot import Binding

# The caller's call id while a nested call runs, in the thread that runs it (the invocation
# builds a nested call's context and record there).
_VIA: ContextVar[str | None] = ContextVar("toolbench_nested_via", default=None)


def nested_in() -> str | None:
    """The call id of the call whose nested call runs here, or None for a model's call."""
    return _VIA.get()


class NestedCalls:
    """The `ToolPort` of one running call (`caller_id`): its invocation's tools, as nested calls."""

    __slots__ = ("_bindings", "_call_names", "_caller", "_lock", "_run", "_seq")

    def __init__(self, caller_id: str, bindings: Sequence[Binding], call_names: Mapping[str, str],
                 run: Callable[[str, dict[str, Any], str], ToolResult]) -> None:
        self._caller = caller_id
        self._bindings = bindings  # made for every call: the descriptors are read only if asked for
        self._call_names = call_names
        self._run = run
        self._seq = itertools.count(1)
        self._lock = threading.Lock()  # a script's calls may come from more than one thread

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return tuple(b.descriptor for b in self._bindings)

    def call(self, tool_id: ToolId, arguments: dict[str, Any]) -> ToolResult:
        with self._lock:
            call_id = f"{self._caller}/{next(self._seq)}"
        # A tool the snapshot does not offer goes in under its id text: the invocation refuses
        # it as an unknown tool, with a record, as it would a model's.
        name = self._call_names.get(str(tool_id), str(tool_id))
        token = _VIA.set(self._caller)
        try:
            return self._run(name, arguments, call_id)
        finally:
            _VIA.reset(token)
