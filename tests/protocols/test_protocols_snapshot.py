"""The snapshot's render/check choices (Gemini's schema field, strict modes) and the embedded
default profile passing its own `toolbench snapshot --check`."""

from __future__ import annotations

import json

import pytest
from protocol_sdk import validate_tools

from toolbench import Profile, Workbench
from toolbench.cli import main
from toolbench.protocols import PROTOCOLS


def test_the_default_profile_passes_its_own_check_for_every_provider(capsys):
    """Nothing a provider would refuse and nothing render cannot repair, for all four."""
    code = main(["snapshot", "--check"])
    problems = json.loads(capsys.readouterr().out)
    assert code == 0
    unrepaired = [(p["protocol"], p["call_name"], p["rule"], p["path"]) for p in problems if not p["repaired"]]
    assert unrepaired == []
    assert {p["protocol"] for p in problems} <= set(PROTOCOLS)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("schema", ["json-schema", "openapi"])
def test_the_default_profile_renders_what_each_sdk_takes(toolbench_bench, protocol, schema):
    validate_tools(protocol, toolbench_bench.invocation().snapshot.render(protocol, schema=schema))


@pytest.mark.parametrize("scene", ["chat", "session"])
def test_the_default_profiles_tool_list_is_the_golden_one(toolbench_bench, assert_golden, scene):
    """What a model is shown (names, descriptions, schemas) changes only on purpose: a change
    fails with the diff; `pytest --toolbench-update-golden` accepts it (tests/protocols/golden/)."""
    assert_golden(toolbench_bench.invocation(scene).snapshot, f"default-{scene}.json")


def test_the_cli_takes_geminis_schema_choice(capsys):
    assert main(["snapshot", "--protocol", "gemini", "--gemini-schema", "openapi"]) == 0
    [tool] = json.loads(capsys.readouterr().out)
    assert all("parameters" in d or "parametersJsonSchema" not in d for d in tool["functionDeclarations"])
    assert main(["snapshot", "--protocol", "gemini"]) == 0
    [tool] = json.loads(capsys.readouterr().out)
    assert any("parametersJsonSchema" in d for d in tool["functionDeclarations"])
    assert not any("parameters" in d for d in tool["functionDeclarations"])


def test_gemini_openapi_mode_still_reports_the_free_form_objects_it_cannot_send(capsys):
    code = main(["snapshot", "--check", "--gemini-schema", "openapi"])
    problems = json.loads(capsys.readouterr().out)
    assert code == 1  # agent.delegate's context and expectedOutput are free-form objects
    assert {(p["call_name"], p["rule"]) for p in problems if p["fatal"] and not p["repaired"]} == {
        ("agent_delegate", "schema.empty_object")}


def test_the_profile_asks_for_anthropic_strict_tools(tmp_path):
    profile = Profile.default().edit(allow=["builtin:dice.roll"], anthropic_strict=True)
    assert Profile.parse({"tools": {"anthropicStrict": True}}).tools.anthropic_strict  # camelCase in files
    with Workbench(tmp_path / "ws", profile=profile) as bench:
        snapshot = bench.invocation().snapshot
        [tool] = snapshot.render("anthropic")
        assert tool["strict"] is True
        assert "strict" not in snapshot.render("openai")[0]["function"]  # OpenAI strict has its own switch
        assert "strict" not in snapshot.render("anthropic", strict=False)[0]
        assert snapshot.render("anthropic", defer_loading=["dice_roll"])[0]["defer_loading"] is True
        assert [p.rule for p in snapshot.check(["anthropic"])] == []
        validate_tools("anthropic", snapshot.render("anthropic"))
        again = type(snapshot).from_json(json.loads(json.dumps(snapshot.to_json())))
        assert again.anthropic_strict is True  # frozen with the snapshot, reopened with it
