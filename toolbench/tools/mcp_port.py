"""What `mcp.manage` needs from the runtime: the bench's MCP servers as plain data.

The runtime's adapter (`toolbench.runtime.mcp_port`) implements it over `bench.mcp`. Every
method returns JSON-ready dicts and raises `ToolError` with an `mcp.*` code; a server is named
by its id or its display name. A server dict of a call that stopped a running server (update,
overwrite, disable, stop, restart) has `stopped: true`. `config` dicts are the canonical form `mcp.manage` builds
(`id`, `enabled`, `transport`, `command`, `args`, `cwd`, `env`, `url`, `headers`, `timeoutMs`).

Every method that can start a server or connect to one takes `approve` (the call's
`ctx.approve`): the port asks through it before it starts what the model configured, and
refuses (`tool.approval_required`) when it is None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .base import Approve


class McpPort(Protocol):
    """The bench's MCP servers for the model-facing manager. `writable` is false outside the
    chat scene and in delegated children: the tool refuses writes and restarts there."""

    @property
    def writable(self) -> bool: ...

    async def servers(self) -> list[dict[str, Any]]:
        """Every registered server, in registration order (see `read` for the keys)."""
        ...

    async def read(self, server_id: str) -> dict[str, Any]:
        """One server: id, name, state, enabled, transport, diagnosticCode, diagnostic, pid,
        timeoutMs, serverInfo, serverConfig (env and header values redacted; None when the bench
        registered the server in Python), stderrTail, trace, and tools (each
        name, toolId, offered, permission, description, problemCode, inputSchema)."""
        ...

    def validate(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Check a config as `bench.mcp.add` would, without registering it; the config back."""
        ...

    async def create(self, config: Mapping[str, Any], *, overwrite: bool, approve: Approve | None) -> dict[str, Any]:
        ...

    async def update(self, server_id: str, patch: Mapping[str, Any], *, approve: Approve | None) -> dict[str, Any]:
        """Merge `patch` into the server's config (fields not given are kept) and re-register it
        under the same id."""
        ...

    async def delete(self, server_id: str) -> bool:
        """Forget the server; whether a running one was stopped."""
        ...

    async def set_enabled(self, server_id: str, enabled: bool, *, approve: Approve | None) -> dict[str, Any]: ...

    async def tools(self, server_id: str) -> dict[str, Any]:
        """An active server's tools listed afresh; any other server as it is (nothing is started)."""
        ...

    async def test(self, server_id: str, *, approve: Approve | None) -> dict[str, Any]:
        """Connect (if not active) and list the tools again; the server's state after. A disabled
        server is tried on the side (`try_config`) when its config is known."""
        ...

    async def try_config(self, config: Mapping[str, Any], *, approve: Approve | None) -> dict[str, Any]:
        """Connect to a server that is not registered, list its tools and close it again; it
        never joins the bench's servers (upstream's transient test)."""
        ...

    async def restart(self, server_id: str, *, approve: Approve | None) -> dict[str, Any]: ...

    async def stop(self, server_id: str) -> dict[str, Any]: ...
