"""LiveAgent's loop breaker: the same failing call, repeated, is told to stop.

A failure is keyed by what the model sent and what came back: the call name, the arguments and
the error code. When the same key fails again under a new call id the count goes up (a replay
of the same round and id does not count); any success, or a different failure, starts over.
Only what tools answer counts: the runtime's own refusals (budget, round limit, turn contract)
have their own guidance. From the
second failure in a row (`THRESHOLD`), the result says so and asks the model not to retry with
the same arguments (reference: LiveAgent §2.1). The count lives as long as the invocation
object (a reopened invocation starts at zero).
"""

from __future__ import annotations

from typing import Final

THRESHOLD: Final = 2

Key = tuple[str, str, str]  # call name, arguments as sent (compact JSON or raw text), error code


class LoopBreaker:
    __slots__ = ("_count", "_key", "_last_call_id")

    def __init__(self) -> None:
        self._key: Key | None = None
        self._count = 0
        self._last_call_id: tuple[int, str] | None = None

    def note(self, key: Key | None, call_id: tuple[int, str]) -> int:
        """Record one answered call (`key` None: it succeeded) by (round, call id); the failures
        of `key` in a row. Servers that reuse ids across rounds (`call_0`) still count."""
        if key is None:
            self._key, self._count, self._last_call_id = None, 0, None
            return 0
        if key != self._key:
            self._key, self._count = key, 1
        elif call_id != self._last_call_id:
            self._count += 1
        self._last_call_id = call_id
        return self._count


def guidance(count: int) -> str:
    """The line added to a failing call's text once it has failed `count` (>= THRESHOLD) times."""
    return (f"\n\nThis call has failed {count} times in a row with the same arguments and the same error. "
            "Do not retry it with the same arguments: change them, use another tool, or continue without it.")
