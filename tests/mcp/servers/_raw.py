"""A tiny line-based JSON-RPC server for the fault servers (no SDK import: it starts fast).

`serve(tools, call)` answers `initialize`, `tools/list` (two tools a page, to show pagination)
and `ping`; `call(name, arguments)` returns a `CallToolResult` dict or does something rude.
Anything else (the SDK's `server/discover` probe included) gets "method not found".
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

PAGE = 2


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def serve(tools: list[Any], call: Callable[[str, dict[str, Any]], dict[str, Any]]) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification or a response
        method, params, rid = message["method"], message.get("params") or {}, message["id"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            }
        elif method == "tools/list":
            start = int(params.get("cursor") or 0)
            result = {"tools": tools[start : start + PAGE]}
            if start + PAGE < len(tools):
                result["nextCursor"] = str(start + PAGE)
        elif method == "tools/call":
            result = call(params["name"], params.get("arguments") or {})
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


def echo_tool(name: str = "echo") -> dict[str, Any]:
    return {
        "name": name,
        "description": "Echo `text`.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
