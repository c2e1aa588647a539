"""`toolbench eval CASES.py`: run a file's eval cases against its models, for CI.

The file is Python, run as a script (it is the user's own, named on the command line). It
defines `CASES` (a sequence of `evals.Case`) and `MODELS` (a mapping of names to models or
zero-argument factories), and may define `setup(bench)` to register its tools on the bench
first. `--model NAME` (repeatable) picks models by name (default: all). The pass rates are
printed; `--out FILE` saves the report as Parquet; the exit status is 1 when a case and model
pass fewer than `--min-pass-rate` of their attempts, 2 for a file that does not say what to run.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_args import positive_number

if TYPE_CHECKING:  # `toolbench --help` builds this parser: it imports none of the package's heavy parts
    from . import Workbench, evals


def add_parser(sub: Any) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = sub.add_parser(
        "eval", help="run a file's eval cases (CASES, MODELS) against its models and print the pass rates",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    command.add_argument("cases", metavar="CASES.py", help="a Python file defining CASES and MODELS")
    command.add_argument("--model", action="append", default=[], metavar="NAME",
                         help="run only this model of MODELS (repeatable; default all)")
    command.add_argument("--repeat", type=_positive, default=1, metavar="N", help="attempts per case and model")
    command.add_argument("--concurrency", type=_positive, default=1, metavar="N",
                         help="attempts in flight at once (default 1)")
    command.add_argument("--per-model", type=_positive, default=None, metavar="N",
                         help="at most N requests in flight to each model")
    command.add_argument("--requests-per-minute", type=positive_number("requests a minute"), default=None, metavar="R",
                         help="at most R requests started to each model in any minute")
    command.add_argument("--executor", choices=["ray"], default=None,
                         help="run the attempts on a Ray cluster (RAY_ADDRESS, else a local one; "
                              "pip install 'toolbench[ray]')")
    command.add_argument("--out", metavar="FILE", help="save the report as Parquet (evals.Report.load reads it)")
    command.add_argument("--min-pass-rate", type=_rate, default=None, metavar="R",
                         help="exit 1 when a case and model pass fewer than R (0 to 1) of their attempts")
    command.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="a progress bar on stderr (default: when stderr is a terminal)")
    return command


def load_plan(path: str, chosen: Sequence[str]) -> tuple[list[evals.Case], dict[str, Any], Any]:
    """The file's cases, the models chosen from it, and its `setup` (or None)."""
    from . import ToolbenchError, evals  # the command runs: the package is needed now
    if not Path(path).is_file():
        raise ToolbenchError("bench.misuse", f"`{path}` is not a file: name a Python file defining CASES and MODELS")
    names = runpy.run_path(path, run_name="toolbench_eval")
    cases, models = names.get("CASES"), names.get("MODELS")
    if not isinstance(cases, Sequence) or not cases or not all(isinstance(c, evals.Case) for c in cases):
        raise ToolbenchError("bench.misuse", f"`{path}` defines no CASES: a non-empty list of evals.Case")
    if not isinstance(models, Mapping) or not models:
        raise ToolbenchError("bench.misuse", f"`{path}` defines no MODELS: a mapping of names to models or factories")
    unknown = [n for n in chosen if n not in models]
    if unknown:
        raise ToolbenchError("bench.misuse", f"no model {', '.join(map(repr, unknown))} in MODELS; it has "
                             f"{', '.join(map(repr, models))}")
    picked = {n: models[n] for n in (chosen or list(models))}
    setup = names.get("setup")
    return list(cases), picked, setup if callable(setup) else None


def run_eval(bench: Workbench, args: argparse.Namespace) -> int:
    from . import evals
    cases, models, setup = load_plan(args.cases, args.model)
    if setup is not None:
        setup(bench)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    report = evals.run(bench, cases, models, repeat=args.repeat, concurrency=args.concurrency, scene=args.scene,
                       progress=progress, executor=args.executor, per_model=args.per_model,
                       requests_per_minute=args.requests_per_minute)
    print(report.pass_rates().to_string(float_format=lambda r: f"{r:.0%}"))
    print(f"{report!r}")
    if args.out:
        print(f"saved {report.save(args.out)}", file=sys.stderr)
    if args.min_pass_rate is not None:
        try:
            report.assert_pass_rate(args.min_pass_rate)
        except AssertionError as low:
            print(f"toolbench: cli.eval_below_pass_rate: {low}", file=sys.stderr)
            return 1
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"a positive whole number, not {text!r}")
    return value


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a pass rate from 0 to 1, not {text!r}")
    return value
