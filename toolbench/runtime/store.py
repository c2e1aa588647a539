"""Runtime files of a workspace: `tool-args/`, `tool-results/` and the run logs.

Record files (arguments, audit JSON) and run-log lines go through one background writer, so
a call does not wait for file creation (about 90 µs a file here, more than the runtime's
whole per-call budget). Log lines are appended in order as they come; record files are
written once the calls pause for IDLE_SECONDS. `flush()` waits for both. Externalised result files are
written before the call returns, since the model is told to read them.
"""

from __future__ import annotations

import json
import os
import queue
import re
import threading
from pathlib import Path
from typing import Any

import pydantic_core
from pydantic import BaseModel

from ..core.errors import ToolbenchError
from ..core.fileio import write_once
from ..core.results import ARGS_ROOT, RESULTS_ROOT

RUNTIME_DIR = ".toolbench"
IDLE_SECONDS = 0.05
MAX_DEFERRED = 4096
_ROUND = re.compile(r"\.?round-(\d+)-")  # record files, and their temp files (`.<name>.<pid>.tmp`)


class Store:
    """Writes the runtime files of one workspace, most of them on a background writer thread."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._pending = 0
        self._idle = threading.Condition()
        self._errors: list[ToolbenchError] = []
        self._thread: threading.Thread | None = None

    def invocation_dir(self, invocation_id: str) -> Path:
        return self.workspace / RUNTIME_DIR / "invocations" / invocation_id

    def path(self, relative: str) -> Path:
        return self.workspace / relative

    def highest_round(self, invocation_id: str) -> int:
        """The highest round any record file of the invocation names (0 if none).

        A crash can leave a call's record files without its run-log line; a reopened invocation
        starts after them, so its new write-once files never meet them."""
        highest = 0
        for root in (ARGS_ROOT, RESULTS_ROOT):
            try:
                names = os.listdir(self.path(f"{root}/{invocation_id}"))
            except OSError:
                continue
            for name in names:
                match = _ROUND.match(name)
                if match:
                    highest = max(highest, int(match.group(1)))
        return highest

    def write_now(self, relative: str, text: str | bytes) -> None:
        write_once(self.path(relative), text)

    def remove(self, relative: str) -> None:
        """Take back a file this store wrote (a call that failed half way); missing is fine."""
        self.path(relative).unlink(missing_ok=True)

    def write_json_now(self, relative: str, value: Any) -> None:
        """A write-once pretty JSON file, serialised straight to bytes (no text copy)."""
        write_once(self.path(relative), json_bytes(value, indent=2))

    def write_later(self, relative: str, value: Any) -> None:
        """Queue a write-once pretty JSON file of `value` (path and JSON made on the writer thread)."""
        self._put(("file", relative, value))

    def append_later(self, log: Any, entry: Any) -> None:
        """Queue a run-log line; lines are written in order, each whole, and flushed."""
        self._put(("log", log, entry))

    def _put(self, item: tuple[Any, ...]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="toolbench-writer", daemon=True)
            self._thread.start()
        with self._idle:
            self._pending += 1
        self._queue.put(item)

    def flush(self) -> None:
        """Wait until every queued file and log line is written; raise the first failure."""
        with self._idle:
            done = self._idle.wait_for(lambda: self._pending == 0, timeout=60)
        if not done:
            raise ToolbenchError("storage.write_failed",
                                 f"{self._pending} record writes still pending after 60 s; the disk may be stalled")
        if self._errors:
            errors, self._errors = self._errors, []
            raise errors[0]

    def _drain(self) -> None:
        # Log lines are written as they come. Record files wait until the calls pause
        # (IDLE_SECONDS without a new item) or MAX_DEFERRED pile up: creating a file costs more
        # than a whole call, and writing them between calls would compete with the calls.
        deferred: list[tuple[Any, ...]] = []
        while True:
            try:
                first = self._queue.get(timeout=IDLE_SECONDS if deferred else None)
            except queue.Empty:
                self._settle(self._write(deferred))
                deferred = []
                continue
            batch = [first]
            while not self._queue.empty() and len(batch) < 1024:
                batch.append(self._queue.get_nowait())
            done = 0
            for item in batch:
                if item is None:
                    self._settle(done + self._write(deferred))
                    return
                if item[0] == "file":
                    deferred.append(item)
                else:
                    done += self._write([item])
            if len(deferred) >= MAX_DEFERRED:
                done += self._write(deferred)
                deferred = []
            self._settle(done)

    def _write(self, items: list[tuple[Any, ...]]) -> int:
        for kind, target, value in items:
            try:
                if kind == "file":
                    target = self.path(target)
                    write_once(target, json_bytes(value, indent=2) + b"\n")
                else:
                    target.append(value)
            except ToolbenchError as exc:
                self._errors.append(exc)
            except Exception as exc:
                where = getattr(target, "path", target)
                self._errors.append(ToolbenchError("storage.write_failed", f"cannot write {where}: {exc}"))
        return len(items)

    def _settle(self, count: int) -> None:
        if count:
            with self._idle:
                self._pending -= count
                self._idle.notify_all()

    def close(self) -> None:
        if self._thread is not None:
            self.flush()
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None


def args_path(stem: str) -> str:
    return f"{ARGS_ROOT}/{stem}.json"


def audit_path(stem: str) -> str:
    return f"{RESULTS_ROOT}/{stem}.json"


def dumps(value: Any) -> str:
    """Pretty JSON; pydantic models (results) are dumped by their camelCase aliases."""
    return json_text(value, indent=2) + "\n"


def json_text(value: Any, *, indent: int | None = None) -> str:
    return json_bytes(value, indent=indent).decode("utf-8")


def json_bytes(value: Any, *, indent: int | None = None) -> bytes:
    """JSON of `value` as UTF-8 bytes, pydantic models by their aliases.

    pydantic_core is fast but refuses lone surrogates and nesting past 255 levels, and a
    model can send both (`"\\ud83d"`, deep arrays); the stdlib encoder then writes them, with
    ASCII escapes that read back to the same value (compact: the stdlib's pretty printer
    recurses in Python and stops short of the depth `json.loads` accepts)."""
    try:
        return pydantic_core.to_json(value, indent=indent, by_alias=True)
    except ValueError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=True, default=_plain).encode("ascii")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return {(info.alias or name): getattr(value, name) for name, info in type(value).model_fields.items()}
    if isinstance(value, set | frozenset):
        return list(value)
    return pydantic_core.to_jsonable_python(value)
