"""`workspace.shell`: a bash script on bashkit over the workspace roots (shell_engine does the running).

Mounts follow the profile: each visible root at `/<root>`, writable when the profile says so;
`tool-results/` and `skills/` always read-only; the runtime folders are not mounted at all.
After a run that may have written, every read whose file changed on disk is forgotten, so an
apply_patch or write_file based on an earlier read is refused as stale (table 9.10).
The sync calls run `shell_blocking`, which waits for the engine in the caller's thread (no
hop through the bench loop); the async calls await `shell` on the loop. Either way the
invocation's cancel (`inv.cancel()`) stops a running command: the call ends with
`workspace.shell_cancelled`, a confirmed result; what it wrote stays. The outcome also feeds
the auto-publish candidate (`publish.note_shell_outcome`). The shell opens no file over the
workspace's `max_file_bytes`, like the file tools (bashkit would load it whole; see shell_survey).

Inside the script, the invocation's own tools are commands (`builtin.<tool>`, `mcp.*`:
shell_bridge), each a nested call with its own record.
The model-facing side is here too: the closed argument set (`parse_shell_args`), the
description built from the roots and limits (`describe_shell`; it stays under the 1,024
characters past which OpenAI warns, as `toolbench snapshot --check` requires, with room for
longer root lists), and the result layout (`format_result`, as TauriTavern lays it out).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ...core.shell_settings import ShellSettings
from ..base import BuiltinTool, ToolContext
from ..state import StateKey
from .files import drop_stale
from .paths import SKILLS_ROOT, Workspace
from .publish import is_text_name, note_shell_outcome, settle_round
from .shell_bridge import bridge_commands
from .shell_engine import Command, Mount, ShellOutcome, guest_path, run_shell, run_shell_blocking

# ---- the model-facing side: arguments, schema, description, result ----

SHELL_INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash script to run."},
        "workdir": {
            "type": "string",
            "description": "Working directory inside the workspace; `/` is the workspace root. Default `/`.",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}

_ALLOWED_KEYS: Final = ("command", "workdir")


def parse_shell_args(args: dict[str, Any]) -> tuple[str, str]:
    """Check the closed argument set; return `(command, workdir)`. The command is not trimmed."""
    for key in args:
        if key not in _ALLOWED_KEYS:
            raise ToolError("tool.invalid_arguments", f"`{key}` is not supported")
    command = args.get("command")
    if not isinstance(command, str):
        raise ToolError("tool.invalid_arguments", "command must be a string")
    workdir = args.get("workdir")
    if workdir is None:  # absent, or null as strict-mode providers send for optional fields
        return command, "/"
    if not isinstance(workdir, str):
        raise ToolError("tool.invalid_arguments", "workdir must be a string")
    return command, workdir


def describe_shell(*, writable: Sequence[str], read_only: Sequence[str], settings: ShellSettings) -> str:
    """The model-facing description of the shell for these roots (guest names) and limits."""

    def roots(names: Sequence[str]) -> str:
        return ", ".join(guest_path(n) for n in names) or "none"

    s = settings
    return (
        "Run bash in a sandbox (bashkit). Each call starts a fresh shell; only files carry over.\n"
        f"`/` is the workspace root. Writable: {roots(writable)}. Read-only: {roots(read_only)}. "
        "No host programs, no network.\n"
        "Available: bash builtins (ls, cat, grep, rg, sed, awk, find, ...), jq, python3 (subset: json, math, "
        "open(), pathlib; no os, re, subprocess or third-party modules), node/deno/ts (JS/TS subset: "
        "console.log; no require or fs).\n"
        "`workdir` must be an existing folder. Root folders stay (`rm -rf /work` empties it). Files over the "
        "workspace's size limit, FIFOs, sockets and devices are never opened: read-only roots show them as "
        "empty folders; in a writable root only commands that open no file (ls, stat, rm) run until you "
        "remove them.\n"
        f"Per call: {s.timeout_seconds:g} s; command up to {s.max_command_chars:,} chars; stdout/stderr kept "
        f"to {s.max_stdout_chars:,}/{s.max_stderr_chars:,} chars; {s.max_commands:,} commands; "
        f"{s.max_loop_iterations:,} iterations per loop. Files written before a failure, timeout or cancel stay."
    )


SHELL_DESCRIPTION: Final = describe_shell(
    writable=("work", "tmp", "output"), read_only=("tool-results", "skills"), settings=ShellSettings()
)

_HEADERS: Final[dict[str, str]] = {"cancelled": "Command cancelled.", "timed_out": "Command timed out."}
_ERROR_CODES: Final[dict[str, str]] = {
    "exited": "workspace.shell_exit",
    "timed_out": "workspace.shell_timeout",
    "cancelled": "workspace.shell_cancelled",
    "failed": "workspace.shell_failed",
}


def format_result(outcome: ShellOutcome) -> tuple[str, dict[str, Any], str | None]:
    """`(content, structured, error_code)` as TauriTavern lays a shell result out.

    Content: a header (`Exit code: <n>`, or a cancel/timeout sentence, or nothing when the
    engine failed), stdout, then stderr (under a `stderr:` line only when stdout is non-empty:
    the upstream quirk), then `Output truncated.`; a newline goes between parts only where the
    previous part does not already end with one. `error_code` is None only for exit code 0.
    """
    parts: list[str] = []
    if outcome.status == "exited":
        parts.append(f"Exit code: {outcome.exit_code}")
    elif outcome.status in _HEADERS:
        parts.append(_HEADERS[outcome.status])
    if outcome.stdout:
        parts.append(outcome.stdout)
    if outcome.stderr:
        if outcome.stdout:
            parts.append("stderr:")
        parts.append(outcome.stderr)
    if outcome.output_truncated:
        parts.append("Output truncated.")
    content = ""
    for part in parts:
        if content and not content.endswith("\n"):
            content += "\n"
        content += part
    structured = {"exitCode": outcome.exit_code, "outputTruncated": outcome.output_truncated}
    ok = outcome.status == "exited" and outcome.exit_code == 0
    return content, structured, None if ok else _ERROR_CODES[outcome.status]


# ---- the tool: descriptor, mounts, calls ----

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.shell"),
    description=SHELL_DESCRIPTION,
    input_schema=SHELL_INPUT_SCHEMA,
    example={"command": "ls -la"},
)


def mounts(ws: Workspace) -> list[Mount]:
    out = []
    for root in ws.visible_roots():
        if root == SKILLS_ROOT:
            skills = ws.skills()
            if ws.settings.skills_dir is None and ws.root_dir(root).is_dir():
                out.append(Mount(ws.root_dir(root), "/skills", writable=False))
            else:
                out += [Mount(folder, f"/skills/{name}", writable=False) for name, folder in skills.items()]
            continue
        host = ws.base / root
        host.mkdir(exist_ok=True)
        out.append(Mount(host, f"/{root}", writable=ws.is_writable_root(root)))
    return out


# The mounts depend on the invocation's frozen profile only: built once per invocation.
MOUNTS: StateKey[list[Mount] | None] = StateKey("workspace.shell_mounts", lambda: None)


def _setup(ctx: ToolContext, args: dict[str, Any]) -> tuple[str, str, Workspace, list[Mount], dict[str, Command]]:
    command, workdir = parse_shell_args(args)
    # The bridge's commands (shell_bridge): this invocation's tools, until the shell's deadline.
    commands = bridge_commands(ctx.tools, time.monotonic() + ctx.profile.shell.timeout_seconds)
    ws = Workspace.of(ctx)
    shell_mounts = ctx.state.get(MOUNTS)
    if shell_mounts is None:
        shell_mounts = mounts(ws)
        ctx.state.set(MOUNTS, shell_mounts)
    return command, workdir, ws, shell_mounts, commands


def _answer(ctx: ToolContext, ws: Workspace, outcome: ShellOutcome) -> ToolOutput:
    if outcome.may_have_written:
        drop_stale(ctx)
    content, structured, code = format_result(outcome)
    note_shell_outcome(ctx, ws, code is None, [p.lstrip("/") for p in outcome.changed or ()])
    if code is not None:
        raise ToolError(code, content or f"The shell command failed ({outcome.status}).", structured=structured)
    return ToolOutput(content=content, structured=structured)


async def shell(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    command, workdir, ws, shell_mounts, commands = _setup(ctx, args)
    outcome = await run_shell(command, workdir=workdir, mounts=shell_mounts, settings=ctx.profile.shell,
                              cancel=ctx.cancel, watch=is_text_name, max_file_bytes=ws.settings.max_file_bytes,
                              commands=commands)
    return _answer(ctx, ws, outcome)


def shell_blocking(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    """`shell` for the sync calls, in the caller's thread (tools/base.py): the same result."""
    command, workdir, ws, shell_mounts, commands = _setup(ctx, args)
    outcome = run_shell_blocking(command, workdir=workdir, mounts=shell_mounts, settings=ctx.profile.shell,
                                 stop=ctx.stop, watch=is_text_name, max_file_bytes=ws.settings.max_file_bytes,
                                 commands=commands)
    return _answer(ctx, ws, outcome)


TOOLS = (BuiltinTool(DESCRIPTOR, shell, shell_blocking, end_round=settle_round),)
