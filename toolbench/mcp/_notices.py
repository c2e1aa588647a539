"""What a server tells the client unasked: log messages, resource updates and list changes,
received through the SDK's callbacks (`mcp.Client(logging_callback=..., message_handler=...)`;
toolbench never parses the wire for them).

- `notifications/message`: kept per server (`Entry.logs`, the last `MAX_LOGS`, oldest dropped,
  across reconnects) as `LogMessage`s.
- `notifications/resources/updated`: a `ResourceUpdate(server, uri)` to the manager's handler
  (`on_resource_updated`); a sync handler runs on the bench loop (keep it quick), an async one
  is awaited there; one that raises is logged, never fatal.
- `notifications/tools/list_changed`: `on_tools_changed()` (the manager re-lists that server's
  tools in the background). `resources/list_changed` and `prompts/list_changed` need nothing:
  toolbench keeps no copy of those lists, each `resources()` / `prompts()` asks the server.

On 2026-07-28 sessions resource updates arrive on the `subscriptions/listen` stream the
connection holds open while resources are subscribed (see `_connection`); the SDK hands them to
the same callbacks, so this module does not tell the two revisions apart.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

import mcp.types as types

from ..core.errors import ToolbenchError
from ._client_side import notify
from ._server_features import LogMessage, ResourceUpdate

MAX_LOGS = 500  # log messages kept per server

Handler = Callable[..., Any]


class NoticeHandlers:
    """The manager's handlers for notifications, shared by its connections (set from any thread)."""

    def __init__(self) -> None:
        self.resource_updated: Handler | None = None

    def set_resource_updated(self, handler: Handler | None) -> None:
        if handler is not None and not callable(handler):
            raise ToolbenchError("bench.misuse", f"on_resource_updated takes a callable or None, not "
                                 f"{type(handler).__name__}")
        self.resource_updated = handler


class ServerNotices:
    """One connection's receiving end: the SDK callbacks, the server's log, and where changes go."""

    def __init__(self, server: str, handlers: NoticeHandlers, logs: deque[LogMessage],
                 on_tools_changed: Callable[[], None] | None = None) -> None:
        self.server = server
        self.handlers = handlers
        self.logs = logs
        self.on_tools_changed = on_tools_changed

    def options(self) -> dict[str, Any]:
        """`mcp.Client` keyword arguments."""
        return {"logging_callback": self._logged, "message_handler": self._message}

    async def _logged(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(LogMessage(self.server, str(params.level), params.logger, params.data, time.time()))

    async def _message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await self._updated(ResourceUpdate(self.server, str(message.params.uri)))
        elif isinstance(message, types.ToolListChangedNotification) and self.on_tools_changed is not None:
            self.on_tools_changed()
        # resources/prompts list_changed: nothing is cached (see the module doc); exceptions the
        # transport reports here are noticed by the connection's monitor

    async def _updated(self, event: ResourceUpdate) -> None:
        await notify(self.handlers.resource_updated, event, "resource-updated")
