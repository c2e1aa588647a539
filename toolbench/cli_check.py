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

Besides its tools, each active server's resources, resource templates and prompts are listed
(`bench.mcp.resources` and the others, all pages), concurrently with each other and with the
smoke calls: the report gives their counts (null when the server declares no such capability)
and their problems (a listing that fails, an item listed with a blank or repeated name, a prompt
argument without a name or named twice). They are notes: they never change the exit status.

Exit status: 2 when a server cannot be reached (even if others are fine), else 1 when a
problem is fatal (a provider would refuse a tool, or the server listed a tool toolbench cannot
offer) or a smoke call failed, else 0. Repaired and non-fatal findings are listed, not counted.

Rules where the issue was silent:

- `--demo` checks the packaged demo server (`demo_config`), so a wheel install has a config.
- A call name is one for every provider (the allocator makes it valid for all), so a renamed
  tool is one note, not one per provider.
- `mcp.capability_not_offered` is said only of a server that asked for a capability during the
  check (a request on the wire that was refused): the MCP spec gives a server no way to declare
  that it needs one, and a CLI check has no handler to set.
- The text report collapses a rule met at many paths of one tool (the same message) into one
  line; the JSON report keeps each finding.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import MISSING, ToolbenchError, ToolId
from .cli_screen import one_line
from .progress import Progress

if TYPE_CHECKING:  # the bench's modules load when a check runs, not for `toolbench --help`
    from . import Workbench
    from .mcp import McpServerInfo

