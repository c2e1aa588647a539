"""`toolbench check`: connect the MCP servers of an `mcp.json`, check every tool they list for
every provider, run the smoke calls the file marks, and report per server.

Smoke calls live in a per-server `toolbench` block, a key the common clients ignore (the MCP
Inspector's CLI and mcp-cli take one call per run on the command line; neither has a file
convention), in the file's camelCase:

    "demo": {"command": "...", "toolbench": {"smoke": [
        {"tool": "echo", "arguments": {"text": "hi"}},
        {"tool": "fail", "expectError": true}]}}

`tool` is the server's own tool name; `arguments` the wire value (an object or its JSON text;
absent: no arguments); `expectError` (default false) whether the call should come back as an
error result. Each call runs through an invocation, as a model's would (gate, schema check,
projection). A smoke call fails when its outcome differs from `expectError`.

Exit status: 2 when a server cannot be reached (even if others are fine), else 1 when a
problem is fatal (a provider would refuse a tool, or the server listed a tool toolbench cannot
offer) or a smoke call failed, else 0. Repaired and non-fatal findings are listed, not counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import MISSING, ToolbenchError, ToolId

if TYPE_CHECKING:  # the bench's modules load when a check runs, not for `toolbench --help`
    from . import Workbench
    from .mcp import McpServerInfo

Scene = Literal["chat", "session"]
REPORT_VERSION = 1
CONTENT_CHARS = 500  # of a smoke call's content in the report: enough to see why it failed

JSON_HELP = """\
--format json prints one JSON document:
  {"version": 1, "exit_code": 0|1|2,
   "summary": {"servers", "unreachable", "fatal", "repaired", "smoke_failed"},
   "servers": [{"name", "id", "state", "transport", "reachable",
                "error": null | {"code", "message"},
                "tools": [{"name", "tool_id", "call_name", "offered"}],
                "problems": [{"protocol", "tool", "call_name", "rule", "message",
                              "fatal", "repaired", "path"}],
                "smoke": [{"tool", "call_name", "arguments", "expect_error", "is_error",
                           "error_code", "ok", "content"}]}]}
  protocol "mcp" marks what the server listed wrong (fatal: the tool is not offered) or warned
  about; a problem counts when fatal and not repaired. Smoke calls come from each server's
  "toolbench": {"smoke": [{"tool", "arguments", "expectError"}]} block in the config."""


@dataclass(frozen=True, slots=True)
class SmokeCall:
    """One smoke call a config marks for a server."""

    tool: str
    arguments: Any  # the wire value, or MISSING
    expect_error: bool = False


def smoke_calls(config: str | Path) -> dict[str, list[SmokeCall]]:
    """The smoke calls of each server of `config`, by server name; `mcp.config_invalid` names
    the server and the entry of a malformed block."""
    try:
        servers = json.loads(Path(config).read_text(encoding="utf-8")).get("mcpServers", {})
    except (OSError, ValueError, AttributeError) as exc:  # the loader has read it already
        raise ToolbenchError("mcp.config_invalid", f"cannot read MCP config {config}: {exc}") from exc
    if not isinstance(servers, Mapping):
        raise ToolbenchError("mcp.config_invalid", f"{config}: `mcpServers` must be an object of servers by name")
    out: dict[str, list[SmokeCall]] = {}
    problems: list[str] = []
    for name, entry in servers.items():
        block = entry.get("toolbench") if isinstance(entry, Mapping) else None
        if block is None:
            continue
        smoke = block.get("smoke", []) if isinstance(block, Mapping) else None
        if not isinstance(smoke, list):
            problems.append(f"MCP server `{name}`: `toolbench` must be an object with a `smoke` list")
            continue
        calls = out.setdefault(name, [])
        for index, item in enumerate(smoke):
            where = f"MCP server `{name}`: `toolbench.smoke[{index}]`"
            if not isinstance(item, Mapping) or not isinstance(item.get("tool"), str) or not item["tool"]:
                problems.append(f"{where} must be an object with a `tool` name")
                continue
            expect = item.get("expectError", False)
            if not isinstance(expect, bool):
                problems.append(f"{where}: `expectError` must be true or false")
                continue
            calls.append(SmokeCall(item["tool"], item.get("arguments", MISSING), expect))
    if problems:
        raise ToolbenchError("mcp.config_invalid", "; ".join(problems))
    return out


def run_check(bench: Workbench, config: str | Path, *, servers: Sequence[str] = (), scene: Scene = "chat",
              gemini_schema: str = "json-schema", timeout: float | None = None) -> dict[str, Any]:
    """Connect, check and smoke-call; the report (`JSON_HELP` gives its shape). `timeout` is
    the seconds of each server that gives none in the config."""
    from .cli_bench import load_servers

    smoke = smoke_calls(config)  # before connecting: a malformed block starts no server
    infos = load_servers(bench, config, servers, timeout)
    snapshot = bench.invocation(scene).snapshot
    problems = snapshot.check(schema=gemini_schema)
    reports = [_server_report(bench, info, snapshot, problems, smoke.get(info.name, []), scene)
               for info in infos]
    summary = {
        "servers": len(reports),
        "unreachable": sum(not r["reachable"] for r in reports),
        "fatal": sum(p["fatal"] and not p["repaired"] for r in reports for p in r["problems"]),
        "repaired": sum(p["repaired"] for r in reports for p in r["problems"]),
        "smoke_failed": sum(not s["ok"] for r in reports for s in r["smoke"]),
    }
    # A config that names no server to check is a problem too: CI must not pass on a misplaced file.
    code = 2 if summary["unreachable"] else 1 if summary["fatal"] or summary["smoke_failed"] or not reports else 0
    return {"version": REPORT_VERSION, "exit_code": code, "summary": summary, "servers": reports}


def _server_report(bench: Workbench, info: McpServerInfo, snapshot: Any, problems: list[Any],
                   smoke: list[SmokeCall], scene: Scene) -> dict[str, Any]:
    names = {tool_id: call_name for call_name, tool_id in snapshot.call_names.items()
             if tool_id.provider == info.provider}
    native = {call_name: str(tool_id.name) for tool_id, call_name in names.items()}
    reachable = info.state != "failed"
    found: list[dict[str, Any]] = []
    for tool in info.tools:
        if tool.problem_code is not None:
            found.append(_finding("mcp", tool.name, None, tool.problem_code, tool.problem or "", fatal=True))
        found += [_finding("mcp", tool.name, None, w.code, w.message, fatal=False) for w in tool.warnings]
    # the server's warnings repeat its tools' (in other words): list those once, under the tool
    tool_codes = {w.code for tool in info.tools for w in tool.warnings}
    found += [_finding("mcp", None, None, w.code, w.message, fatal=False)
              for w in info.warnings if w.code not in tool_codes]
    for problem in problems:
        if problem.call_name in native:
            found.append({**_finding(problem.protocol, native[problem.call_name], problem.call_name, problem.rule,
                                     problem.message, fatal=problem.fatal),
                          "repaired": problem.repaired, "path": problem.path})
    return {
        "name": info.name, "id": info.id, "state": info.state, "transport": info.transport,
        "reachable": reachable,
        "error": None if reachable or info.state == "disabled" else
        {"code": info.diagnostic_code or "mcp.server_start_failed", "message": info.diagnostic or ""},
        "tools": [{"name": t.name, "tool_id": None if t.tool_id is None else str(t.tool_id),
                   "call_name": names.get(t.tool_id) if t.tool_id is not None else None,
                   "offered": t.tool_id in names} for t in info.tools],
        "problems": found,
        # a disabled server is listed as the file has it, and its smoke calls are not made
        "smoke": [_smoke(bench, info, names, call, scene) for call in smoke] if info.state == "active" else [],
    }


def _finding(protocol: str, tool: str | None, call_name: str | None, rule: str, message: str, *,
             fatal: bool) -> dict[str, Any]:
    return {"protocol": protocol, "tool": tool, "call_name": call_name, "rule": rule, "message": message,
            "fatal": fatal, "repaired": False, "path": ""}


def _smoke(bench: Workbench, info: McpServerInfo, names: Mapping[ToolId, str], call: SmokeCall,
           scene: Scene) -> dict[str, Any]:
    arguments = None if call.arguments is MISSING else call.arguments
    try:
        call_name = names.get(ToolId.parse(f"{info.provider}:{call.tool}"))
    except ToolbenchError:
        call_name = None
    if call_name is None:
        offered = any(t.name == call.tool for t in info.tools)
        why = (f"the profile does not offer `{call.tool}` (it is denied or not allowed)" if offered
               else f"the server offers no tool `{call.tool}`")
        return {"tool": call.tool, "call_name": None, "arguments": arguments, "expect_error": call.expect_error,
                "is_error": True, "error_code": "model.unknown_tool_call", "ok": False, "content": why}
    # a fresh invocation per call: one call's budget or blocked state never decides another's
    result = bench.invocation(scene).call(call_name, call.arguments)
    content = result.content if len(result.content) <= CONTENT_CHARS else result.content[:CONTENT_CHARS] + "…"
    return {"tool": call.tool, "call_name": call_name, "arguments": arguments, "expect_error": call.expect_error,
            "is_error": result.is_error, "error_code": result.error_code,
            "ok": result.is_error == call.expect_error and not _lost(result.error_code), "content": content}


def _lost(code: str | None) -> bool:
    """A call whose outcome is unknown or whose server failed is never the expected error: a
    tool that hangs must not pass its must-fail check."""
    return code is not None and (code == "mcp.call_outcome_unknown" or code.startswith("mcp.server_"))


def render_text(report: Mapping[str, Any]) -> str:
    """The report for a terminal: one block per server, then a summary line."""
    lines: list[str] = []
    for server in report["servers"]:
        tools = server["tools"]
        lines.append(f"{_show(server['name'])} ({server['transport']}, {server['state']}): {len(tools)} tool(s)")
        if server["error"] is not None:
            lines.append(f"  unreachable: {server['error']['code']}: {server['error']['message']}")
        if tools:
            lines.append("  tools: " + ", ".join(_show(t["name"]) for t in tools))
        for p in server["problems"]:
            label = "repaired" if p["repaired"] else "FATAL" if p["fatal"] else "note"
            where = f" at {p['path']}" if p["path"] else ""
            tool = "(server)" if p["tool"] is None else _show(p["tool"])
            lines.append(f"  {label} {p['protocol']} {tool}: {p['rule']}{where}: {_line(p['message'])}")
        for s in server["smoke"]:
            outcome = f"error {s['error_code']}" if s["is_error"] else "ok"
            expected = "an error" if s["expect_error"] else "ok"
            verdict = "passed" if s["ok"] else f"FAILED (expected {expected}): {_line(s['content'][:200])}"
            lines.append(f"  smoke {_show(s['tool'])}: {outcome}, {verdict}")
    totals = report["summary"]
    lines.append(f"{totals['servers']} server(s), {totals['unreachable']} unreachable, {totals['fatal']} fatal "
                 f"problem(s), {totals['repaired']} repaired, {totals['smoke_failed']} smoke call(s) failed: "
                 f"exit {report['exit_code']}")
    return "\n".join(lines) + "\n"


def _line(text: Any) -> str:
    """A server's text on one line (its newlines and control characters escaped): it cannot
    print a line that looks like the report's own."""
    text = str(text)
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]


def _show(name: Any) -> str:
    """A name as one readable line: JSON-quoted when empty, not text or not printable (a
    server's names are untrusted: a newline would forge a report line), cut at 80 characters."""
    text = name if isinstance(name, str) and name and name.isprintable() else json.dumps(name, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"
