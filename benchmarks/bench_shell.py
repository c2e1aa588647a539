"""Shell: `workspace.shell` running `echo hi | wc -c` against a raw bashkit `Bash` call and a
subprocess bash (`subprocess.run(["bash", "-c", ...])`).

The raw bashkit side makes a fresh `bashkit.Bash()` per call: a fresh shell per call is what
the tool promises. The tool gets it by resetting a kept interpreter after each call, so a raw
reused interpreter reset per call is shown too, and one never reset, for reference.
"""

from __future__ import annotations

import subprocess

from . import _common as c

COMMAND = "echo hi | wc -c"


def run(smoke: bool) -> c.Report:
    """Shell: workspace.shell against raw bashkit and a subprocess bash."""
    import bashkit

    from toolbench import Profile, Workbench

    report = c.Report("shell", "workspace.shell against raw bashkit and subprocess bash", smoke)
    repeats, inner = (5, 3) if smoke else (21, 10)
    profile = Profile.default().edit(allow=["builtin:workspace.shell"], max_calls_per_run=1_000_000,
                                     max_rounds=1_000_000)
    reused, reset = bashkit.Bash(), bashkit.Bash()

    def reset_then_run() -> None:
        reset.reset()
        reset.execute_sync(COMMAND)

    with Workbench(None, profile) as bench:
        inv = bench.invocation()

        def tool() -> None:
            result = inv.call("workspace_shell", {"command": COMMAND})
            assert not result.is_error, result.content

        cases = {
            "workspace.shell": tool,
            "bashkit (fresh Bash)": lambda: bashkit.Bash().execute_sync(COMMAND),
            "bashkit (reused Bash, reset)": reset_then_run,
            "bashkit (reused Bash)": lambda: reused.execute_sync(COMMAND),
            "subprocess bash": lambda: subprocess.run(["bash", "-c", COMMAND], capture_output=True, check=True),
        }
        samples = c.interleaved(cases, repeats=repeats, inner=inner)
    for name in cases:
        r = c.ratio(samples, "workspace.shell", name)
        report.row(case=name, median=c.fmt_seconds(c.median(samples[name])), shell_tool_ratio=f"{r:.2f}x")
    vs_bashkit = c.ratio(samples, "workspace.shell", "bashkit (fresh Bash)")
    vs_subprocess = c.ratio(samples, "workspace.shell", "subprocess bash")
    report.target("workspace.shell vs raw bashkit (fresh Bash)", vs_bashkit, 2.0, "x", shown=f"{vs_bashkit:.2f}x")
    report.target("workspace.shell vs subprocess bash (below 1x is faster)", vs_subprocess, 1.0, "x",
                  shown=f"{vs_subprocess:.2f}x")
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
