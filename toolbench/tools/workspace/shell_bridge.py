"""The shell bridge: the invocation's own tools as commands inside `workspace.shell` (newest TauriTavern).

    builtin.dice.roll '{"formula": "2d6"}'            # one builtin, one JSON object argument
    mcp.list                                          # the MCP servers offered, and their tools
    mcp.check --server demo echo weather              # exit 0 only if the server offers them all
    mcp.invoke --server demo echo '{"text": "hi"}'    # one MCP tool, one JSON object argument

Each command is a nested call through the invocation's `ToolPort` (tools/base.py): the gate
charges it, its arguments are checked, an `ask` tool waits for approval, and it is recorded in
the shell call's round under `<shell call id>/<n>` with `via` naming the shell call. The set
of commands is the snapshot's: a builtin it offers is `builtin.<native name>` unless
`SHELL_EXCLUDED` lists it, and `mcp.*` exists when it offers an MCP tool; any other name is
bash's `command not found` (127).

A result's content goes to stdout, ending with a newline (exit 0). A refused or failed call writes
`<command>: <error code>: <its content>` to stderr and exits 1, or 124 when the call's outcome
is unknown (`mcp.call_outcome_unknown`: the tool may have run; check before repeating). A
command line that is not understood exits 2 and makes no call. A call starts only while the
shell's deadline has not passed (else 124, no call) and runs under it: a builtin that watches
its time limit (`check_deadline`) stops by then; MCP calls keep their own timeout, and the
shell call ends at its deadline whatever they do (the engine's guard).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ...core.descriptors import ToolDescriptor
from ...core.ids import ToolId
from ...core.results import ToolResult
from ..base import ToolPort, time_limit
from .shell_engine import Command, CommandResult

# Builtins a script never reaches, whatever the profile offers (upstream's ten, plus
# toolbench's own delete and send_message): the shell itself (recursion); the file tools that
# keep the model's read states (a script's read must not let the model write a file it never
# saw); and the tools that steer the run or the delegation protocol.
SHELL_EXCLUDED: Final = frozenset({
    "workspace.shell",
    "workspace.read_file", "workspace.write_file", "workspace.apply_patch", "workspace.delete",
    "workspace.commit", "workspace.finish",
    "agent.delegate", "agent.await", "agent.handoff", "agent.send_message", "task.return",
    # The managers change what later invocations offer (installed skills, MCP servers): the
    # model's own decision, never a script's.
    "skills.manage", "mcp.manage",
})

PREFIX: Final = "builtin."
USAGE_EXIT: Final = 2  # the command line is not understood: no call was made
FAILED_EXIT: Final = 1  # the call was refused or failed
UNCONFIRMED_EXIT: Final = 124  # no confirmed outcome (bashkit's `timeout` code): check before repeating
_UNCONFIRMED_CODE: Final = "mcp.call_outcome_unknown"
_SELECTOR_HELP: Final = ("Choose the server with --server <name-or-id>, --name <display-name>, "
                         "or --id <registration-id>.")

Action = Literal["mcp.list", "mcp.check", "mcp.invoke"]


def shell_builtins(descriptors: Sequence[ToolDescriptor]) -> list[str]:
    """Native names of the offered builtins a script may call, in snapshot order."""
    return [d.id.name for d in descriptors if d.id.kind == "builtin" and d.id.name not in SHELL_EXCLUDED]


def bridge_commands(port: ToolPort | None, deadline: float) -> dict[str, Command]:
    """The bridge's commands for one shell call whose time ends at `deadline` (monotonic)."""
    if port is None:
        return {}
    descriptors = port.descriptors()
    calls = _Calls(port, deadline)
    commands: dict[str, Command] = {
        f"{PREFIX}{name}": _BuiltinCommand(calls, name) for name in shell_builtins(descriptors)
    }
    servers = _servers(descriptors)
    if servers:
        for action in ("mcp.list", "mcp.check", "mcp.invoke"):
            commands[action] = _McpCommand(calls, servers, action)
    return commands


@dataclass(frozen=True, slots=True)
class _Server:
    id: str  # the registration id: unique
    name: str  # the display name: readable, neither unique nor permanent
    tools: tuple[str, ...]


def _servers(descriptors: Sequence[ToolDescriptor]) -> tuple[_Server, ...]:
    grouped: dict[str, tuple[str, list[str]]] = {}
    for d in descriptors:
        if d.id.kind == "mcp" and d.id.source_id is not None:
            grouped.setdefault(d.id.source_id, (d.server or d.id.source_id, []))[1].append(d.id.name)
    return tuple(_Server(sid, name, tuple(tools)) for sid, (name, tools) in grouped.items())


class _Calls:
    """Nested calls under the shell's deadline, their results as shell output."""

    __slots__ = ("_deadline", "_port")

    def __init__(self, port: ToolPort, deadline: float) -> None:
        self._port = port
        self._deadline = deadline

    def run(self, command: str, tool_id: ToolId, arguments: dict[str, Any]) -> CommandResult:
        left = self._deadline - time.monotonic()
        if left <= 0:
            return CommandResult(stderr=f"{command}: workspace.shell_timeout: the shell's time is up; "
                                 "the call was not made\n", exit_code=UNCONFIRMED_EXIT)
        with time_limit(left):
            result = self._port.call(tool_id, arguments)
        return _output(command, result)


