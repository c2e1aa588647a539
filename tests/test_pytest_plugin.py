"""The pytest plugin as a user's suite meets it: run inside pytester, with the plugin named by
`-p` (the same module the `pytest11` entry point names, so an installed entry point is no clash)."""

from __future__ import annotations

import json
import os
import tomllib

import pytest
from deadline import ROOT

from toolbench import Workbench
from toolbench.pytest_plugin import UPDATE_OPTION, assert_code

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "toolbench.pytest_plugin", "-p", "no:cacheprovider")

GREET = '''
DESCRIPTION = {description!r}

def test_tools(toolbench_bench, assert_golden):
    def greet(name: str{extra}) -> str:
        return "hi " + name
    tool = toolbench_bench.register_tool("demo", greet, name="greet", description=DESCRIPTION)
    toolbench_bench.enable(tool)
    assert_golden(toolbench_bench.invocation("chat").snapshot, "tools.json")
'''


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*PLUGIN, *args)


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"toolbench.pytest_plugin": "toolbench.pytest_plugin"}


def test_the_bench_is_on_tmp_path_with_the_default_profile_and_closed_after(pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        from toolbench import Profile
        HELD = []

        def test_open(toolbench_bench, tmp_path):
            HELD.append(toolbench_bench)
            assert toolbench_bench.workspace == tmp_path.resolve()
            assert toolbench_bench.profile == Profile.default()
            assert not toolbench_bench.closed

        def test_closed_after():
            assert HELD[0].closed
    ''')
    run(pytester).assert_outcomes(passed=2)


def test_a_missing_golden_file_fails_saying_how_to_write_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(GREET.format(description="Say hello.", extra=""))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*golden*tools.json is missing*{UPDATE_OPTION}*"])
    assert not (pytester.path / "golden").exists()


def test_update_writes_the_golden_form_and_a_later_run_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(GREET.format(description="Say hello.", extra=""))
    run(pytester, UPDATE_OPTION).assert_outcomes(passed=1)
    written = json.loads((pytester.path / "golden" / "tools.json").read_text(encoding="utf-8"))
    def greet(name: str) -> str:
        return name

    with Workbench(pytester.path / "ws") as bench:
        bench.enable(bench.register_tool("demo", greet, name="greet", description="Say hello."))
        greet = [e for e in bench.invocation().snapshot.golden() if e.get("tool_id") == "extension/demo:greet"]
    assert [e for e in written if e.get("tool_id") == "extension/demo:greet"] == greet
    run(pytester).assert_outcomes(passed=1)


def test_a_changed_tool_fails_with_the_snapshot_diff(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(GREET.format(description="Say hello.", extra=""))
    run(pytester, UPDATE_OPTION).assert_outcomes(passed=1)
    pytester.makepyfile(GREET.format(description="Say hello, loudly.", extra=", loud: bool = False"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*tool list differs from golden file*tools.json*",
                                 "~ description of `*greet` changed",
                                 "~ schema of `*greet` changed at /properties/loud",
                                 "--- golden", "+++ current",
                                 '-    "description": "Say hello.",',
                                 '+    "description": "Say hello, loudly.",',
                                 f"*{UPDATE_OPTION}*"])


def test_an_added_tool_reads_as_added(pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        def test_tools(toolbench_bench, assert_golden):
            assert_golden(toolbench_bench.invocation("chat").snapshot, "tools.json")
    ''')
    run(pytester, UPDATE_OPTION).assert_outcomes(passed=1)
    pytester.makepyfile(GREET.format(description="Say hello.", extra=""))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["+ added `*greet`"])


