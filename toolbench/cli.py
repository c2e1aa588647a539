"""The `toolbench` command: snapshot, call, check and lab (a thin parser: the bench it opens is
`cli_bench`'s, the check is `cli_check`'s)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .cli_args import positive_number

if TYPE_CHECKING:
    from . import Snapshot, ToolResult, Workbench
    from .cli_screen import Screen


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["lab"]:  # before the imports below: `lab` needs none of the package
        return _lab(argv[1:])
    with _stops_unwind():
        try:
            return _main(argv)
        except KeyboardInterrupt:
            print("toolbench: interrupted", file=sys.stderr)
            return 130


@contextlib.contextmanager
def _stops_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP (a CI cancel, `timeout`, a closed terminal) unwind like Ctrl-C, so
    the bench closes: its MCP servers stopped, its temporary workspace removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    stops = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {s: signal.signal(s, stop) for s in stops}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


class _ProtocolNames:
    """`protocols.names()`, read when argparse checks `--protocol` or prints `snapshot --help`:
    `toolbench --help` and the other commands do not import the providers."""

    def __iter__(self) -> Iterator[str]:
        from .protocols import names

        return iter(names())

    def __contains__(self, name: object) -> bool:
        known = name in list(self)
        if not known:  # an installed provider that was skipped says why, before argparse refuses the name
            from .cli_screen import one_line
            from .protocols import notices

            for notice in notices():
                print(f"toolbench: {one_line(notice)}", file=sys.stderr)
        return known


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="toolbench", description="A workbench for an LLM agent's tool runtime.")
    sub = parser.add_subparsers(dest="command", required=True)

    snap = sub.add_parser("snapshot", help="print the tool list a provider would receive, as JSON",
                          description="Print the tool list on stdout. Why a tool the profile names is missing "
                          "goes to stderr, one coded line each. Exit 0; with --check, 1 when a provider would "
                          "refuse the list or it holds no tool; 2 on a usage or configuration error.")
    _common_options(snap)
    # A metavar, so argparse reads the names when it checks a value or prints this help, not here.
    snap.add_argument("--protocol", choices=_ProtocolNames(), default="openai", metavar="PROTOCOL",
                      help="the provider API whose tool format to print: %(choices)s (default %(default)s)")
    snap.add_argument("--check", action="store_true",
                      help="list each provider's problems with the tool list; exit 1 if any would refuse it "
                      "or the list holds no tool")
    snap.add_argument("--gemini-schema", choices=("json-schema", "openapi"), default="json-schema",
                      help="Gemini's schema field: parametersJsonSchema (default) or the OpenAPI subset in parameters")
    _bench_options(snap)

    call = sub.add_parser("call", help="run one tool call and print the ToolResult as JSON",
                          description="Run one call as a model would send it and print the ToolResult on "
                          "stdout. Exit 0 when the result is no error, 1 when it is one (isError: its "
                          "errorCode says why), 2 on a usage or configuration error (a bad profile or "
                          "workspace, an MCP server that cannot be reached).")
    call.add_argument("call_name", help="the tool's name as the model calls it (e.g. dice_roll)")
    call.add_argument("arguments", nargs="?", default=None, help="the raw wire text of the arguments")
    _common_options(call)
    call.add_argument("--seed", type=int, default=None, help="seed the dice: the same seed, the same rolls")
    _bench_options(call)

    from .cli_check import JSON_HELP

    check = sub.add_parser("check", help="connect the MCP servers of a config, check their tools for every provider "
                           "and run the smoke calls it marks", epilog=JSON_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Exit 0 when no problem is fatal, 1 when one is (or a smoke call failed, "
                           "or the config names no server), 2 when a server cannot be reached. Each server's "
                           "`timeout` in the config (seconds; else --timeout, else 60) bounds its connecting "
                           "and listing, and each smoke call.")
    source = check.add_mutually_exclusive_group(required=True)
    source.add_argument("--mcp-config", metavar="FILE", help="an mcp.json ({\"mcpServers\": {...}})")
    source.add_argument("--demo", action="store_true", help="check the packaged demo server "
                        "(toolbench.examples.demo_mcp, run with this interpreter) and its smoke calls: no file needed")
    check.add_argument("--server", action="append", default=[], metavar="NAME",
                       help="check only this server (repeatable; default: every server of the file)")
    _common_options(check)
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--sign-in", action="store_true",
                       help="sign in to the HTTP servers that ask for OAuth: print each authorization URL and open "
                       "a browser (the tokens are kept outside the workspace, for later runs). Without it a server "
                       "that needs a person to sign in is unreachable (mcp.sign_in_required, exit 2)")
    check.add_argument("--timeout", type=positive_number("seconds"), default=None, metavar="SECONDS",
                       help="the time limit of each server that sets no `timeout` of its own (default 60)")
    check.add_argument("--gemini-schema", choices=("json-schema", "openapi"), default="json-schema")

    from .cli_eval import add_parser as add_eval

    evaluate = add_eval(sub)
    _common_options(evaluate)
    _bench_options(evaluate)

    sub.add_parser("lab", help="copy the bundled notebooks into --dir D (default ./toolbench-notebooks) and open "
                              "JupyterLab there (other options go to jupyter lab)")

    args = parser.parse_args(argv)
    if args.command != "check" and args.server and args.mcp_config is None:
        parser.error("--server needs --mcp-config")
    from . import MISSING, ToolbenchError
    from .cli_bench import load_servers, open_bench, unreachable, unreachable_line
    from .cli_screen import Screen

    screen = Screen()  # everything printed below goes through it (cli_bench's docstring)
    try:
        # check's --demo is the demo MCP server (cli_check.demo_config), not the demo extension tools
        with open_bench(args.workspace, args.profile, seed=getattr(args, "seed", None),
                        demo=getattr(args, "demo", False) and args.command != "check") as bench:
            # A command asks nobody to sign in (CI has nobody to ask) unless --sign-in says a person is here.
            bench.mcp.on_authorize(None if getattr(args, "sign_in", False) else False)
            if args.command == "check":
                return _check(bench, args, screen)
            if args.mcp_config is not None:
                screen.hide_config_values(args.mcp_config)
                failed = unreachable(load_servers(bench, args.mcp_config, args.server))
                for info in failed:
                    print(screen.line(unreachable_line(info)), file=sys.stderr)
                if failed:
                    return 2  # what the command would show is not what a notebook would see
            if args.command == "eval":
                from .cli_eval import run_eval

                return run_eval(bench, args)
            inv = bench.invocation(args.scene)
            if args.command == "snapshot":
                return _snapshot(inv.snapshot, args, screen)
            wire: Any = MISSING if args.arguments is None else args.arguments
            return _call(inv.call(args.call_name, wire), screen, temporary=args.workspace is None)
    except ToolbenchError as exc:
        print(screen.line(f"toolbench: {exc.code}: {exc.message}"), file=sys.stderr)
        return 2


def _common_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--profile", metavar="FILE",
                         help="a JSON, TOML or YAML profile (default: the embedded default)")
    command.add_argument("--workspace", metavar="DIR", help="the workspace folder, created if missing and kept "
                         "(default: a fresh demo workspace, removed at exit)")
    command.add_argument("--scene", choices=("chat", "session"), default="chat",
                         help="the scene whose tools the profile offers (default chat)")


def _snapshot(snapshot: Snapshot, args: argparse.Namespace, screen: Screen) -> int:
    """Print the tool list (or, with --check, its problems); say on stderr why tools are missing."""
    for diagnostic in snapshot.diagnostics:
        print(screen.line(f"toolbench: {diagnostic.code}: {diagnostic.tool_id}: {diagnostic.message}"),
              file=sys.stderr)
    if not snapshot.bindings:  # a profile that denies or misnames every tool: say so, even without --check
        print("toolbench: cli.snapshot_empty: the snapshot offers no tool (see the lines above, and the "
              "profile's allow and deny lists)", file=sys.stderr)
    if not args.check:
        sys.stdout.write(screen.json(snapshot.render(args.protocol, schema=args.gemini_schema)))
        return 0
    problems = snapshot.check(schema=args.gemini_schema)
    sys.stdout.write(screen.json([dataclasses.asdict(p) for p in problems]))
    return 1 if not snapshot.bindings or any(p.fatal and not p.repaired for p in problems) else 0


def _call(result: ToolResult, screen: Screen, *, temporary: bool) -> int:
    """Print the result; 1 if it is an error. Files it names in a temporary workspace are gone at
    exit: keeping them would leave a folder in the temp dir per call that nothing removes."""
    sys.stdout.write(screen.json(result.model_dump(mode="json", by_alias=True)))
    files = [*result.resource_refs, *(a.path for a in result.attachments)]
    if temporary and files:
        print(f"toolbench: cli.result_files_removed: the result names {len(files)} file(s) of a temporary "
              "workspace, removed at exit; pass --workspace DIR to keep them", file=sys.stderr)
    return 1 if result.is_error else 0


def _bench_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--demo", action="store_true",
                         help="add the demo extension tools (weather, long_report, fail), as Workbench.demo() does")
    command.add_argument("--mcp-config", metavar="FILE", help="register and connect the MCP servers of an mcp.json "
                         "and allow their tools (exit 2 if one cannot be reached)")
    command.add_argument("--server", action="append", default=[], metavar="NAME",
                         help="with --mcp-config: only this server (repeatable)")


def _check(bench: Workbench, args: argparse.Namespace, screen: Screen) -> int:
    from .cli_bench import unreachable_line
    from .cli_check import demo_config, render_text, run_check

    config = demo_config() if args.demo else args.mcp_config
    screen.hide_config_values(config)
    report = run_check(bench, config, servers=args.server, scene=args.scene,
                       gemini_schema=args.gemini_schema, timeout=args.timeout, progress=None)  # a bar on a terminal
    for server in report["servers"]:
        if server["error"] is not None:
            print(screen.line(unreachable_line(bench.mcp.info(server["name"]))), file=sys.stderr)
    sys.stdout.write(screen.json(report) if args.format == "json" else screen.lines(render_text(report)))
    return int(report["exit_code"])


def _lab(extra: list[str]) -> int:
    from .lab import main as lab

    return lab(extra)


if __name__ == "__main__":
    raise SystemExit(main())
