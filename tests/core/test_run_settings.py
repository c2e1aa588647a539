"""`profile.run`: defaults from upstream's default profile, validation, the delegation rule."""

from __future__ import annotations

import pytest

from toolbench import Profile, ToolbenchError, ToolError
from toolbench.core.run_settings import RunSettings


def test_defaults_are_upstreams_default_writer():
    run = Profile.default().run
    assert (run.max_rounds, run.presentation, run.can_delegate) == (80, "foreground", True)
    assert run.finish_requires_commit
    assert not RunSettings(presentation="background").finish_requires_commit


@pytest.mark.parametrize("change", [{"max_rounds": 0}, {"max_rounds": True}, {"presentation": "sideways"},
                                    {"allowed_agents": []}, {"allowed_agents": ["no spaces"]}, {"bogus": 1}])
def test_bad_values_are_refused(change):
    # upstream: `agent.profile_max_rounds_invalid: tools.maxRounds must be > 0` (validation.rs)
    with pytest.raises(ToolbenchError) as info:
        Profile.default().edit(run=change)
    assert info.value.code == "agent.profile_invalid"


def test_camel_case_keys_are_read():
    run = Profile.parse({"schemaVersion": 2, "run": {"maxRounds": 3, "canHandoff": False,
                                                     "allowedAgents": ["a"]}}).run
    assert (run.max_rounds, run.can_handoff, run.allowed_agents) == (3, False, ("a",))


@pytest.mark.parametrize(("kind", "flag", "code"), [
    ("delegate", "can_delegate", "agent.delegation_policy_denied"),
    ("handoff", "can_handoff", "agent.handoff_policy_denied"),
])
def test_a_flag_off_refuses_with_upstreams_code(kind, flag, code):
    with pytest.raises(ToolError) as info:
        RunSettings(**{flag: False}).check_delegation(kind, ["general"])
    assert info.value.code == code and info.value.structured == {"rule": flag}


def test_allowed_agents_refuse_the_others_and_name_them():
    run = RunSettings(allowed_agents=("reviewer",))
    run.check_delegation("delegate", ["reviewer", "reviewer"])
    with pytest.raises(ToolError) as info:
        run.check_delegation("delegate", ["reviewer", "writer", "writer", "Reviewer"])
    assert info.value.code == "agent.delegation_policy_denied"
    assert info.value.structured["refused"] == ["writer", "Reviewer"]
    RunSettings().check_delegation("handoff", ["anyone"])
