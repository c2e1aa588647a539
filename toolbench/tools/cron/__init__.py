"""Cron tasks: the `cron.*` tools over a task store in the workspace, and the scheduler behind
`bench.cron` that runs what is due when the user advances time (`run_due(now)`)."""

from __future__ import annotations

from .scheduler import CronRun, CronScheduler
from .tasks import CronStore, CronTask
from .tool import TOOLS

__all__ = ["TOOLS", "CronRun", "CronScheduler", "CronStore", "CronTask"]
