"""nbval runs the notebooks as tests; the MCP one starts the npm reference servers and the
conformance suite from the checkout (tests/mcp/node), installed first when a fresh clone has
none (the same `npm ci` the tests use, under its lock). Here, not in notebooks/: that folder
ships in the wheel."""

from __future__ import annotations

from typing import Any

NEEDS_NODE = {"09-mcp.ipynb"}


def pytest_runtest_setup(item: Any) -> None:
    if item.path.name in NEEDS_NODE:
        from tests.node_servers import ensure_node_servers

        ensure_node_servers()
