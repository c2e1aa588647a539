"""Observers: what a tracer (`toolbench.otel`) is told about the bench's work, and nothing else.

An observer sees each model round of a run (`round`: a context manager around the request and
the round's calls, entered in the run's task, so what the calls do is inside it) and each
answered call (`call`: its record, right after the log line; its elapsed time is the call's
own). What an observer raises is logged, never raised into a call or a run, and an observer
cannot swallow what the run raises. With no observer the cost is one empty-list check.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .records import CallRecord
    from .run import Run

log = logging.getLogger(__name__)


class Observer(Protocol):
    def round(self, run: Run, index: int) -> AbstractContextManager[None]: ...

    def call(self, invocation_id: str, record: CallRecord) -> None: ...


def tell_call(observers: list[Observer], invocation_id: str, record: CallRecord) -> None:
    for observer in observers:
        try:
            observer.call(invocation_id, record)
        except Exception:  # a tracer's failure is not the tool's
            log.warning("an observer failed on a call record", exc_info=True)


@contextlib.contextmanager
def around_round(observers: list[Observer], run: Run, index: int) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for observer in observers:
            stack.enter_context(_guarded(observer.round, run, index))
        yield


@contextlib.contextmanager
def _guarded(make: Callable[[Run, int], AbstractContextManager[None]], run: Run, index: int) -> Iterator[None]:
    """One observer's round: its failures logged, the run's own errors passed on whatever it says."""
    try:
        inner = make(run, index)
        inner.__enter__()
    except Exception:
        log.warning("an observer failed at a round's start", exc_info=True)
        yield
        return
    try:
        yield
    except BaseException as exc:
        try:
            inner.__exit__(type(exc), exc, exc.__traceback__)
        except Exception:
            log.warning("an observer failed at a round's end", exc_info=True)
        raise
    try:
        inner.__exit__(None, None, None)
    except Exception:
        log.warning("an observer failed at a round's end", exc_info=True)
