"""Argument types the command line shares (argparse `type=`): one rule per kind of number."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def positive_number(unit: str) -> Callable[[str], float]:
    """A finite number above 0 (`--timeout` seconds, `--requests-per-minute`), or argparse's
    usage error saying what was expected."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"a positive number of {unit}, not {text!r}")
        return value

    return parse
