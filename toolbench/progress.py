"""The progress bar of long runs (`evals.run`, `bench.replay_many`, `toolbench check`): tqdm's
auto face, a widget in a notebook and text in a terminal, with the items done, the running
rate of good ones, the bad ones and those in flight. Nothing is made (tqdm is not even
imported) when it is not shown.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


class Progress:
    def __init__(self, total: int | None, shown: bool | None, *, desc: str, unit: str, good: str = "passed",
                 bad: str = "failed") -> None:
        """`shown=None` shows it only on a terminal (a CI log gets none, and tqdm is not imported)."""
        self._bar: Any = None
        self._good_name, self._bad_name = good, bad
        self._flying = self._good = self._bad = 0
        if shown or (shown is None and sys.stderr.isatty()):
            from tqdm.auto import tqdm  # type: ignore[import-untyped]

            self._bar = tqdm(total=total, desc=desc, unit=unit)

    def flying(self, change: int) -> None:
        self._flying += change

    def describe(self, text: str, *, total: int | None = None) -> None:
        """A new stage: its description and, once known, how many items it has."""
        if self._bar is not None:
            if total is not None:
                self._bar.total = total
            self._bar.set_description_str(text)

    def done(self, good: bool) -> None:
        self.done_many([good], self._flying)

    def done_many(self, goods: Iterable[bool], flying: int) -> None:
        """Items came back (a cluster's shard at once); `flying` are still out."""
        goods = list(goods)
        self._flying = flying
        self._good += sum(goods)
        self._bad += len(goods) - sum(goods)
        if self._bar is not None and goods:
            finished = self._good + self._bad
            self._bar.set_postfix({self._good_name: f"{self._good / finished:.0%}", self._bad_name: self._bad,
                                   "in_flight": self._flying}, refresh=False)
            self._bar.update(len(goods))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