def _output(command: str, result: ToolResult) -> CommandResult:
    if not result.is_error:
        # A line ends with a newline, as a command's output does (`$(...)` strips it again).
        text = result.content
        return CommandResult(stdout=text if not text or text.endswith("\n") else text + "\n")
    code = result.error_code or "tool.failed"
    exit_code = UNCONFIRMED_EXIT if code == _UNCONFIRMED_CODE else FAILED_EXIT
    return CommandResult(stderr=f"{command}: {code}: {result.content}\n", exit_code=exit_code)


def _json_object(command: str, text: str | None) -> dict[str, Any] | CommandResult:
    """The one JSON object argument (absent: `{}` for mcp.invoke only), or the usage error."""
    try:
        value = json.loads(text, parse_constant=_no_constant) if text is not None else None
    except (ValueError, RecursionError) as exc:
        return _usage(f"{command}: invalid JSON arguments: {exc}")
    if not isinstance(value, dict):
        return _usage(f"{command}: arguments must be a JSON object, as in {command} '{{}}'")
    return value


def _usage(message: str) -> CommandResult:
    return CommandResult(stderr=f"{message}\n", exit_code=USAGE_EXIT)


class _BuiltinCommand:
    """`builtin.<name> '<json object>'`; further arguments are ignored, as upstream."""

    __slots__ = ("_calls", "_name")

    def __init__(self, calls: _Calls, name: str) -> None:
        self._calls = calls
        self._name = name

    def __call__(self, argv: list[str], stdin: str | None) -> CommandResult:
        command = f"{PREFIX}{self._name}"
        if not argv:
            return _usage(f"{command}: expected one JSON argument, as in {command} '{{}}'")
        arguments = _json_object(command, argv[0])
        if isinstance(arguments, CommandResult):
            return arguments
        return self._calls.run(command, ToolId.builtin(self._name), arguments)


@dataclass(slots=True)
class _Parsed:
    selector: str  # --server, --name or --id
    value: str
    tools: list[str]
    json: str | None


class _McpCommand:
    """`mcp.list`, `mcp.check` and `mcp.invoke` over the servers the snapshot offers."""

    __slots__ = ("_action", "_calls", "_servers")

    def __init__(self, calls: _Calls, servers: tuple[_Server, ...], action: Action) -> None:
        self._calls = calls
        self._servers = servers
        self._action = action

    def __call__(self, argv: list[str], stdin: str | None) -> CommandResult:
        if self._action == "mcp.list":
            return CommandResult(stdout="".join(
                f"{s.id}  {s.name}\n" + "".join(f"  {t}\n" for t in s.tools) for s in self._servers))
        parsed = self._parse(argv)
        if isinstance(parsed, str):
            return _usage(parsed)
        server = self._resolve(parsed)
        if isinstance(server, str):
            return _usage(server)
        if self._action == "mcp.check":
            return self._check(server, parsed.tools)
        if not parsed.tools:
            return _usage("mcp.invoke: one tool name is required")
        arguments = _json_object("mcp.invoke", parsed.json) if parsed.json is not None else {}
        if isinstance(arguments, CommandResult):
            return arguments
        return self._calls.run("mcp.invoke", ToolId.mcp(server.id, parsed.tools[0]), arguments)

    def _parse(self, argv: list[str]) -> _Parsed | str:
        """Positional arguments are tool names (and, for invoke, the JSON after the tool); the
        server is always a flag, so the two are never confused."""
        selector: tuple[str, str] | None = None
        tools: list[str] = []
        payload: str | None = None
        rest = iter(argv)
        for arg in rest:
            if arg in ("--server", "--name", "--id"):
                if selector is not None:
                    return f"{self._action}: give exactly one of --server, --name or --id\n{_SELECTOR_HELP}"
                value = next(rest, None)
                if value is None:
                    return f"{arg} requires a value"
                selector = (arg, value)
            elif arg.startswith("--") and len(arg) > 2:
                return f"{self._action}: unknown option `{arg}`"
            elif self._action == "mcp.invoke" and len(tools) == 1 and payload is None:
                payload = arg
            else:
                tools.append(arg)
        if selector is None:
            return f"{self._action}: one of --server, --name or --id is required\n{_SELECTOR_HELP}"
        return _Parsed(selector[0], selector[1], tools, payload)

    def _resolve(self, parsed: _Parsed) -> _Server | str:
        """Exactly one server, or why not: a selector matching two is refused, never guessed."""
        by_name = parsed.selector in ("--server", "--name")
        by_id = parsed.selector in ("--server", "--id")
        matches = [s for s in self._servers if (by_name and s.name == parsed.value) or (by_id and s.id == parsed.value)]
        listing = "".join(f"\n  {s.id}  {s.name}" for s in (matches if len(matches) > 1 else self._servers))
        if not matches:
            return f"no MCP server matches {parsed.selector} `{parsed.value}`\nAvailable servers:{listing}"
        if len(matches) > 1:
            return (f"{parsed.selector} `{parsed.value}` matches {len(matches)} servers, but a selector must "
                    f"match exactly one. Use --id:{listing}")
        return matches[0]

    @staticmethod
    def _check(server: _Server, tools: list[str]) -> CommandResult:
        if not tools:
            return _usage("mcp.check: at least one tool name is required")
        missing = [t for t in tools if t not in server.tools]
        if not missing:
            return CommandResult(stdout=f"{server.name} provides: {', '.join(tools)}\n")
        available = ", ".join(server.tools) or "(none)"
        return CommandResult(stderr=f"{server.name} is missing {len(missing)} of {len(tools)} tools: "
                             f"{', '.join(missing)}\navailable: {available}\n", exit_code=FAILED_EXIT)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # json.loads takes NaN and Infinity otherwise
