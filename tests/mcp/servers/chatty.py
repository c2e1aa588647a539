"""A working server that also prints junk on stdout (a startup banner, a debug line before each
answer): the SDK drops those lines, a stricter client fails on them."""

import sys

from _raw import echo_tool, serve, text

print("chatty: starting up (not JSON-RPC)", flush=True)


def call(name, arguments):
    print(f"debug: called {name}", flush=True)
    return text(arguments.get("text", ""))


if __name__ == "__main__":
    sys.stderr.write("chatty ready\n")
    serve([echo_tool("echo")], call)
