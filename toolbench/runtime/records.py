"""Call records and the run log they are kept in.

The run log is `.toolbench/invocations/<id>/log.jsonl`: one line per call, appended and
flushed as the call ends, holding what is needed to reopen the invocation after a kernel
restart (its history and its budget counters). Other lines: the published output
(`{"output": ...}`) and, for a round decoded from a provider response, the assistant turn to
replay with its calls (`{"turn": <round>, "protocol": ..., "assistant": [...]}`, written before
the round's calls run). Readers skip the kinds they do not know, so older logs stay readable.

The log is a runtime file like any other (`runtime_files`): appended through a descriptor of a
regular file beneath the workspace (never a FIFO, never through a link out), and read back
whole up to RUN_LOG_MAX_BYTES; a longer, planted or non-JSON log is a coded error on reopen.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.arguments import ToolArguments
from ..core.errors import ToolbenchError
from ..core.results import ToolResult, call_file_stem
from ..protocols.types import AssistantTurn
from ..tools.workspace.runtime_files import open_log, read_runtime_file
from .store import json_bytes

LOG_NAME = "log.jsonl"
RUN_LOG_MAX_BYTES = 64 << 20  # some hundred thousand calls; a reopen holds it all in memory
SNAPSHOT_NAME = "snapshot.json"
PROFILE_NAME = "profile.json"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call as it happened: what the model sent and what it got back."""

    round: int
    call_id: str
    call_name: str
    tool_id: str | None
    arguments: ToolArguments
    result: ToolResult
    elapsed_ms: float
    externalized: bool
    # Gemini's thoughtSignature, as logs written before assistant turns were kept hold it
    # (the round's turn line replays it now); still replayed when the round has no turn.
    signature: str | None = None
    # The call id of the call that made this one as a nested call (the shell bridge), else None:
    # the model never sent it, so transcripts leave it out (runtime/bridge.py).
    via: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self._fields(self.result.to_json())

    def to_log(self) -> dict[str, Any]:
        """`to_json()` with the result left a model, so the log writer dumps it in one pass."""
        return self._fields(self.result)

    def _fields(self, result: Any) -> dict[str, Any]:
        return {
            "round": self.round,
            "callId": self.call_id,
            "callName": self.call_name,
            "toolId": self.tool_id,
            "arguments": self.arguments.to_json(),
            # the text the object came as, when it is not the object's compact JSON (a replay sends it)
            **({"argumentsText": text} if (text := self.arguments.stored_text()) is not None else {}),
            "result": result,
            "elapsedMs": round(self.elapsed_ms, 3),
            "externalized": self.externalized,
            **({"signature": self.signature} if self.signature is not None else {}),
            **({"via": self.via} if self.via is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallRecord:
        return cls(
            round=int(data["round"]),
            call_id=str(data["callId"]),
            call_name=str(data["callName"]),
            tool_id=data.get("toolId"),
            arguments=ToolArguments.from_json(data.get("arguments"), data.get("argumentsText")),
            result=ToolResult.model_validate(data["result"]),
            elapsed_ms=float(data.get("elapsedMs", 0.0)),
            externalized=bool(data.get("externalized", False)),
            signature=data.get("signature"),
            via=data.get("via"),
        )

    def row(self) -> dict[str, Any]:
        """The record as a table row (see `Invocation.to_dataframe`)."""
        return {
            "round": self.round,
            "call_id": self.call_id,
            "call_name": self.call_name,
            "tool_id": self.tool_id,
            "arguments": self.arguments.replay_text() if self.arguments.is_valid else self.arguments.raw,
            "is_error": self.result.is_error,
            "error_code": self.result.error_code,
            "elapsed_ms": self.elapsed_ms,
            "content_chars": len(self.result.content),
            "externalized": self.externalized,
            "via": self.via,
        }


class RunLog:
    """Append-only JSON lines; each line goes to the file in one write, before `append` returns.

    One `os.write` on an O_APPEND descriptor: no buffer to flush, and a line is never split
    between writers. It is in the operating system's hands once written, so a killed process
    loses none of it (a lost machine can; no fsync, which costs milliseconds a call). `name` is
    the log's path relative to the workspace `root` (what messages show)."""

    def __init__(self, root: Path, folder: str) -> None:
        self.root = root
        self.name = f"{folder}/{LOG_NAME}"
        self.path = root / self.name
        self._fd: int | None = None

    def append(self, entry: dict[str, Any]) -> None:
        line = json_bytes(entry) + b"\n"
        try:
            if self._fd is None:
                fd = open_log(self.root, self.name)  # storage.* when it is planted, or a link out
                try:
                    _drop_torn_tail(fd)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            written = os.write(self._fd, line)
            if written != len(line):  # a full disk part way through
                raise OSError(errno.ENOSPC, f"wrote {written} of {len(line)} bytes")
        except OSError as exc:
            # Part of the line may be on disk: the next append opens the log again, which first
            # cuts that torn tail, so the next line does not join it.
            self.close()
            message = f"cannot append to {self.name}: {exc.strerror or exc}"
            raise ToolbenchError("storage.write_failed", message) from exc

    def read(self) -> list[dict[str, Any]]:
        """The entries of the log; a torn last line (a crash mid-append) is ignored."""
        raw = read_runtime_file(self.root, self.name, limit=RUN_LOG_MAX_BYTES)
        if raw is None:
            return []
        lines = raw.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        entries = []
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the parser
                entry = None
            if not isinstance(entry, dict):
                if number == len(lines):
                    break
                raise ToolbenchError("storage.run_log_invalid", f"{self.name}:{number} is not a JSON object")
            entries.append(entry)
        return entries

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _drop_torn_tail(fd: int) -> None:
    """Cut a last line without its newline (a crash mid-append) before appending after it:
    `read` ignores a torn last line, but a torn line in the middle makes the log invalid."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = size
    while end > 0:  # find the last newline, reading backwards in blocks
        start = max(0, end - 65536)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            os.ftruncate(fd, start + cut + 1)
            return
        end = start
    os.ftruncate(fd, 0)


def turn_entry(round_no: int, turn: AssistantTurn) -> dict[str, Any]:
    """The run-log line of a round's assistant turn."""
    return {"turn": round_no, **turn.to_json()}


def read_turns(entries: list[dict[str, Any]]) -> dict[int, AssistantTurn]:
    """The assistant turns a run log holds, by round; a malformed line is skipped (the calls
    it came with are still replayed, without their provider state)."""
    turns: dict[int, AssistantTurn] = {}
    for entry in entries:
        round_no, protocol, items = entry.get("turn"), entry.get("protocol"), entry.get("assistant")
        if type(round_no) is int and isinstance(protocol, str) and isinstance(items, list):
            turns[round_no] = AssistantTurn(protocol, tuple(i for i in items if isinstance(i, dict)))
    return turns


def output_entry(previous: Any, output: dict[str, Any]) -> dict[str, Any]:
    """The run-log line of a newly published output: an append logs only what it added, so
    committing a growing file does not log the whole output again each time."""
    text = output["text"]
    head = {k: v for k, v in output.items() if k != "text"}
    before = previous.get("text") if isinstance(previous, dict) else None
    if output.get("mode") == "append" and isinstance(before, str) and text.startswith(before):
        return {"output": head, "appended": text[len(before):]}
    return {"output": head, "text": text}


def published_output(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The published output the run log's output lines add up to (see `output_entry`)."""
    output: dict[str, Any] | None = None
    for entry in entries:
        head = entry.get("output")
        if head is None:
            continue
        if "appended" in entry:
            text = (output["text"] if output else "") + entry["appended"]
        else:
            text = entry.get("text", head.get("text", ""))  # logs of older versions kept it inside
        output = {**head, "text": text}
    return output


def record_files(invocation_id: str, calls: list[dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
    """Each logged call's file stem -> (its tool-args content, its audit content or None), for
    `Store.recover`. A repeated (round, call id) was refused without files of its own; an
    externalised result's audit file is the raw result, written before its call returned."""
    files: dict[str, tuple[Any, Any]] = {}
    for entry in calls:
        record = entry["record"]
        stem = call_file_stem(invocation_id, int(record["round"]), str(record["callId"]))
        if stem not in files:
            files[stem] = (record.get("arguments"), None if record.get("externalized") else record["result"])
    return files
