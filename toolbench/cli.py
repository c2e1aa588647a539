"""The `toolbench` command: snapshot, call and lab."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["lab"]:  # before the imports below: `lab` needs none of the package
        return _lab(argv[1:])
    from .protocols import names

    parser = argparse.ArgumentParser(prog="toolbench", description="A workbench for an LLM agent's tool runtime.")
    sub = parser.add_subparsers(dest="command", required=True)

    snap = sub.add_parser("snapshot", help="print the tool list a provider would receive, as JSON")
    snap.add_argument("--profile", help="a JSON or TOML profile (default: the embedded default)")
    snap.add_argument("--workspace", help="the workspace folder (default: a fresh demo workspace)")
    snap.add_argument("--scene", choices=("chat", "session"), default="chat")
    snap.add_argument("--protocol", choices=names(), default="openai")
    snap.add_argument("--check", action="store_true",
                      help="list each provider's problems with the tool list; exit 1 if any would refuse it")
    snap.add_argument("--gemini-schema", choices=("json-schema", "openapi"), default="json-schema",
                      help="Gemini's schema field: parametersJsonSchema (default) or the OpenAPI subset in parameters")

    call = sub.add_parser("call", help="run one tool call and print the ToolResult as JSON")
    call.add_argument("call_name")
    call.add_argument("arguments", nargs="?", default=None, help="the raw wire text of the arguments")
    call.add_argument("--profile")
    call.add_argument("--workspace")
    call.add_argument("--scene", choices=("chat", "session"), default="chat")
    call.add_argument("--seed", type=int, default=None, help="seed the dice: the same seed, the same rolls")

    sub.add_parser("lab", help="copy the bundled notebooks into --dir D (default ./toolbench-notebooks) and open "
                              "JupyterLab there (other options go to jupyter lab)")

    args = parser.parse_args(argv)
    from . import MISSING, ToolbenchError, Workbench

    try:
        with Workbench(args.workspace, args.profile, seed=getattr(args, "seed", None)) as bench:
            inv = bench.invocation(args.scene)
            if args.command == "snapshot" and args.check:
                problems = inv.snapshot.check(schema=args.gemini_schema)
                _print([dataclasses.asdict(p) for p in problems])
                return 1 if any(p.fatal and not p.repaired for p in problems) else 0
            if args.command == "snapshot":
                _print(inv.snapshot.render(args.protocol, schema=args.gemini_schema))
            else:
                wire: Any = MISSING if args.arguments is None else args.arguments
                _print(inv.call(args.call_name, wire).model_dump(mode="json", by_alias=True))
    except ToolbenchError as exc:
        print(f"toolbench: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    return 0


def _print(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _lab(extra: list[str]) -> int:
    from .lab import main as lab

    return lab(extra)


if __name__ == "__main__":
    raise SystemExit(main())