Scene = Literal["chat", "session"]
REPORT_VERSION = 1
CONTENT_CHARS = 500  # of a smoke call's content in the report: enough to see why it failed
PATHS_SHOWN = 3  # of a collapsed line's paths in the text report (the JSON report has them all)
FEATURES = ("resources", "resource_templates", "prompts")  # listed besides the tools
SUBJECTS = {"resources": "uri", "resource_templates": "uri_template", "prompts": "name"}  # a problem's subject
LISTING_THREADS = 8  # the listings wait in threads; the bench loop runs them concurrently
# The requests a server sends for a client capability (MCP spec: roots, sampling, elicitation).
ASKS = {"roots/list": "roots", "sampling/createMessage": "sampling", "elicitation/create": "elicitation"}
RENAMED = {
    "sanitised": "sanitised (characters outside A-Z a-z 0-9 _ - replaced, runs of _ squeezed)",
    "truncated": "truncated (a call name is at most 64 bytes)",
    "de-duplicated": "de-duplicated (another tool took the name first; which tool gets the suffix depends on "
                     "the order the server lists its tools)",
}

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
                           "error_code", "ok", "content",
                           "attachments": [{"kind", "mime_type", "size", "sha256"}]}],
                "features": {"resources", "resource_templates", "prompts",
                             "problems": [{"feature", "subject", "rule", "message"}]}}]}
  protocol "mcp" marks what the server listed wrong (fatal: the tool is not offered) or warned
  about (mcp.tool_renamed: the call name is not mcp__<server>__<tool>; mcp.server_stdout_noise:
  non-JSON-RPC lines on stdout; mcp.capability_not_offered: the server asked for sampling or
  elicitation, which check does not answer); a problem counts when fatal and not repaired.
  Smoke calls come from each server's "toolbench": {"smoke": [{"tool", "arguments",
  "expectError"}]} block in the config. "features" counts what an active server lists besides
  tools (null: the capability is not declared, the server is not active, or the listing failed);
  its problems (a listing that failed: subject null; mcp.listed_item_invalid: subject the item's
  name or URI) are notes, never counted."""


@dataclass(frozen=True, slots=True)
class SmokeCall:
    """One smoke call a config marks for a server."""

    tool: str
    arguments: Any  # the wire value, or MISSING
    expect_error: bool = False


def demo_config() -> dict[str, Any]:
    """The `mcp.json` of `toolbench check --demo`: the packaged demo server, run with this
    interpreter (a wheel install has no checkout's examples/mcp.json), with two smoke calls."""
    from .examples.demo_mcp import stdio_config  # the MCP SDK: only when --demo is checked

    server = stdio_config()
    command, *args = server["command"]
    smoke = [{"tool": "echo", "arguments": {"text": "hi"}},
             {"tool": "fail", "arguments": {"message": "boom"}, "expectError": True}]
    return {"mcpServers": {"demo": {"command": command, "args": args, "env": server["env"],
                                    "toolbench": {"smoke": smoke}}}}


def smoke_calls(config: str | Path | Mapping[str, Any]) -> dict[str, list[SmokeCall]]:
    """The smoke calls of each server of `config` (a path or the parsed object), by server name;
    `mcp.config_invalid` names the server and the entry of a malformed block."""
    from .mcp import read_mcp_json

    document = config if isinstance(config, Mapping) else read_mcp_json(config)
    servers = document.get("mcpServers", {}) if isinstance(document, Mapping) else None
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


def run_check(bench: Workbench, config: str | Path | Mapping[str, Any], *, servers: Sequence[str] = (),
              scene: Scene = "chat",
              gemini_schema: str = "json-schema", timeout: float | None = None,
              progress: bool | None = False) -> dict[str, Any]:
    """Connect, check and smoke-call; the report (`JSON_HELP` gives its shape). `timeout` is
    the seconds of each server that gives none in the config. `progress` shows a bar on stderr
    (None: on a terminal only) of the servers checked, the rate of clean ones, in flight."""
    smoke = smoke_calls(config)  # before connecting: a malformed block starts no server
    bar = Progress(None, progress, desc="connecting", unit="server", good="clean", bad="with problems")
    try:
        return _checked(bench, config, smoke, servers, scene, gemini_schema, timeout, bar)
    finally:
        bar.close()


def _checked(bench: Workbench, config: str | Path | Mapping[str, Any], smoke: Mapping[str, list[SmokeCall]],
             servers: Sequence[str], scene: Scene, gemini_schema: str, timeout: float | None,
             bar: Progress) -> dict[str, Any]:
    from .cli_bench import load_servers

    infos = load_servers(bench, config, servers, timeout)
    bar.describe("checking", total=len(infos))
    active = [info.name for info in infos if info.state == "active"]
    with ThreadPoolExecutor(max(1, min(LISTING_THREADS, len(active) * len(FEATURES)))) as pool:
        listings = {(name, feature): pool.submit(_listing(bench, feature), name)
                    for name in active for feature in FEATURES}
        snapshot = bench.invocation(scene).snapshot
        problems = snapshot.check(schema=gemini_schema)
        reports = []
        for info in infos:
            reports.append(_server_report(bench, info, snapshot, problems, smoke.get(info.name, []), scene))
            bar.done(_clean(reports[-1]))
    for report in reports:
        report["features"] = _features(report["name"], listings)
    summary = {
        "servers": len(reports),
        "unreachable": sum(not r["reachable"] for r in reports),
        "fatal": sum(_fatal(p) for r in reports for p in r["problems"]),
        "repaired": sum(p["repaired"] for r in reports for p in r["problems"]),
        "smoke_failed": sum(not s["ok"] for r in reports for s in r["smoke"]),
    }
    # A config that names no server to check is a problem too: CI must not pass on a misplaced file.
    code = 2 if summary["unreachable"] else 1 if summary["fatal"] or summary["smoke_failed"] or not reports else 0
    return {"version": REPORT_VERSION, "exit_code": code, "summary": summary, "servers": reports}


def _clean(report: Mapping[str, Any]) -> bool:
    return bool(report["reachable"]) and all(s["ok"] for s in report["smoke"]) and not any(
        map(_fatal, report["problems"]))


def _fatal(problem: Mapping[str, Any]) -> bool:
    return bool(problem["fatal"] and not problem["repaired"])


def _server_report(bench: Workbench, info: McpServerInfo, snapshot: Any, problems: list[Any],
                   smoke: list[SmokeCall], scene: Scene) -> dict[str, Any]:
    names = {tool_id: call_name for call_name, tool_id in snapshot.call_names.items()
             if tool_id.provider == info.provider}
    native = {call_name: str(tool_id.name) for tool_id, call_name in names.items()}
    reachable = info.state != "failed"
    # the smoke calls first: a server may ask for a capability only during a call
    # (a disabled server is listed as the file has it, and its smoke calls are not made)
    calls = [_smoke(bench, info, names, call, scene) for call in smoke] if info.state == "active" else []
    found: list[dict[str, Any]] = []
    for tool in info.tools:
        if tool.problem_code is not None:
            found.append(_finding("mcp", tool.name, None, tool.problem_code, tool.problem or "", fatal=True))
        found += [_finding("mcp", tool.name, None, w.code, w.message, fatal=False) for w in tool.warnings]
    # the server's warnings repeat its tools' (in other words): list those once, under the tool
    tool_codes = {w.code for tool in info.tools for w in tool.warnings}
    # what toolbench did not declare is said only of a server that asked for it: a CLI check
    # answers no sampling or elicitation, so the warning's advice (set a handler) is not for it
    found += [_finding("mcp", None, None, w.code, w.message, fatal=False)
              for w in info.warnings if w.code not in tool_codes and w.code != "mcp.capability_not_offered"]
    refused = _refused_asks(bench, info)
    if refused:
        found.append(_finding("mcp", None, None, "mcp.capability_not_offered", (
            f"MCP server `{info.name}` asked for {', '.join(refused)}, which toolbench check does not offer: the "
            "request was refused. Informational: any client without it sees the same, and the tools that need "
            "it fail here"), fatal=False))
    found += _renamed(bench, info, snapshot)
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
        "smoke": calls,
    }


