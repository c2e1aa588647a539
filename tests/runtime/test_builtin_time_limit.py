"""Every builtin has a time limit (`tools.builtinTimeoutSeconds`): a call whose own work runs
past it ends with `tool.timeout` and the file it was editing is untouched. Run in a child with a
deadline, so a regression fails instead of stalling the suite."""

from __future__ import annotations

from tests.deadline import run_with_deadline

# A near-miss edit that the whole-line passes take seconds over (issue 15 makes them linear;
# the limit is what holds whatever the input).
SLOW_EDIT = """
import time
from toolbench import Profile, Workbench
profile = Profile.default().edit(
    allow=["builtin:workspace.read_file", "builtin:workspace.apply_patch"],
    tools={"builtin_timeout_seconds": 0.5},
    workspace={"max_read_chars": 10_000_000, "max_read_lines": 1_000_000})
text = ("a: 1  \\n" * 50 + "b: 2  \\n") * 200
with Workbench(None, profile) as bench:
    (bench.workspace / "work" / "f.txt").write_text(text)
    inv = bench.invocation("session")
    assert not inv.call("workspace_read_file", {"path": "work/f.txt"}).is_error
    started = time.monotonic()
    result = inv.call("workspace_apply_patch",
                      {"path": "work/f.txt", "old_string": "a: 1\\n" * 4000 + "b: 2\\n", "new_string": "x"})
    report({"code": result.error_code, "elapsed": time.monotonic() - started,
            "untouched": (bench.workspace / "work" / "f.txt").read_text() == text,
            "next": inv.call("workspace_read_file", {"path": "work/f.txt"}).error_code})
"""


def test_a_builtin_past_its_time_limit_ends_with_tool_timeout():
    outcome = run_with_deadline(SLOW_EDIT, deadline=60)
    assert outcome["code"] == "tool.timeout"
    assert outcome["elapsed"] < 5
    assert outcome["untouched"]
    assert outcome["next"] is None


def test_the_limit_is_a_profile_setting_in_camel_case():
    from toolbench import Profile

    profile = Profile.parse({"tools": {"builtinTimeoutSeconds": 2.5}})
    assert profile.tools.builtin_timeout_seconds == 2.5
    assert Profile.default().tools.builtin_timeout_seconds == 30.0
