"""The shell engine on bashkit: sandbox, limits, outcomes and the result layout."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from toolbench.core.errors import CODES, ToolbenchError, ToolError
from toolbench.core.shell_settings import ShellSettings
from toolbench.tools.base import StopSignal
from toolbench.tools.workspace.shell import SHELL_DESCRIPTION, SHELL_INPUT_SCHEMA, format_result, parse_shell_args
from toolbench.tools.workspace.shell_engine import (
    Mount,
    ShellOutcome,
    _Job,
    guest_path,
    run_shell,
    run_shell_blocking,
)
from toolbench.tools.workspace.shell_pool import _MAX_CONFIGS, _MAX_IDLE_PER_CONFIG, _Idle

WRITABLE = ("work", "tmp", "output")
READ_ONLY = ("tool-results", "skills")
BOUND = 15.0  # seconds: every call, even a runaway one, must be over well within this


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for name in (*WRITABLE, *READ_ONLY, "input"):
        (tmp_path / name).mkdir()
    (tmp_path / "input" / "prompt_snapshot.json").write_text('{"secret": true}\n')
    (tmp_path / "tool-results" / "r1.txt").write_text("stored result\n")
    (tmp_path / "skills" / "style").mkdir()
    (tmp_path / "skills" / "style" / "SKILL.md").write_text("# style\n")
    return tmp_path


@pytest.fixture
def mounts(ws: Path) -> list[Mount]:
    return [Mount(ws / n, f"/{n}", True) for n in WRITABLE] + [Mount(ws / n, f"/{n}", False) for n in READ_ONLY]


@pytest.fixture(params=["async", "blocking"])
def sh(mounts: list[Mount], request: pytest.FixtureRequest):
    """Run one command to its outcome, in bounded time, through each entry point: `run_shell`
    on an event loop and `run_shell_blocking` in this thread (cancelled from a timer thread)."""

    def run(command: str, *, workdir: str = "/", cancel_after: float | None = None, **limits: Any) -> ShellOutcome:
        async def go() -> ShellOutcome:
            event = asyncio.Event()
            if cancel_after is not None:
                asyncio.get_running_loop().call_later(cancel_after, event.set)
            return await run_shell(
                command, workdir=workdir, mounts=mounts, settings=ShellSettings(**limits), cancel=event
            )

        def block() -> ShellOutcome:
            stop = StopSignal()
            timer = threading.Timer(cancel_after, stop.set) if cancel_after is not None else None
            if timer is not None:
                timer.start()
            try:
                return run_shell_blocking(
                    command, workdir=workdir, mounts=mounts, settings=ShellSettings(**limits), stop=stop
                )
            finally:
                if timer is not None:
                    timer.cancel()

        started = time.monotonic()
        outcome = asyncio.run(go()) if request.param == "async" else block()
        assert time.monotonic() - started < BOUND
        return outcome

    return run


# ---- table 9.10: the contract cases that need no runtime ----


def test_cp_from_invisible_input_fails_and_creates_nothing(sh, ws: Path) -> None:
    outcome = sh("cp /input/prompt_snapshot.json /work/leaked.json")
    assert outcome.status == "exited" and outcome.exit_code != 0
    assert format_result(outcome)[2] == "workspace.shell_exit"
    assert not (ws / "work" / "leaked.json").exists()


def test_python_cannot_write_read_only_tool_results(sh, ws: Path) -> None:
    outcome = sh("""python3 -c 'open("/tool-results/forbidden.txt", "w").write("x")'""")
    assert outcome.status == "exited" and outcome.exit_code == 1
    assert not (ws / "tool-results" / "forbidden.txt").exists()


@pytest.mark.parametrize(
    "command",
    [
        "echo x > /tool-results/new.txt",
        "echo x >> /tool-results/r1.txt",
        "rm /tool-results/r1.txt",
        "mkdir /skills/new",
        "mv /skills/style/SKILL.md /work/SKILL.md",
        "echo x > /skills/style/SKILL.md",
    ],
)
def test_read_only_roots_refuse_every_write(sh, ws: Path, command: str) -> None:
    outcome = sh(command)
    assert outcome.status == "exited" and outcome.exit_code != 0
    assert (ws / "tool-results" / "r1.txt").read_text() == "stored result\n"
    assert (ws / "skills" / "style" / "SKILL.md").read_text() == "# style\n"
    assert sorted(p.name for p in (ws / "tool-results").iterdir()) == ["r1.txt"]
    assert not (ws / "skills" / "new").exists() and not (ws / "work" / "SKILL.md").exists()


def test_pipeline_creates_moves_and_removes_files(sh, ws: Path) -> None:
    script = "\n".join(
        [
            "mkdir -p /work/drafts",
            """printf '{"text":"shell draft"}' > /work/drafts/in.json""",
            "jq -r .text /work/drafts/in.json > /work/drafts/draft.md",
            "cp /work/drafts/draft.md /output/Draft.md",
            "mv /output/Draft.md /output/Moved.MD",
            "rm /work/drafts/in.json",
            "cat /output/Moved.MD",
        ]
    )
    outcome = sh(script)
    assert format_result(outcome) == ("Exit code: 0\nshell draft\n", {"exitCode": 0, "outputTruncated": False}, None)
    moved = (ws / "output" / "Moved.MD").read_bytes()
    assert hashlib.sha256(moved).hexdigest() == hashlib.sha256(b"shell draft\n").hexdigest()
    assert (ws / "work" / "drafts" / "draft.md").read_text() == "shell draft\n"
    assert not (ws / "work" / "drafts" / "in.json").exists()
    assert not (ws / "output" / "Draft.md").exists()
    assert outcome.may_have_written


def test_python_write_then_raise_exits_1_and_the_write_persists(sh, ws: Path) -> None:
    script = 'from pathlib import Path\nPath("/output/partial.md").write_text("kept\\n")\nraise ValueError("boom")'
    outcome = sh(f"python3 -c '{script}'")
    content, structured, code = format_result(outcome)
    assert (outcome.status, outcome.exit_code, code) == ("exited", 1, "workspace.shell_exit")
    assert structured == {"exitCode": 1, "outputTruncated": False}
    assert content.startswith("Exit code: 1\nTraceback") and "ValueError: boom" in content
    assert (ws / "output" / "partial.md").read_text() == "kept\n"


def test_python_append_in_workdir_changes_the_file_on_disk(sh, ws: Path) -> None:
    # The apply_patch half of this 9.10 case is the file tools' part: their read state must be
    # checked against the disk, since nothing tells them the shell wrote.
    (ws / "output" / "notes.md").write_text("first\n")
    outcome = sh("""python3 -c 'open("notes.md", "a").write("appended\\n")'""", workdir="/output")
    assert outcome.status == "exited" and outcome.exit_code == 0
    assert (ws / "output" / "notes.md").read_text() == "first\nappended\n"
    assert outcome.may_have_written


def test_cancel_mid_run_keeps_the_completed_write(sh, ws: Path) -> None:
    outcome = sh("echo 'cancelled shell write' > /output/c.md; python3 -c 'while True: pass'", cancel_after=0.5)
    assert outcome.status == "cancelled"
    content, structured, code = format_result(outcome)
    assert (content, code) == ("Command cancelled.", "workspace.shell_cancelled")
    assert structured == {"exitCode": None, "outputTruncated": False}
    assert (ws / "output" / "c.md").read_text() == "cancelled shell write\n"


def test_cancel_before_start_runs_nothing(mounts: list[Mount], ws: Path) -> None:
    async def go() -> ShellOutcome:
        event = asyncio.Event()
        event.set()
        return await run_shell("echo x > /work/x.txt", mounts=mounts, settings=ShellSettings(), cancel=event)

    assert asyncio.run(go()).status == "cancelled"
    assert not (ws / "work" / "x.txt").exists()


def test_cancel_during_a_long_builtin_returns_within_the_grace(sh, ws: Path) -> None:
    outcome = sh("sleep 30; echo late > /work/late.txt", cancel_after=0.3)
    assert outcome.status == "cancelled"
    assert not (ws / "work" / "late.txt").exists()


def test_blocking_cancel_before_start_runs_nothing(mounts: list[Mount], ws: Path) -> None:
    stop = StopSignal()
    stop.set()
    outcome = run_shell_blocking("echo x > /work/x.txt", mounts=mounts, settings=ShellSettings(), stop=stop)
    assert outcome.status == "cancelled"
    assert not (ws / "work" / "x.txt").exists()


def test_stop_signal_runs_its_callbacks_once_and_at_once_when_already_set() -> None:
    stop, seen = StopSignal(), []
    forget = stop.on_set(lambda: seen.append("kept"))
    stop.on_set(lambda: seen.append("forgotten"))()
    stop.set()
    stop.set()
    forget()  # after the set: harmless
    stop.on_set(lambda: seen.append("late"))
    assert stop.is_set() and seen == ["kept", "late"]


def test_caller_cancellation_propagates(mounts: list[Mount]) -> None:
    async def go() -> None:
        task = asyncio.ensure_future(
            run_shell("python3 -c 'while True: pass'", mounts=mounts, settings=ShellSettings(timeout_seconds=30))
        )
        asyncio.get_running_loop().call_later(0.3, task.cancel)
        await task

    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    assert time.monotonic() - started < BOUND


# ---- the sandbox ----


@pytest.mark.parametrize(
    "command", ["echo x > /loose.txt", "mkdir /newdir", "echo x > /home/user/f", "echo x > /input/p.json"]
)
def test_writes_outside_the_roots_fail(sh, ws: Path, command: str) -> None:
    outcome = sh(command)
    assert outcome.status == "exited" and outcome.exit_code != 0
    assert sorted(p.name for p in ws.iterdir()) == sorted([*WRITABLE, *READ_ONLY, "input"])
    assert (ws / "input" / "prompt_snapshot.json").read_text() == '{"secret": true}\n'


@pytest.mark.parametrize(
    "command",
    [
        "cat /etc/passwd",
        f"cat {Path(__file__).resolve()}",
        f"cat {Path.cwd().resolve() / 'pyproject.toml'}",
        """python3 -c 'print(open("/etc/hostname").read())'""",
        "ls /usr/bin/python3",
        "cat /proc/self/environ",
    ],
)
def test_host_files_are_not_readable(sh, command: str) -> None:
    outcome = sh(command)
    assert outcome.status == "exited" and outcome.exit_code != 0
    assert outcome.stdout == ""


@pytest.mark.parametrize(
    "command",
    [
        "cat /work/../../../etc/passwd",
        "cd /work && cat ../../../../etc/passwd",
        "cd /work/../.. && cat input/prompt_snapshot.json",
        "cat /../input/prompt_snapshot.json",
        """python3 -c 'print(open("/work/../../input/prompt_snapshot.json").read())'""",
    ],
)
def test_dotdot_stops_at_the_workspace_root(sh, command: str) -> None:
    outcome = sh(command)
    assert outcome.status == "exited" and outcome.exit_code != 0
    assert "secret" not in outcome.stdout and "root:" not in outcome.stdout


def test_symlinks_cannot_leave_a_root(sh, ws: Path) -> None:
    (ws / "work" / "hostlink").symlink_to("/etc")
    (ws / "work" / "inputlink").symlink_to(ws / "input")
    outcome = sh(
        "cat /work/hostlink/passwd; cat /work/inputlink/prompt_snapshot.json; "
        "ln -s ../input /work/up; cat /work/up/prompt_snapshot.json"
    )
    assert outcome.stdout == ""
    assert not (ws / "work" / "up").exists()


def test_the_root_shows_only_the_workspace_roots(sh) -> None:
    outcome = sh("ls /")
    # dev/ (null, zero, urandom) and home/ are bashkit's own virtual entries
    assert set(outcome.stdout.split()) == {*WRITABLE, *READ_ONLY, "dev", "home"}


def test_environment_is_home_and_nothing_of_the_host(sh, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBENCH_HOST_PROBE", "leaked")
    outcome = sh('echo "$HOME"; pwd; env')
    lines = outcome.stdout.splitlines()
    assert lines[:2] == ["/", "/"]
    assert "TOOLBENCH_HOST_PROBE" not in outcome.stdout


def test_network_is_off(sh) -> None:
    outcome = sh("curl -sS https://example.com")
    assert outcome.status == "exited" and outcome.exit_code != 0
    assert outcome.stdout == ""


@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ("""echo '{"a":[1,2,3]}' | jq -c '.a | add'""", "6\n"),
        ("""python3 -c 'import json; print(json.dumps({"n": sum([1, 2, 3])}))'""", '{"n": 6}\n'),
        ("""node -e 'console.log([1, 2, 3].reduce((a, b) => a + b))'""", "6\n"),
        ("""echo 'const n: number = 6; console.log(n)' > /tmp/s.ts && ts /tmp/s.ts""", "6\n"),
    ],
)
def test_jq_python3_and_node_work(sh, command: str, stdout: str) -> None:
    outcome = sh(command)
    assert (outcome.status, outcome.exit_code, outcome.stdout) == ("exited", 0, stdout)


def test_every_call_gets_a_fresh_interpreter(sh, ws: Path) -> None:
    first = sh("export FOO=bar; BAZ=1; f() { echo f; }; alias ll='ls -l'; cd /work; echo kept > /work/k.txt")
    assert first.exit_code == 0
    second = sh('echo "${FOO:-unset} ${BAZ:-unset}"; type f; pwd; cat /work/k.txt')
    assert second.stdout == "unset unset\n/\nkept\n"
    assert "not found" in second.stderr


def _run_job(mounts: list[Mount], command: str, settings: ShellSettings) -> tuple[ShellOutcome, Any]:
    """Run one job the way the workers do, hand its interpreter back; return it too."""
    job = _Job(command, "/", tuple(mounts), settings)
    outcome = job._run()
    bash = job._used
    job.release()
    return outcome, bash


def test_a_kept_interpreter_starts_the_next_call_fresh(mounts: list[Mount], ws: Path) -> None:
    settings = ShellSettings(timeout_seconds=7.0)  # a configuration of this test's own
    dirty = ("export FOO=bar; BAZ=1; f() { echo f; }; alias ll='ls -l'; set -o pipefail; shopt -s nullglob; "
             "trap 'echo trapped' EXIT; cd /work; echo kept > /work/k.txt")
    first, used = _run_job(mounts, dirty, settings)
    assert first.exit_code == 0
    second, reused = _run_job(
        mounts, 'echo "${FOO:-unset} ${BAZ:-unset}"; type f; alias; pwd; set -o | grep pipefail; shopt nullglob; '
        "cat /work/k.txt", settings)
    assert reused is used  # the same interpreter, reset
    assert second.stdout == "unset unset\n/\npipefail       \toff\nnullglob       \toff\nkept\n"
    assert "not found" in second.stderr


def test_a_cancelled_interpreter_runs_the_next_call(mounts: list[Mount]) -> None:
    settings = ShellSettings(timeout_seconds=8.0)
    job = _Job("sleep 0.2; echo late", "/", tuple(mounts), settings)
    threading.Timer(0.05, job.stop).start()
    assert job._run().status == "cancelled"
    used = job._used
    job.release()
    job.stop()  # a late stop reaches nobody: the interpreter is no longer this job's
    outcome, reused = _run_job(mounts, "echo on", settings)
    assert reused is used and (outcome.status, outcome.stdout) == ("exited", "on\n")


class _FakeBash:
    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.resets = 0

    def reset(self) -> None:
        if self.fails:
            raise RuntimeError("cannot reset")
        self.resets += 1


def test_idle_interpreters_are_reset_bounded_and_dropped_when_reset_fails(mounts: list[Mount]) -> None:
    idle = _Idle()
    config = (tuple(mounts), ShellSettings(), "/", ())
    kept = [_FakeBash() for _ in range(_MAX_IDLE_PER_CONFIG + 2)]
    for bash in kept:
        idle.give(config, [bash], keep=True)
    idle.give(config, [_FakeBash(fails=True)], keep=True)
    idle.give(config, [_FakeBash()], keep=False)  # one in doubt is never kept
    taken = [idle.take(config) for _ in range(_MAX_IDLE_PER_CONFIG)]
    assert all(isinstance(b, _FakeBash) and b.resets == 1 and not b.fails for b in taken)
    assert not isinstance(idle.take(config), _FakeBash)  # none left: a new interpreter is built
    for n in range(_MAX_CONFIGS + 1):  # the oldest configuration is dropped
        idle.give((tuple(mounts), ShellSettings(), f"/work/{n}", ()), [_FakeBash()], keep=True)
    assert not isinstance(idle.take((tuple(mounts), ShellSettings(), "/work/0", ())), _FakeBash)
    assert isinstance(idle.take((tuple(mounts), ShellSettings(), f"/work/{_MAX_CONFIGS}", ())), _FakeBash)


def test_the_command_cap_is_per_call(sh) -> None:
    # each call runs ~800 commands: 30 calls are far past one cap of 1,000, and every one works
    for _ in range(30):
        outcome = sh("for i in $(seq 1 400); do :; done; echo ok", max_commands=1_000)
        assert outcome.stdout == "ok\n"


# ---- limits ----


def test_a_runaway_bash_loop_stops_at_the_command_cap(sh) -> None:
    outcome = sh("while true; do :; done")
    assert outcome.status == "failed"
    assert format_result(outcome)[2] == "workspace.shell_failed"


@pytest.mark.parametrize("command", ["python3 -c 'while True: pass'", "sleep 100", "jq -n 'def f: f; f'"])
def test_a_command_past_its_time_limit_times_out(sh, command: str) -> None:
    started = time.monotonic()
    outcome = sh(command, timeout_seconds=1)
    assert time.monotonic() - started < 5
    assert outcome.status == "timed_out"
    assert format_result(outcome)[0].startswith("Command timed out.")


def test_writes_before_a_timeout_persist(sh, ws: Path) -> None:
    outcome = sh("echo early > /work/early.txt; sleep 100", timeout_seconds=1)
    assert outcome.status == "timed_out"
    assert (ws / "work" / "early.txt").read_text() == "early\n"


def test_output_is_truncated_at_the_limit(sh) -> None:
    outcome = sh("""python3 -c 'print("x" * 1_000_000)'""", max_stdout_chars=1_000)
    assert outcome.stdout == "x" * 1_000 and outcome.output_truncated
    content, structured, code = format_result(outcome)
    assert content == "Exit code: 0\n" + "x" * 1_000 + "\nOutput truncated."
    assert structured == {"exitCode": 0, "outputTruncated": True} and code is None


def test_stderr_is_truncated_at_its_own_limit(sh) -> None:
    outcome = sh("""python3 -c 'print("é" * 5_000)' >&2; echo fine""", max_stderr_chars=100)
    assert outcome.stdout == "fine\n" and outcome.stderr == "é" * 100 and outcome.output_truncated


def test_a_100_mb_print_is_contained(sh) -> None:
    outcome = sh("head -c 100000000 /dev/zero | tr '\\0' x")
    assert len(outcome.stdout) == ShellSettings().max_stdout_chars and outcome.output_truncated


def test_a_fork_bomb_is_contained(sh) -> None:
    outcome = sh(":(){ :|:& };:", timeout_seconds=1)
    assert outcome.status in {"timed_out", "failed"}


def test_a_too_long_command_fails_without_running(sh, ws: Path) -> None:
    command = "echo x > /work/ran.txt #" + "y" * 200
    outcome = sh(command, max_command_chars=100)
    assert outcome.status == "failed" and outcome.stderr
    assert not (ws / "work" / "ran.txt").exists()


@pytest.mark.parametrize(
    ("workdir", "pwd"),
    [("/", "/"), ("work", "/work"), ("/work/../output", "/output"), ("../../skills/style", "/skills/style"), ("", "/")],
)
def test_workdir_is_normalised_below_the_root(sh, workdir: str, pwd: str) -> None:
    assert sh("pwd", workdir=workdir).stdout == f"{pwd}\n"


@pytest.mark.parametrize("workdir", ["/missing", "/input", "/tool-results/r1.txt"])
def test_a_workdir_that_is_not_a_visible_directory_fails(sh, workdir: str) -> None:
    outcome = sh("pwd", workdir=workdir)
    assert outcome.status == "failed" and outcome.stderr


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat /work/a.txt | grep x | wc -l", False),
        ("ls -la / > /dev/null 2>&1; jq -n 1", False),
        ("echo x > /work/a.txt", True),
        ("sort -o /work/b /work/a", True),
        ("""python3 -c 'print(1)'""", True),
        ("f() { cat x; }; f", True),
        ("$CMD", True),
        ('echo x > "$OUT"', True),
    ],
)
def test_may_have_written_is_false_only_for_plain_readers(sh, command: str, expected: bool) -> None:
    assert sh(command).may_have_written is expected


# ---- configuration ----


def test_a_missing_host_directory_is_a_developer_error(ws: Path) -> None:
    mounts = [Mount(ws / "absent", "/absent", True)]
    with pytest.raises(ToolbenchError) as info:
        asyncio.run(run_shell("true", mounts=mounts, settings=ShellSettings()))
    assert info.value.code == "bench.misuse"


@pytest.mark.parametrize("guest", ["/", "work", "/work/", "/a/../b", "//work"])
def test_a_mount_needs_a_normalised_absolute_guest_path(tmp_path: Path, guest: str) -> None:
    with pytest.raises(ToolbenchError):
        Mount(tmp_path, guest, True)


def test_two_mounts_on_one_guest_path_are_refused(tmp_path: Path) -> None:
    mounts = [Mount(tmp_path, "/work", True), Mount(tmp_path, "/work", False)]
    with pytest.raises(ToolbenchError):
        asyncio.run(run_shell("true", mounts=mounts, settings=ShellSettings()))


def test_guest_path_is_idempotent() -> None:
    for raw in ["", "/", "a/b", "/a/../../b", "//x//y/", "./a/./b/.."]:
        once = guest_path(raw)
        assert once.startswith("/") and guest_path(once) == once


def test_settings_default_to_the_reference_limits() -> None:
    s = ShellSettings()
    assert (s.timeout_seconds, s.max_command_chars, s.max_stdout_chars, s.max_stderr_chars) == (
        30.0,
        131_072,
        131_072,
        131_072,
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"timeout_seconds": 0},
        {"timeout_seconds": -1.0},
        {"timeout_seconds": float("inf")},
        {"max_stdout_chars": 0},
        {"max_commands": True},
        {"max_command_chars": "10"},
        {"max_memory": 1},
    ],
)
def test_settings_refuse_bad_values(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ShellSettings(**bad)


def test_settings_are_frozen() -> None:
    with pytest.raises(ToolbenchError) as info:
        ShellSettings().timeout_seconds = 1  # type: ignore[misc]
    assert info.value.code == "bench.misuse"


# ---- arguments, schema, description ----


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"command": "ls"}, ("ls", "/")),
        ({"command": "  ls  ", "workdir": "work"}, ("  ls  ", "work")),
        ({"command": "", "workdir": None}, ("", "/")),
    ],
)
def test_parse_shell_args_accepts_the_closed_set(args: dict[str, Any], expected: tuple[str, str]) -> None:
    assert parse_shell_args(args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"command": "ls", "timeout": 5}, "`timeout` is not supported"),
        ({"cmd": "ls"}, "`cmd` is not supported"),
        ({}, "command must be a string"),
        ({"command": None}, "command must be a string"),
        ({"command": ["ls"]}, "command must be a string"),
        ({"command": "ls", "workdir": 3}, "workdir must be a string"),
    ],
)
def test_parse_shell_args_refuses_the_rest(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as info:
        parse_shell_args(args)
    assert info.value.code == "tool.invalid_arguments" and info.value.message == message


def test_the_schema_is_closed() -> None:
    assert SHELL_INPUT_SCHEMA["additionalProperties"] is False
    assert SHELL_INPUT_SCHEMA["required"] == ["command"]
    assert set(SHELL_INPUT_SCHEMA["properties"]) == {"command", "workdir"}


def test_the_description_names_roots_tools_and_limits() -> None:
    for text in ["/work, /tmp, /output", "/tool-results, /skills", "jq", "python3", "node", "30 s", "131,072"]:
        assert text in SHELL_DESCRIPTION


# ---- the result layout (reference §6.3) ----


def outcome(status: str, exit_code: int | None = None, stdout: str = "", stderr: str = "", cut: bool = False):
    return ShellOutcome(status, exit_code, stdout, stderr, cut)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("case", "content", "code"),
    [
        (outcome("exited", 0, "a\n"), "Exit code: 0\na\n", None),
        (outcome("exited", 0), "Exit code: 0", None),
        (outcome("exited", 2, "out", "err"), "Exit code: 2\nout\nstderr:\nerr", "workspace.shell_exit"),
        (outcome("exited", 2, "", "err\n"), "Exit code: 2\nerr\n", "workspace.shell_exit"),  # the label quirk
        (outcome("exited", 0, "a\n", "", True), "Exit code: 0\na\nOutput truncated.", None),
        (
            outcome("exited", 1, "a", "b", True),
            "Exit code: 1\na\nstderr:\nb\nOutput truncated.",
            "workspace.shell_exit",
        ),
        (outcome("timed_out", None, "", "limit"), "Command timed out.\nlimit", "workspace.shell_timeout"),
        (outcome("cancelled"), "Command cancelled.", "workspace.shell_cancelled"),
        (outcome("failed", None, "", "parse error"), "parse error", "workspace.shell_failed"),
        (outcome("failed", None, "part\n", "boom"), "part\nstderr:\nboom", "workspace.shell_failed"),
    ],
)
def test_format_result_lays_out_content_and_codes(case: ShellOutcome, content: str, code: str | None) -> None:
    text, structured, error_code = format_result(case)
    assert (text, error_code) == (content, code)
    assert structured == {"exitCode": case.exit_code, "outputTruncated": case.output_truncated}


def test_every_shell_code_is_listed() -> None:
    for status in ["exit", "timeout", "cancelled", "failed"]:
        assert f"workspace.shell_{status}" in CODES


@pytest.mark.parametrize(("status", "exit_code"), [("exited", None), ("failed", 1), ("cancelled", 0)])
def test_an_outcome_has_an_exit_code_exactly_when_it_exited(status: str, exit_code: int | None) -> None:
    with pytest.raises(ToolbenchError):
        outcome(status, exit_code)


# ---- changed files (`watch`) ----


def _watched(mounts: list[Mount], command: str, **kwargs: Any) -> ShellOutcome:
    async def go() -> ShellOutcome:
        return await run_shell(command, mounts=mounts, settings=ShellSettings(),
                               watch=lambda name: name.endswith(".md"), **kwargs)

    return asyncio.run(go())


def test_watch_lists_the_created_and_modified_watched_files(mounts: list[Mount], ws: Path) -> None:
    # Their order is by change time; within one command the times may tie, so it is not asserted.
    (ws / "work" / "same.md").write_text("unchanged\n")
    (ws / "output" / "edited.md").write_text("old\n")
    outcome = _watched(mounts, "echo a > /work/a.md; echo j > /work/j.json; echo new >> /output/edited.md")
    assert sorted(outcome.changed or ()) == ["/output/edited.md", "/work/a.md"]


def test_watch_sees_a_rename_and_ignores_read_only_roots(mounts: list[Mount], ws: Path) -> None:
    (ws / "work" / "old.md").write_text("moved\n")
    outcome = _watched(mounts, "mv /work/old.md /output/new.md; cat /tool-results/r1.txt")
    assert outcome.changed == ("/output/new.md",)


def test_watch_skips_the_scan_for_a_reading_command(mounts: list[Mount], ws: Path) -> None:
    outcome = _watched(mounts, "cat /tool-results/r1.txt | wc -l")
    assert not outcome.may_have_written and outcome.changed == ()


def test_without_watch_nothing_is_listed(sh, ws: Path) -> None:
    assert sh("echo a > /work/a.md").changed == ()
