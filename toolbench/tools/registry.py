"""The builtin catalog: every builtin tool toolbench implements, and those it knows of but
does not offer yet (they are left out of snapshots with a diagnostic, never faked)."""

from __future__ import annotations

from ..core.ids import ToolId
from ..core.snapshot import Diagnostic
from . import agents, chat, cron, dice, mcp_manage, memory, skills_manage, todo, worldinfo
from .base import BuiltinTool
from .workspace import listing, patch, publish, read, search, shell, write

_MODULES = (dice, listing, read, search, write, patch, shell, publish, chat, worldinfo, memory, agents, todo, cron,
            skills_manage, mcp_manage)

BUILTINS: dict[ToolId, BuiltinTool] = {t.descriptor.id: t for m in _MODULES for t in m.TOOLS}

# Builtins a profile cannot select: the runtime injects them (`task.return` into delegated children).
INJECTED: dict[ToolId, BuiltinTool] = {t.descriptor.id: t for t in agents.INJECTED}

# Upstream builtins (tauritavern reference §8) whose implementation has not landed yet.
PLANNED: tuple[str, ...] = tuple(
    name for name in (
        "workspace.list_files", "workspace.read_file", "workspace.search_files", "workspace.write_file",
        "workspace.apply_patch", "workspace.shell", "workspace.commit", "workspace.finish",
        "chat.search", "chat.read_messages", "worldinfo.read_activated",
        "agent.delegate", "agent.await", "agent.handoff",
    )
    if ToolId.builtin(name) not in BUILTINS
)


def planned_diagnostics() -> dict[ToolId, Diagnostic]:
    return {
        ToolId.builtin(name): Diagnostic(
            tool_id=f"builtin:{name}", code="tool.not_implemented",
            message="a known upstream builtin that this toolbench version does not offer yet")
        for name in PLANNED
    }
