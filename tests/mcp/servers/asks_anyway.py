"""Sends the client a request during a call whatever the client declared: `sample` asks for
sampling, `elicit` for elicitation, `roots` for roots; the answer (or error) it got back is the
tool's text, as JSON."""

import json
import sys

from _raw import send, serve, text

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("sample", "elicit", "roots")]
ASKS = {
    "sample": ("sampling/createMessage", {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                                          "maxTokens": 5}),
    "elicit": ("elicitation/create", {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}),
    "roots": ("roots/list", {}),
}


def ask(method, params):
    send({"jsonrpc": "2.0", "id": "ask-1", "method": method, "params": params})
    for line in sys.stdin:  # the client's answer comes on stdin, like every other message
        message = json.loads(line)
        if message.get("id") == "ask-1" and "method" not in message:
            return message.get("error") or message.get("result")
    sys.exit(0)


def call(name, arguments):
    return text(json.dumps(ask(*ASKS[name])))


if __name__ == "__main__":
    serve(TOOLS, call)
