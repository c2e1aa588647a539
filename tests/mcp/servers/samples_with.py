"""One tool, `sample`: sends `sampling/createMessage` with the `params` it is called with and
returns what the client answered (a result or an error) as JSON text."""

import json
import sys

from _raw import send, serve, text

TOOLS = [{"name": "sample", "inputSchema": {"type": "object", "properties": {"params": {"type": "object"}}}}]


def ask(params):
    send({"jsonrpc": "2.0", "id": "ask-1", "method": "sampling/createMessage", "params": params})
    for line in sys.stdin:  # the client's answer comes on stdin, like every other message
        message = json.loads(line)
        if message.get("id") == "ask-1" and "method" not in message:
            return {"error": message["error"]} if "error" in message else {"result": message.get("result")}
    sys.exit(0)


def call(name, arguments):
    return text(json.dumps(ask(arguments.get("params") or {})))


if __name__ == "__main__":
    serve(TOOLS, call)
