"""Lists good tools among broken ones (over several pages); calls to the good ones echo."""

import sys

from _raw import echo_tool, serve, text

TOOLS = [
    echo_tool("echo"),
    echo_tool("issue.create"),
    echo_tool("bad\nname"),  # a control character
    echo_tool(""),  # empty
    {"name": "string_schema", "inputSchema": {"type": "string"}},  # refused by the wire check
    {"name": "no_schema"},  # refused by the wire check
    {"name": "bad_property", "inputSchema": {"type": "object", "properties": {"x": {"type": 5}}}},
    echo_tool("echo"),  # a duplicate
    echo_tool("x" * 200),  # too long
    echo_tool("last"),
]


def call(name, arguments):
    return text(f"{name}: {arguments.get('text', '')}")


if __name__ == "__main__":
    sys.stderr.write("bad_tools ready\n")
    serve(TOOLS, call)
