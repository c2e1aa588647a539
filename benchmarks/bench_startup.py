"""Start-up: `toolbench snapshot` end to end, `toolbench --help` and `import toolbench`, against
`python -c pass`.

Fresh interpreters, interleaved. A separate run lists which heavy modules (pydantic, the MCP SDK,
jsonschema, pandas, the widgets, and what only some tools need) each command loaded: they should
load only when used (`--help` and `import toolbench` load none: each public name is imported on
first use).
"""

from __future__ import annotations

import json
import subprocess
import sys

from . import _common as c

HEAVY = ("pydantic", "mcp", "jsonschema", "pandas", "ipywidgets", "IPython", "jupyterlab", "openai", "anthropic",
         "google.genai", "croniter", "frontmatter", "pathspec")
_REPORT = "import json, sys; print(json.dumps([m for m in {heavy!r} if m in sys.modules]), file=sys.stderr)"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import toolbench": [sys.executable, "-c", "import toolbench"],
    "toolbench --help": [sys.executable, "-m", "toolbench", "--help"],
    "toolbench snapshot": [sys.executable, "-m", "toolbench", "snapshot"],
}


def _loaded(label: str) -> list[str]:
    probe = _REPORT.format(heavy=HEAVY)
    if label == "import toolbench":
        code = f"import toolbench; {probe}"
    elif label.startswith("toolbench "):
        argv = label.split()[1:]
        code = ("import contextlib, io\nfrom toolbench.cli import main\n"
                f"with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit): main({argv!r})\n"
                f"{probe}")
    else:
        code = probe
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stderr.strip().splitlines()[-1])


def run(smoke: bool) -> c.Report:
    """Start-up: toolbench snapshot, toolbench --help and import toolbench against python -c pass."""
    report = c.Report("startup", "toolbench snapshot, toolbench --help and import toolbench against python -c pass",
                      smoke)
    repeats = 1 if smoke else 9  # smoke: that it runs and reports, not a figure

    def runner(argv: list[str]) -> object:
        return lambda: subprocess.run(argv, capture_output=True, check=True)

    samples = c.interleaved({label: runner(argv) for label, argv in COMMANDS.items()}, repeats=repeats)
    for label in COMMANDS:
        report.row(command=label, median=c.fmt_seconds(c.median(samples[label])),
                   minus_python=c.fmt_seconds(c.paired_difference(samples, label, "python -c pass")),
                   heavy_modules_loaded=", ".join(_loaded(label)) or "none")
    cli = c.median(samples["toolbench snapshot"])
    report.target("toolbench snapshot end to end", cli, 1.0, "s", shown=c.fmt_seconds(cli))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