def _listing(bench: Workbench, feature: str) -> Callable[[str], list[Any]]:
    listings: dict[str, Callable[[str], list[Any]]] = {
        "resources": bench.mcp.resources, "resource_templates": bench.mcp.resource_templates,
        "prompts": bench.mcp.prompts}
    return listings[feature]


def _features(name: str, listings: Mapping[tuple[str, str], Future[list[Any]]]) -> dict[str, Any]:
    """The counts and problems of what server `name` lists besides tools (see the module doc)."""
    out: dict[str, Any] = dict.fromkeys(FEATURES)
    found: list[dict[str, Any]] = []
    for feature in FEATURES:
        listing = listings.get((name, feature))
        if listing is None:
            continue
        try:
            items = listing.result()
        except ToolbenchError as exc:
            if exc.code != "mcp.capability_missing":  # not declared: null, nothing wrong
                found.append({"feature": feature, "subject": None, "rule": exc.code, "message": exc.message})
            continue
        out[feature] = len(items)
        found += [{"feature": feature, "subject": getattr(item, SUBJECTS[feature]), "rule": item.problem_code,
                   "message": item.problem} for item in items if item.problem_code is not None]
    return {**out, "problems": found}


def _refused_asks(bench: Workbench, info: McpServerInfo) -> list[str]:
    """The capabilities the server asked for (a request seen on the wire) and was refused (an
    error sent back: toolbench had not declared it)."""
    if info.state != "active":
        return []
    trace = bench.mcp.trace(info.name)
    refused = {m.id for m in trace if m.direction == "sent" and m.kind == "error"}
    return list(dict.fromkeys(ASKS[m.method] for m in trace if m.direction == "received" and m.kind == "request"
                              and m.method in ASKS and m.id in refused))