def test_a_golden_name_must_stay_under_golden(pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        def test_escape(toolbench_bench, assert_golden):
            assert_golden(toolbench_bench.invocation("chat").snapshot, "../tools.json")
    ''')
    result = run(pytester, UPDATE_OPTION)
    assert result.ret != 0
    assert not (pytester.path / "tools.json").exists()  # golden/../tools.json would land here
    result.stdout.fnmatch_lines(["*must be a relative path under golden/*"])


def test_a_golden_file_of_another_shape_fails_with_the_hint_not_a_traceback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        def test_shape(toolbench_bench, assert_golden):
            assert_golden(toolbench_bench.invocation("chat").snapshot, "tools.json")
    ''')
    (pytester.path / "golden").mkdir()
    (pytester.path / "golden" / "tools.json").write_text('{"tools": []}')
    result = run(pytester)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*the tool list differs from golden file*", "*--toolbench-update-golden*"])
    assert "AttributeError" not in result.stdout.str() and "Traceback" not in result.stdout.str()


def test_toolbench_call_asserts_the_code(pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        from toolbench.pytest_plugin import assert_code

        def test_bad_arguments(toolbench_call):
            toolbench_call("dice_roll", '{"formula":', code="tool.invalid_arguments")

        def test_a_roll(toolbench_call):
            assert toolbench_call("dice_roll", {"formula": "2d6"}).structured["total"] >= 2

        def test_unknown_name(toolbench_call):
            toolbench_call("no_such_tool", code="model.unknown_tool_call")

        def test_a_turn_s_result(toolbench_bench):
            [result] = toolbench_bench.invocation().turn([("dice_roll", "not json")])
            assert_code(result, "tool.invalid_arguments")

        def test_expected_success(toolbench_call):
            toolbench_call("dice_roll", '{"formula":')
    ''')
    result = run(pytester)
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*expected no error, got tool.invalid_arguments*"])


def test_naming_the_plugin_twice_registers_it_once(pytester: pytest.Pytester) -> None:
    """A conftest's `pytest_plugins` beside `-p` (or the installed entry point) is no clash."""
    pytester.makeconftest('pytest_plugins = ["toolbench.pytest_plugin"]')
    pytester.makepyfile('''
        def test_it(toolbench_call):
            toolbench_call("dice_roll", {"formula": "1d4"})
    ''')
    run(pytester).assert_outcomes(passed=1)


def test_assert_code_passes_the_result_through(toolbench_bench: Workbench) -> None:
    result = toolbench_bench.invocation().call("dice_roll", {"formula": "1d6"})
    assert assert_code(result, None) is result
    with pytest.raises(pytest.fail.Exception):
        assert_code(result, "tool.invalid_arguments")


PLAIN = '''
def test_tools(toolbench_bench, assert_golden):
    assert_golden(toolbench_bench.invocation("chat").snapshot, "{name}")
'''


@pytest.mark.parametrize("update", [True, False])
def test_a_link_at_the_golden_file_is_refused_and_its_target_kept(pytester: pytest.Pytester, update: bool) -> None:
    victim = pytester.path / "victim.txt"
    victim.write_text("keep me\n")
    (pytester.path / "golden").mkdir()
    (pytester.path / "golden" / "tools.json").symlink_to(victim)
    pytester.makepyfile(PLAIN.format(name="tools.json"))
    result = run(pytester, *([UPDATE_OPTION] if update else []))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golden*tools.json is a link*"])
    assert victim.read_text() == "keep me\n"
    assert "keep me" not in result.stdout.str()  # nor is the target shown in a diff


def test_a_link_at_the_golden_folder_is_refused_and_nothing_written_through_it(pytester: pytest.Pytester) -> None:
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    (pytester.path / "golden").symlink_to(elsewhere)
    pytester.makepyfile(PLAIN.format(name="sub/tools.json"))
    result = run(pytester, UPDATE_OPTION)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golden is a link*"])
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_at_the_golden_file_is_refused_without_blocking(pytester: pytest.Pytester,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the child pytest imports this checkout's plugin
    (pytester.path / "golden").mkdir()
    os.mkfifo(pytester.path / "golden" / "tools.json")
    pytester.makepyfile(PLAIN.format(name="tools.json"))
    for args in ([UPDATE_OPTION], []):
        result = pytester.runpytest_subprocess(*PLUGIN, *args, timeout=60)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*golden*tools.json is not a regular file*"])
