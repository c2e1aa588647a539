"""`crash` exits the process after reading the request (the tool may have run); `echo` works."""

import os
import sys

from _raw import echo_tool, serve, text

TOOLS = [echo_tool("echo"), {"name": "crash", "inputSchema": {"type": "object"}}]


def call(name, arguments):
    if name == "crash":
        sys.stderr.write("crash: giving up in the middle of the call\n")
        sys.stderr.flush()
        os._exit(7)
    return text(arguments.get("text", ""))


if __name__ == "__main__":
    serve(TOOLS, call)
