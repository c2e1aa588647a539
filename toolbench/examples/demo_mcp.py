"""A small MCP server for the notebooks and tests: `python -m toolbench.examples.demo_mcp`.

Its tools show each shape a result can take:

- `echo`: plain text;
- `issue.create` (a dotted name): text, structured content and an image together;
- `weather`: structured output only (its text is the same JSON, so the mapping shows it once);
- `image`: an image and nothing the model can read;
- `long_text`: `size` characters of text (default 60,000), for the long-result projection;
- `fail`: an error result (`isError`);
- `sleep`: waits, then reports the server's own start and end clock readings, for
  concurrency and timeout demonstrations;
- `empty`: completes without content.

Run with no argument for stdio; `--http PORT` serves streamable HTTP on 127.0.0.1.
`build_server()` gives the same server for in-process use.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

import anyio
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent

# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


class Weather(TypedDict):
    city: str
    temperature_c: float
    conditions: str


class SleepReport(TypedDict):
    seconds: float
    started: float  # the server's time.monotonic() when the call began
    ended: float
    pid: int


def build_server(name: str = "toolbench-demo") -> MCPServer:
    """The demo server, ready to run over stdio or to register in-process."""
    server = MCPServer(name, instructions="Demo tools for toolbench.", log_level="WARNING")
    counter = {"next": 41}

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(name="issue.create", description="Create an issue in the demo tracker.")
    def issue_create(title: str, body: str = "") -> CallToolResult:
        counter["next"] += 1
        return CallToolResult(
            content=[
                TextContent(type="text", text="Created issue."),
                ImageContent(type="image", data=base64.b64encode(PIXEL_PNG).decode(), mime_type="image/png"),
            ],
            structured_content={"issueId": counter["next"], "title": title},
        )

    @server.tool(description="The weather in a city (structured output).")
    def weather(city: str) -> Weather:
        return Weather(city=city, temperature_c=21.5, conditions="sunny")

    @server.tool(description="A 1x1 PNG image.")
    def image() -> Image:
        return Image(data=PIXEL_PNG, format="png")

    @server.tool(description="`size` characters of text (default 60,000), made of `char`.", structured_output=False)
    def long_text(size: int = 60_000, char: str = "界") -> str:
        return (char or "x")[0] * max(0, size)

    @server.tool(description="Always fails with the given message.")
    def fail(message: str = "the demo tool failed") -> str:
        raise ToolError(message)

    @server.tool(description="Sleep for `seconds`, then report the server's clock at start and end.")
    async def sleep(seconds: float = 0.2) -> SleepReport:
        started = time.monotonic()
        await anyio.sleep(seconds)
        return SleepReport(seconds=seconds, started=started, ended=time.monotonic(), pid=os.getpid())

    @server.tool(description="Complete without returning any content.")
    def empty() -> CallToolResult:
        return CallToolResult(content=[])

    return server


def stdio_config() -> dict[str, Any]:
    """`bench.mcp.add("demo", **stdio_config())`: run this module over stdio with this interpreter.

    The child gets `PYTHONPATH` pointing at this copy of toolbench, so it works uninstalled too."""
    root = Path(__file__).resolve().parents[2]
    return {"command": [sys.executable, "-m", "toolbench.examples.demo_mcp"], "env": {"PYTHONPATH": str(root)}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m toolbench.examples.demo_mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    options = parser.parse_args(argv)
    server = build_server()
    if options.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