def _renamed(bench: Workbench, info: McpServerInfo, snapshot: Any) -> list[dict[str, Any]]:
    """A note for each tool a model sees under another name than its server prefix and its own
    name. The name is one for every provider (valid for all), so it is said once."""
    from .mcp import mcp_name_changes, plain_mcp_name

    out = []
    style = bench.profile.tools.naming
    for tool in info.tools:
        binding = None if tool.tool_id is None else snapshot.binding_of(tool.tool_id)
        if binding is None:
            continue
        server, own = binding.descriptor.server or info.name, str(binding.tool_id.name)  # what the name was made of
        changes = mcp_name_changes(style, server, own, binding.call_name)
        if changes:
            message = (f"the model sees `{binding.call_name}`, not `{plain_mcp_name(style, server, own)}`: "
                       + "; ".join(RENAMED[c] for c in changes))
            out.append(_finding("mcp", own, binding.call_name, "mcp.tool_renamed", message, fatal=False))
    return out


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
                "is_error": True, "error_code": "model.unknown_tool_call", "ok": False, "content": why,
                "attachments": []}
    # a fresh invocation per call: one call's budget or blocked state never decides another's
    result = bench.invocation(scene).call(call_name, call.arguments)
    content = result.content if len(result.content) <= CONTENT_CHARS else result.content[:CONTENT_CHARS] + "…"
    return {"tool": call.tool, "call_name": call_name, "arguments": arguments, "expect_error": call.expect_error,
            "is_error": result.is_error, "error_code": result.error_code,
            "ok": result.is_error == call.expect_error and not _lost(result.error_code), "content": content,
            # an image or audio tool's answer may be all attachments (its content '')
            "attachments": [{"kind": a.kind, "mime_type": a.mime_type, "size": a.size, "sha256": a.sha256}
                            for a in result.attachments]}


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
            lines.append(f"  unreachable: {server['error']['code']}: {_line(server['error']['message'])}")
        if tools:
            lines.append("  tools: " + ", ".join(_show(t["name"]) for t in tools))
        lines += _problem_lines(server["problems"])
        lines += _feature_lines(server.get("features"))
        for s in server["smoke"]:
            outcome = f"error {s['error_code']}" if s["is_error"] else "ok"
            expected = "an error" if s["expect_error"] else "ok"
            verdict = "passed" if s["ok"] else f"FAILED (expected {expected}): {_line(s['content'][:200])}"
            kept = "".join(f", {a['kind']} {_show(a['mime_type'])} {a['size']:,} bytes" for a in s["attachments"])
            lines.append(f"  smoke {_show(s['tool'])}: {outcome}, {verdict}{kept}")
    totals = report["summary"]
    why = "" if report["servers"] else " (the config names no server)"
    lines.append(f"{totals['servers']} server(s), {totals['unreachable']} unreachable, {totals['fatal']} fatal "
                 f"problem(s), {totals['repaired']} repaired, {totals['smoke_failed']} smoke call(s) failed: "
                 f"exit {report['exit_code']}{why}")
    return "\n".join(lines) + "\n"


def _problem_lines(problems: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per tool, rule and message: a rule met at many paths of one schema (pydantic
    puts a `title` on every property) is one line with the count and the first paths."""
    groups: dict[tuple[str, str, str, str, str], list[str]] = {}
    for p in problems:
        label = "repaired" if p["repaired"] else "FATAL" if p["fatal"] else "note"
        tool = "(server)" if p["tool"] is None else _show(p["tool"])
        groups.setdefault((label, p["protocol"], tool, p["rule"], _line(p["message"])), []).append(p["path"])
    lines = []
    for (label, protocol, tool, rule, message), paths in groups.items():
        count = f" ({len(paths)}x)" if len(paths) > 1 else ""
        shown = [_line(path) for path in paths if path]  # a schema's paths hold the server's property names
        more = f" and {len(shown) - PATHS_SHOWN} more" if len(shown) > PATHS_SHOWN else ""
        where = f" at {', '.join(shown[:PATHS_SHOWN])}{more}" if shown else ""
        lines.append(f"  {label} {protocol} {tool}: {rule}{count}{where}: {message}")
    return lines


def _feature_lines(features: Mapping[str, Any] | None) -> list[str]:
    """`resources: 7, resource templates: 2, prompts: not declared`, then a note per problem."""
    if not features or (all(features[f] is None for f in FEATURES) and not features["problems"]):
        return []
    failed = {p["feature"] for p in features["problems"] if p["subject"] is None}
    counts = ", ".join(f"{f.replace('_', ' ')}: "
                       f"{features[f] if features[f] is not None else 'failed' if f in failed else 'not declared'}"
                       for f in FEATURES)
    lines = [f"  {counts}"]
    for p in features["problems"]:
        subject = "(listing)" if p["subject"] is None else _show(p["subject"])
        lines.append(f"  note {p['feature'].replace('_', ' ')} {subject}: {p['rule']}: {_line(p['message'])}")
    return lines


def _line(text: Any) -> str:
    """A server's text on one line (its newlines and control characters escaped): it cannot
    print a line that looks like the report's own, or move the cursor."""
    return one_line(str(text))


def _show(name: Any) -> str:
    """A name as one readable line: quoted when empty, not text or not printable (a server's
    names are untrusted: a newline would forge a report line), escaped, cut at 80 characters."""
    if not isinstance(name, str):
        text = one_line(json.dumps(name, ensure_ascii=False))
    else:
        text = name if name and name.isprintable() else f'"{one_line(name)}"'
    return text if len(text) <= 80 else text[:79] + "…"
