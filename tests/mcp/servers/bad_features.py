"""A server whose tool is fine and whose other listings are not: `resources/list` answers a
JSON-RPC error, a resource template's braces do not pair, one prompt is listed twice and
another names an argument twice and leaves one unnamed. With `unnamed-argument` as its argument,
a prompt's argument has no name at all (invalid MCP: the whole listing is refused). Speaks
2025-11-25 only."""

import json
import sys

from _raw import echo_tool, send, text

TEMPLATES = [{"uriTemplate": "demo://x/{id", "name": "broken"}, {"uriTemplate": "demo://y/{id}", "name": "fine"}]
PROMPTS = [
    {"name": "greet", "arguments": [{"name": "who", "required": True}]},
    {"name": "greet"},
    {"name": "args", "arguments": [{"name": "a"}, {"name": "a"}, {"name": ""}]},
]
UNNAMED = [{"name": "fine"}, {"name": "broken", "arguments": [{"description": "which one?"}]}]


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line) if line.strip() else {}
        if "id" not in message or "method" not in message:
            continue
        method, rid = message["method"], message["id"]
        result: object
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                      "serverInfo": {"name": "bad-features", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": [echo_tool()]}
        elif method == "tools/call":
            result = text(message["params"].get("arguments", {}).get("text", ""))
        elif method == "resources/templates/list":
            result = {"resourceTemplates": TEMPLATES}
        elif method == "prompts/list":
            result = {"prompts": UNNAMED if sys.argv[1:] == ["unnamed-argument"] else PROMPTS}
        else:  # resources/list among them
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"{method} is broken here"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
