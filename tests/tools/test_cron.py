"""`cron.*` tools and `bench.cron.run_due(now)` (LiveAgent §7.1, §9)."""

from __future__ import annotations

from datetime import datetime

import pytest

from toolbench import Profile

ALL = ["builtin:cron.create", "builtin:cron.read", "builtin:cron.update", "builtin:cron.delete",
       "builtin:cron.list_logs"]
T0 = datetime(2026, 3, 10, 9, 0, 0)


@pytest.fixture
def bench(make_bench):
    return make_bench(profile=Profile.default().edit(allow=ALL))


@pytest.fixture
def inv(bench):
    return bench.invocation()


def shell_task(**fields):
    return {"name": "hello", "cron": "0 0 9 * * *", "type": "shell", "script": "echo hi >> /work/log.txt; echo hi",
            **fields}


@pytest.mark.parametrize("expr", ["0 0 9 * * *", "*/10 * * * * *", "0 */5 * * * 1-5", "30 15 8 1 1 *",
                                  " 0  0 9 * * MON "])
def test_six_field_expressions_are_accepted(inv, expr):
    r = inv.call("cron_create", shell_task(cron=expr))
    assert not r.is_error, r.content
    assert r.structured["task"]["cron"] == " ".join(expr.split())


@pytest.mark.parametrize("expr", ["* * * * *", "0 0 9 * * * *", "61 * * * * *", "0 0 25 * * *", "bad", ""])
def test_other_expressions_are_refused(inv, expr):
    assert inv.call("cron_create", shell_task(cron=expr)).error_code == "cron.expression_invalid"


@pytest.mark.parametrize(("fields", "code"), [
    ({"type": "http"}, "tool.invalid_arguments"),
    ({"script": None}, "cron.task_invalid"),
    ({"prompt": "also"}, "cron.task_invalid"),
    ({"timeout_seconds": 0}, "tool.invalid_arguments"),
    ({"timeout_seconds": 601}, "tool.invalid_arguments"),
    ({"remaining_executions": -1}, "tool.invalid_arguments"),
    ({"name": " "}, "cron.task_invalid"),
    ({"workdir": "work"}, "cron.task_invalid"),
    ({"url": "http://x"}, "tool.invalid_arguments"),
])
def test_create_refusals(inv, fields, code):
    args = {k: v for k, v in (shell_task() | fields).items() if v is not None}
    assert inv.call("cron_create", args).error_code == code


def test_create_defaults_read_update_delete(inv):
    r = inv.call("cron_create", shell_task())
    task = r.structured["task"]
    assert (task["id"], task["enabled"], task["timeout_seconds"], task["remaining_executions"], task["workdir"]) \
        == ("task-0001", True, 300, None, "/")
    assert r.content == ("Created cron task [task-0001] hello — `0 0 9 * * *` shell, enabled, runs 0, "
                         "remaining unlimited")
    inv.call("cron_create", {"name": "remind", "cron": "0 0 18 * * *", "type": "prompt", "prompt": "Stand up"})
    listing = inv.call("cron_read", {})
    assert listing.content.splitlines()[0] == "2 cron tasks"
    assert "Stand up" in inv.call("cron_read", {"task_id": "task-0002"}).content
    up = inv.call("cron_update", {"task_id": "task-0001", "enabled": False, "cron": "0 30 9 * * *"})
    assert not up.is_error and up.structured["task"]["enabled"] is False
    assert inv.call("cron_update", {"task_id": "task-0001", "cron": "x"}).error_code == "cron.expression_invalid"
    assert inv.call("cron_update", {"task_id": "task-0001"}).error_code == "tool.invalid_arguments"
    switched = inv.call("cron_update", {"task_id": "task-0001", "type": "prompt", "prompt": "Now a prompt"})
    assert switched.structured["task"]["script"] is None
    assert inv.call("cron_update", {"task_id": "task-9"}).error_code == "cron.task_not_found"
    assert not inv.call("cron_delete", {"task_id": "task-0001"}).is_error
    assert inv.call("cron_read", {"task_id": "task-0001"}).error_code == "cron.task_not_found"
    assert inv.call("cron_delete", {"task_id": "task-0001"}).error_code == "cron.task_not_found"
    assert inv.call("cron_list_logs", {}).error_code == "tool.invalid_arguments"


def test_run_due_runs_shell_tasks_on_their_schedule(bench, inv):
    inv.call("cron_create", shell_task())
    assert bench.cron.run_due(datetime(2026, 3, 10, 8, 59, 59)) == []
    runs = bench.cron.run_due(T0)
    assert [(r.task_id, r.status, r.exit_code, r.output) for r in runs] == [("task-0001", "ok", 0, "hi\n")]
    assert (bench.workspace / "work" / "log.txt").read_text() == "hi\n"
    assert bench.cron.run_due(T0) == []  # the same moment again runs nothing
    assert bench.cron.run_due(datetime(2026, 3, 10, 23, 0)) == []
    # Three missed days are one run.
    assert len(bench.cron.run_due(datetime(2026, 3, 13, 12, 0))) == 1
    assert (bench.workspace / "work" / "log.txt").read_text() == "hi\n" * 2


