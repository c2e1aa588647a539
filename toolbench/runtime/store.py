"""Runtime files of a workspace: `tool-args/`, `tool-results/` and the run logs.

The run log is the record of what was answered: its line is written (and flushed) by the
call itself, before the call returns, so a crash right after can lose no answered call.
Record files (arguments, audit JSON) can be rebuilt from the log, so they go through a
background writer: a call does not wait for file creation (about 90 µs a file here, more
than the runtime's whole per-call budget). They are written once the calls pause for
IDLE_SECONDS; `flush()` waits for them, and a reopened invocation writes those a crash lost
(`Invocation.reopen`). Externalised result files are written before the call returns, since
the model is told to read them.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
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
_ROUND = re.compile(r"\.?round-(\d+)-")  # record files, and their temp files (`.<name>.<12 hex>.tmp`)
_READABLE = re.compile(r"round-\d+-call_[0-9a-f]{16}\.txt")  # an externalised result (not an attachment)


class Store:
    """Writes the runtime files of one workspace; record files on a background writer thread.

    A call only appends to a list: the writer is woken by the first item of a burst (and by
    `flush`, `close` or a full list), then watches the count until the calls pause. Waking it
    on every item cost a thread switch per record file, twice per call."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._items: list[tuple[str, Any]] = []
        self._queued = 0  # items ever queued: the writer sees the calls pause when it stops moving
        self._pending = 0  # queued and not yet written
        self._flushing = 0  # flushes waiting: they ask for the queue now, not after the pause
        self._closing = False  # close asks the writer to write what is queued and stop
        self._closed = False  # no more items (see write_later)
        self._running = False  # a writer thread is on (set and cleared under the lock)
        self._cond = threading.Condition()
        self._errors: list[ToolbenchError] = []
        self._thread: threading.Thread | None = None

    def invocation_dir(self, invocation_id: str) -> Path:
        return self.workspace / self.invocation_folder(invocation_id)

    def invocation_folder(self, invocation_id: str) -> str:
        """The invocation's folder relative to the workspace (runtime_files names files so)."""
        return f"{RUNTIME_DIR}/invocations/{invocation_id}"

    def path(self, relative: str) -> Path:
        return self.workspace / relative
    def recover(self, invocation_id: str, logged: dict[str, tuple[Any, Any]]) -> int:
        """Mend an invocation's record files after a crash; return the highest round they name.

        `logged` maps each logged call's file stem to its (arguments, audit result or None).
        A crash can leave: temporary files (`.<name>.<hex>.tmp`, swept: tools would list them), a readable result
        without its audit file (an unanswered call: swept), and logged calls whose deferred
        record files were never written (rebuilt from the log). Files of calls the log lacks
        stay; the reopened invocation starts after their round, so its new write-once files
        never meet them."""
        highest = 0
        for root in (ARGS_ROOT, RESULTS_ROOT):
            folder = self.path(f"{root}/{invocation_id}")
            try:
                names = set(os.listdir(folder))
            except OSError:
                names = set()
            for name in sorted(names):
                if name.startswith(".") and name.endswith(".tmp"):
                    _unlink(folder / name)
                    continue
                if root == RESULTS_ROOT and _READABLE.fullmatch(name) and name[:-4] + ".json" not in names:
                    _unlink(folder / name)
                    continue
                match = _ROUND.match(name)
                if match:
                    highest = max(highest, int(match.group(1)))
            for stem, (arguments, audit) in logged.items():
                value = arguments if root == ARGS_ROOT else audit
                name = stem.rsplit("/", 1)[1] + ".json"
                if value is not None and name not in names:
                    write_once(folder / name, json_bytes(value, indent=2) + b"\n")
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
        """Queue a write-once pretty JSON file of `value` (path and JSON made on the writer thread).

        After `close`, nothing is queued: a call that ends after its bench closed has its line in
        the run log, and a reopened invocation writes the record files the log names (`recover`)."""
        with self._cond:
            if self._closed:
                return
            self._items.append((relative, value))
            self._queued += 1
            self._pending += 1
            if len(self._items) == 1 or len(self._items) >= MAX_DEFERRED:
                self._cond.notify_all()
            if not self._running:  # the first item, or the writer has stopped (never two of them)
                self._running = True
                self._thread = threading.Thread(target=self._drain, name="toolbench-writer", daemon=True)
                self._thread.start()

    def flush(self) -> None:
        """Wait until every queued file is written; raise the first failure."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                done = self._cond.wait_for(lambda: self._pending == 0, timeout=60)
            finally:
                self._flushing -= 1
        if not done:
            raise ToolbenchError("storage.write_failed",
                                 f"{self._pending} record writes still pending after 60 s; the disk may be stalled")
        self._raise_first()

    def _drain(self) -> None:
        # Record files wait until the calls pause (IDLE_SECONDS without a new item) or
        # MAX_DEFERRED pile up: creating a file costs more than a whole call, and writing them
        # between calls would compete with the calls.
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._items or self._closing)
                while not (self._flushing or self._closing or len(self._items) >= MAX_DEFERRED):
                    seen = self._queued
                    self._cond.wait(IDLE_SECONDS)
                    if self._queued == seen:
                        break
                items, self._items = self._items, []
                if self._closing and not items:
                    self._running = False
                    return
            self._write(items)
            with self._cond:
                self._pending -= len(items)
                self._cond.notify_all()

    def _write(self, items: list[tuple[str, Any]]) -> None:
        for relative, value in items:
            try:
                write_once(self.path(relative), json_bytes(value, indent=2) + b"\n")
            except ToolbenchError as exc:
                self._errors.append(exc)
            except Exception as exc:
                self._errors.append(ToolbenchError("storage.write_failed", f"cannot write {relative}: {exc}"))

    def close(self) -> None:
        """Write what is queued and stop the writer; then raise the first failure, if any."""
        with self._cond:
            self._closed = self._closing = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)
            if thread.is_alive():
                raise ToolbenchError("storage.write_failed", f"{self._pending} record writes still pending after "
                                     "60 s; the disk may be stalled")
        self._raise_first()

    def _raise_first(self) -> None:
        if self._errors:
            errors, self._errors = self._errors, []
            raise errors[0]


def make_folders(base: Path, names: tuple[str, ...] = ("",)) -> None:
    """Make `base/<name>` for each name (and their parents), or raise `storage.not_writable`."""
    for name in names:
        folder = base / name if name else base
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolbenchError("storage.not_writable", f"cannot create {folder}: {exc.strerror or exc}; the "
                                 "workspace and its runtime folders must be writable") from exc


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise ToolbenchError("storage.write_failed", f"cannot remove {path.name}: {exc.strerror or exc}") from exc


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
    if isinstance(value, Mapping) and not isinstance(value, dict):  # a profile's read-only maps
        return dict(value)
    return pydantic_core.to_jsonable_python(value)
