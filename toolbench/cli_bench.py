"""The bench a `toolbench` command works on: the workspace, the profile, the demo tools and the
MCP servers of an `mcp.json`, so the command line sees what a notebook sees.

Rules where the issue was silent:

- `--demo` registers the demo extension tools (`weather`, `long_report`, `fail`) and the sample
  chat, as `Workbench.demo()` does for the README's first look and the notebooks; without it the
  bench is the plain one (the default profile is upstream's, and stays so). With `--profile`
  too, the demo tools are added after that profile's own allow list.
- `--mcp-config` registers every server of the file with the bench's own loader
  (`bench.mcp.load_config`), drops the ones `--server` does not name, connects the rest
  concurrently (each bounded by its `timeout`, default 60 s) and allows each valid tool they
  list, after the profile's own allow order; a tool the profile denies stays denied.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ToolbenchError, Workbench

if TYPE_CHECKING:
    from .mcp import McpServerInfo


def open_bench(workspace: str | None, profile: str | None, *, seed: int | None = None,
               demo: bool = False) -> Workbench:
    """A bench on `workspace` (None: a fresh demo workspace, removed on close) and `profile`,
    with the tool sources installed packages declare (`toolbench.sources`; a skipped one is a
    line on stderr)."""
    bench = Workbench(workspace, profile, seed=seed) if not demo else Workbench.demo(workspace, seed=seed)
    for notice in bench.add_installed_sources():
        print(f"toolbench: {notice}", file=sys.stderr)
    if demo and profile is not None:
        demo_tools = [t for t in bench.profile.tools.allow if t.startswith("extension/demo:")]
        try:
            bench.profile = profile
            allow_after(bench, demo_tools)
        except BaseException:
            bench.close()
            raise
    return bench


def load_servers(bench: Workbench, config: str | Path | Mapping[str, Any], only: Sequence[str] = (),
                 timeout: float | None = None) -> list[McpServerInfo]:
    """Register the servers of `config` (a path or the parsed object; all, or the ones named in
    `only`), connect them, allow their tools, and return their states (`failed` ones carry a coded diagnostic).

    Raises `mcp.config_invalid` for a bad file and `mcp.server_unknown` for a name in `only`
    that the file does not hold."""
    infos = bench.mcp.load_config(config, connect=False, timeout=timeout)
    names = [info.name for info in infos]
    unknown = [name for name in only if name not in names]
    if unknown:
        raise ToolbenchError("mcp.server_unknown", f"{config} has no MCP server named "
                             f"{', '.join(f'`{n}`' for n in unknown)} (it has: {', '.join(names) or 'none'})")
    for name in names:
        if only and name not in only:
            bench.mcp.remove(name)
    kept = [name for name in names if not only or name in only]
    infos = [info for info in bench.mcp.refresh() if info.name in kept]
    allow_after(bench, [str(tool.tool_id) for info in infos for tool in info.tools
                        if tool.tool_id is not None and tool.problem_code is None])
    return infos


def allow_after(bench: Workbench, tool_ids: Sequence[str]) -> None:
    """Append `tool_ids` to the profile's allow list (the ones it lacks; denies still win)."""
    allow = bench.profile.tools.allow
    new = [t for t in dict.fromkeys(tool_ids) if t not in allow]
    if new:
        bench.profile = bench.profile.edit(allow=[*allow, *new])


def unreachable(infos: Sequence[McpServerInfo]) -> list[McpServerInfo]:
    """The servers that could not be reached (state `failed`)."""
    return [info for info in infos if info.state == "failed"]


def unreachable_line(info: McpServerInfo) -> str:
    """The one stderr line for a server that could not be reached: its coded diagnostic."""
    return f"toolbench: {info.diagnostic_code or 'mcp.server_start_failed'}: MCP server `{info.name}`: " \
           f"{info.diagnostic or 'could not be reached'}"
