"""`workspace.shell`: a bash script on bashkit over the workspace roots (shell_engine does the running).

Mounts follow the profile: each visible root at `/<root>`, writable when the profile says so;
`tool-results/` and `skills/` always read-only; the runtime folders are not mounted at all.
After a run that may have written, every read whose file changed on disk is forgotten, so an
apply_patch or write_file based on an earlier read is refused as stale (table 9.10).
The sync calls run `shell_blocking`, which waits for the engine in the caller's thread (no
hop through the bench loop); the async calls await `shell` on the loop. Either way the
invocation's cancel (`inv.cancel()`) stops a running command: the call ends with
`workspace.shell_cancelled`, a confirmed result; what it wrote stays. The outcome also feeds
the auto-publish candidate (`publish.note_shell_outcome`).
"""

from __future__ import annotations

from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ..base import BuiltinTool, ToolContext, ToolOutput
from .files import drop_stale
from .paths import SKILLS_ROOT, Workspace
from .publish import is_text_name, note_shell_outcome
from .shell_engine import (
    SHELL_DESCRIPTION,
    SHELL_INPUT_SCHEMA,
    Mount,
    ShellOutcome,
    format_result,
    parse_shell_args,
    run_shell,
    run_shell_blocking,
)

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.shell"),
    description=SHELL_DESCRIPTION,
    input_schema=SHELL_INPUT_SCHEMA,
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


def _setup(ctx: ToolContext, args: dict[str, Any]) -> tuple[str, str, Workspace, list[Mount]]:
    command, workdir = parse_shell_args(args)
    ws = Workspace.of(ctx)
    # The mounts depend on the invocation's frozen profile only: built once per invocation.
    shell_mounts = ctx.state.get("shell.mounts")
    if shell_mounts is None:
        shell_mounts = ctx.state["shell.mounts"] = mounts(ws)
    return command, workdir, ws, shell_mounts


def _answer(ctx: ToolContext, ws: Workspace, outcome: ShellOutcome) -> ToolOutput:
    if outcome.may_have_written:
        drop_stale(ctx)
    content, structured, code = format_result(outcome)
    note_shell_outcome(ctx, ws, code is None, [p.lstrip("/") for p in outcome.changed or ()])
    if code is not None:
        raise ToolError(code, content or f"The shell command failed ({outcome.status}).", structured=structured)
    return ToolOutput(content=content, structured=structured)


async def shell(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    command, workdir, ws, shell_mounts = _setup(ctx, args)
    outcome = await run_shell(command, workdir=workdir, mounts=shell_mounts, settings=ctx.profile.shell,
                              cancel=ctx.cancel, watch=is_text_name)
    return _answer(ctx, ws, outcome)


def shell_blocking(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    """`shell` for the sync calls, in the caller's thread (tools/base.py): the same result."""
    command, workdir, ws, shell_mounts = _setup(ctx, args)
    outcome = run_shell_blocking(command, workdir=workdir, mounts=shell_mounts, settings=ctx.profile.shell,
                                 stop=ctx.stop, watch=is_text_name)
    return _answer(ctx, ws, outcome)


TOOLS = (BuiltinTool(DESCRIPTOR, shell, shell_blocking),)
