"""A 2025-11-25 server whose `shout` tool declares `outputSchema: {"type": "string"}`, which that
revision's wire format refuses (it must be an object schema); calls echo `text` upper-cased."""

import sys

from _raw import echo_tool, serve, text

TOOLS = [{**echo_tool("shout"), "outputSchema": {"type": "string"}}, echo_tool("echo")]


def call(name, arguments):
    value = arguments.get("text", "")
    return text(value.upper() if name == "shout" else value)


if __name__ == "__main__":
    sys.stderr.write("string_output ready\n")
    serve(TOOLS, call)
