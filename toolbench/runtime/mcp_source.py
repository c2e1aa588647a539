"""MCP servers as a tool source: the bench's `McpManager`, made on first use.

The manager (and the MCP SDK) loads only when `bench.mcp` is first touched; until then the
source offers nothing. Servers check their own arguments, so the runtime does not
(`checks_arguments = False`), except before asking for an approval.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.descriptors import ToolDescriptor
from ..core.ids import ToolId
from ..core.results import ToolOutput
from ..core.snapshot import Diagnostic
from ..tools.base import ToolContext
from .sources import ToolSource

if TYPE_CHECKING:
    from ..mcp import McpManager


class McpSource(ToolSource):
    checks_arguments = False

    def __init__(self, make: Callable[[], McpManager]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self.manager: McpManager | None = None

    def get(self) -> McpManager:
        if self.manager is None:
            with self._lock:
                if self.manager is None:
                    self.manager = self._make()
        return self.manager

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [] if self.manager is None else self.manager.descriptors()

    def diagnostics(self) -> Mapping[ToolId, Diagnostic]:
        if self.manager is None:
            return {}
        return {tool_id: Diagnostic(tool_id=str(tool_id), code=code, message=message)
                for tool_id, code, message in self.manager.diagnostics if isinstance(tool_id, ToolId)}

    def has(self, tool_id: ToolId) -> bool:
        # What its servers list now; the kernel makes this source the fallback for other MCP
        # ids, so the manager answers for a tool its server no longer lists.
        return self.manager is not None and tool_id.kind == "mcp" and tool_id in self.manager.tool_ids()

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        return self.get().call(tool_id, arguments, call_id=ctx.call_id)

    def permission(self, tool_id: ToolId) -> str:
        return self.get().permission(tool_id)

    def set_permission(self, tool_id: ToolId, permission: str) -> ToolId:
        return self.get().set_permission(tool_id, permission)  # type: ignore[arg-type]  # the manager checks it

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()
