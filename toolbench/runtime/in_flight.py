"""Work items run on the bench loop with at most N in flight, driven from the caller's thread.

Each item is started on the caller's thread (making an invocation may itself use the loop, so
it is never made on it) and its coroutine submitted to the loop; when one ends the next starts.
The outputs come back in the items' order, whatever order they finish in. The items are read
lazily: a long iterable (a corpus of recordings) is never all in memory. Interrupted, or when
an item fails, the unfinished ones are cancelled and each is still handed to `done` (its
invocation closed), and the failure goes on.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
from collections.abc import Callable, Iterable
from typing import TypeVar

from ..core.errors import ToolbenchError, check_positive_int

T = TypeVar("T")
H = TypeVar("H")
R = TypeVar("R")
U = TypeVar("U")


def check_concurrency(concurrency: object) -> int:
    return check_positive_int("concurrency", concurrency)


def check_executor(executor: object) -> None:
    if not (executor is None or executor == "ray"):
        raise ToolbenchError("bench.misuse", f"executor is None (this process) or 'ray' (a Ray cluster: "
                             f"pip install 'toolbench[ray]'), not {executor!r}")


def run_bounded(items: Iterable[T], start: Callable[[T], tuple[concurrent.futures.Future[R], H]],
                done: Callable[[H, concurrent.futures.Future[R]], U], concurrency: int) -> list[U]:
    """`start(item)` gives the item's future and a handle; `done(handle, future)` is called on
    this thread as each ends (its future done, or cancelled when the run is cut short)."""
    check_concurrency(concurrency)
    outputs: dict[int, U] = {}
    waiting = iter(enumerate(items))
    flying: dict[concurrent.futures.Future[R], tuple[int, H]] = {}
    try:
        while True:
            for index, item in itertools.islice(waiting, concurrency - len(flying)):
                future, handle = start(item)
                flying[future] = (index, handle)
            if not flying:
                break
            finished, _ = concurrent.futures.wait(flying, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in finished:
                index, handle = flying.pop(future)
                outputs[index] = done(handle, future)
    finally:
        for future, (_index, handle) in flying.items():  # cut short: the first failure is the one raised
            future.cancel()
            with contextlib.suppress(Exception):
                done(handle, future)
    return [outputs[i] for i in range(len(outputs))]