def test_a_new_task_runs_only_when_now_is_a_fire_time(bench, inv):
    inv.call("cron_create", shell_task())
    assert bench.cron.run_due(datetime(2026, 3, 10, 10, 0)) == []
    assert len(bench.cron.run_due(datetime(2026, 3, 11, 9, 0))) == 1


def test_prompt_tasks_are_recorded_as_due_prompts(bench, inv):
    inv.call("cron_create", {"name": "remind", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "Stand up"})
    [run] = bench.cron.run_due(T0)
    assert (run.status, run.prompt) == ("prompt_due", "Stand up")


def test_remaining_executions_count_down_and_disabled_tasks_wait(bench, inv):
    """The last run disables the task (upstream record_completed_run_decrements_and_disables_at_zero)."""
    inv.call("cron_create", shell_task(cron="0 * * * * *", remaining_executions=2))
    inv.call("cron_create", shell_task(name="off", cron="0 * * * * *", enabled=False))
    assert len(bench.cron.run_due(T0)) == 1
    assert len(bench.cron.run_due(datetime(2026, 3, 10, 9, 1))) == 1
    assert bench.cron.run_due(datetime(2026, 3, 10, 9, 2)) == []
    task = inv.call("cron_read", {"task_id": "task-0001"}).structured["task"]
    assert (task["remaining_executions"], task["runs"], task["enabled"]) == (0, 2, False)


def test_a_task_with_no_runs_left_is_disabled(inv):
    """upstream validate_cron_task: enabled = enabled && remainingExecutions != 0."""
    created = inv.call("cron_create", shell_task(enabled=True, remaining_executions=0)).structured["task"]
    assert (created["enabled"], created["remaining_executions"]) == (False, 0)
    again = inv.call("cron_update", {"task_id": "task-0001", "enabled": True}).structured["task"]
    assert again["enabled"] is False
    topped = inv.call("cron_update", {"task_id": "task-0001", "enabled": True, "remaining_executions": 1})
    assert topped.structured["task"]["enabled"] is True


@pytest.mark.parametrize(("workdir", "stored"), [
    ("  /work/pinned  ", "/work/pinned"),  # upstream cron_apply_persists_and_trims_workdir
    ("", "/"), ("   ", "/"),  # empty is the default folder (upstream: the current workspace)
])
def test_workdir_is_trimmed(inv, workdir, stored):
    assert inv.call("cron_create", shell_task(workdir=workdir)).structured["task"]["workdir"] == stored


def test_an_update_with_an_empty_workdir_clears_the_pin(inv):
    """upstream cron_apply_update_empty_workdir_clears_pin."""
    inv.call("cron_create", shell_task(workdir="/work"))
    kept = inv.call("cron_update", {"task_id": "task-0001", "name": "Renamed"}).structured["task"]
    assert kept["workdir"] == "/work"
    assert inv.call("cron_update", {"task_id": "task-0001", "workdir": " "}).structured["task"]["workdir"] == "/"


def test_failures_and_timeouts_are_logged(bench, inv):
    inv.call("cron_create", shell_task(script="echo oops >&2; exit 3"))
    inv.call("cron_create", shell_task(name="slow", script="sleep 5", timeout_seconds=1))
    runs = bench.cron.run_due(T0)
    assert [(r.status, r.exit_code) for r in runs] == [("failed", 3), ("timed_out", None)]
    assert "oops" in runs[0].output


def test_list_logs_newest_first_cut_to_600_chars(bench, inv):
    inv.call("cron_create", shell_task(cron="0 * * * * *", script="printf 'x%.0s' $(seq 1 700)"))
    for minute in range(3):
        bench.cron.run_due(datetime(2026, 3, 10, 9, minute))
    r = inv.call("cron_list_logs", {"task_id": "task-0001"})
    logs = r.structured["logs"]
    assert [e["at"] for e in logs] == [f"2026-03-10T09:0{m}:00" for m in (2, 1, 0)]
    assert len(logs[0]["output"]) == 601 and logs[0]["output_truncated"] is True
    assert len(inv.call("cron_list_logs", {"task_id": "task-0001", "limit": 1}).structured["logs"]) == 1
    assert inv.call("cron_list_logs", {"task_id": "task-0001", "limit": 501}).error_code == "tool.invalid_arguments"


def test_tasks_live_in_the_runtime_folder(bench, inv):
    inv.call("cron_create", shell_task())
    assert (bench.workspace / ".toolbench" / "cron" / "tasks.json").is_file()


def test_a_re_enabled_task_does_not_fire_for_times_missed_while_disabled() -> None:
    from datetime import datetime

    from toolbench import Profile, Workbench

    profile = Profile.default().edit(allow=["builtin:cron.create", "builtin:cron.update"])
    with Workbench(profile=profile, seed=1) as bench:
        inv = bench.invocation("session", id="inv_reenable")
        inv.call("cron_create", {"name": "r", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "p"})
        assert len(bench.cron.run_due(datetime(2026, 3, 10, 9, 0))) == 1
        inv.call("cron_update", {"task_id": "task-0001", "enabled": False})
        assert bench.cron.run_due(datetime(2026, 3, 11, 9, 0)) == []
        inv.call("cron_update", {"task_id": "task-0001", "enabled": True})
        assert bench.cron.run_due(datetime(2026, 3, 11, 12, 0)) == []
        assert len(bench.cron.run_due(datetime(2026, 3, 12, 9, 0))) == 1
