"""Every builtin has a time limit (`tools.builtinTimeoutSeconds`): a call whose own work runs
past it ends with `tool.timeout`, touches nothing, and the invocation goes on. Run in a child with a
deadline, so a regression fails instead of stalling the suite."""

from __future__ import annotations

from tests.deadline import run_with_deadline

# A search over 300 files: far quicker than a second, so the limit here is far below that; the
# walk checks it between folders and files and stops. (The edit passes check it too, between
# steps of their loops: tests/tools/workspace/test_edit_passes.py.)
SLOW_CALL = """
import time
from toolbench import Profile, Workbench
profile = Profile.default().edit(tools={"builtin_timeout_seconds": 0.000001})
with Workbench(None, profile) as bench:
    for i in range(300):
        (bench.workspace / "work" / f"f{i:03}.txt").write_text("hay\\n" * 50)
    text = (bench.workspace / "work" / "f000.txt").read_text()
    inv = bench.invocation("session")
    started = time.monotonic()
    result = inv.call("workspace_search_files", {"query": "needle", "path": "work"})
    report({"code": result.error_code, "elapsed": time.monotonic() - started,
            "untouched": (bench.workspace / "work" / "f000.txt").read_text() == text,
            "next": inv.call("dice_roll", {"formula": "d6"}).error_code})
"""


def test_a_builtin_past_its_time_limit_ends_with_tool_timeout():
    outcome = run_with_deadline(SLOW_CALL, deadline=60)
    assert outcome["code"] == "tool.timeout"
    assert outcome["elapsed"] < 5
    assert outcome["untouched"]
    assert outcome["next"] is None


def test_the_limit_is_a_profile_setting_in_camel_case():
    from toolbench import Profile

    profile = Profile.parse({"tools": {"builtinTimeoutSeconds": 2.5}})
    assert profile.tools.builtin_timeout_seconds == 2.5
    assert Profile.default().tools.builtin_timeout_seconds == 30.0
