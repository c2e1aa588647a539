"""The dice stream of an invocation of a seeded bench, as one rule.

`CallPipeline._rng` (an invocation's per-call steps) draws an invocation's stream from the
bench's seed and the invocation's place among those the bench made or reopened; `bench.replay`
draws the stream of the recorded invocation the same way, so a replay of a seeded run rolls
the same dice.
"""

from __future__ import annotations

import random


def invocation_rng(seed: int | str, place: int | str) -> random.Random:
    """The stream of the invocation at `place` (or, made outside the bench, its id). A str seed
    is hashed with SHA-512, the same in every process (PYTHONHASHSEED does not touch it)."""
    return random.Random(f"{seed}:{place}")


__all__ = ["invocation_rng"]
