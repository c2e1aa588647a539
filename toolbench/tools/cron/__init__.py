"""Cron tasks: the `cron.*` tools over a task store in the workspace. The scheduler behind
`bench.cron` (`run_due(now)`) is the runtime's (`runtime/cron.py`)."""

from __future__ import annotations

from .tasks import CronStore, CronTask
from .tool import TOOLS

__all__ = ["TOOLS", "CronStore", "CronTask"]
