"""Lists tools whose names the model cannot see as they are: a space and `!`, a dot that then
collides, a name over the 64-byte limit, and one that truncates to the same name; `ok` passes
through unchanged."""

from _raw import echo_tool, serve, text

TOOLS = [echo_tool(name) for name in ("ok", "bad name!", "bad.name", "x" * 80, "x" * 79 + "1")]


def call(name, arguments):
    return text(name)


if __name__ == "__main__":
    serve(TOOLS, call)
