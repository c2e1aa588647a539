"""`big` answers with `size` characters (default 10,000,000); `echo` answers normally."""

from _raw import echo_tool, serve, text

TOOLS = [echo_tool("echo"), {"name": "big", "inputSchema": {"type": "object"}}]


def call(name, arguments):
    if name == "big":
        return text("x" * int(arguments.get("size", 10_000_000)))
    return text(arguments.get("text", ""))


if __name__ == "__main__":
    serve(TOOLS, call)
