"""`toolbench check` reports what each server lists besides tools: the counts of resources,
resource templates and prompts (null where the capability is not declared) and their problems
(a listing that fails, items listed twice or with broken arguments or templates), in text and
JSON, as notes that leave the exit status to the tools. Each run is a child process under a
deadline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from node_servers import node_bin
from test_cli_check import cli, fault_server


def everything() -> dict[str, Any]:
    return {"command": node_bin("mcp-server-everything")}


def test_the_reference_server_counts_its_resources_templates_and_prompts(tmp_path: Path) -> None:
    servers = {"everything": everything(), "plain": fault_server("chatty")}
    code, out, err = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--format", "json")
    report = json.loads(out)
    assert (code, report["exit_code"], err) == (0, 0, "")
    features = {s["name"]: s["features"] for s in report["servers"]}
    assert features["everything"] == {"resources": 7, "resource_templates": 2, "prompts": 4, "problems": []}
    assert features["plain"] == {"resources": None, "resource_templates": None, "prompts": None, "problems": []}
    code, out, _ = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG")
    assert code == 0
    assert "\n  resources: 7, resource templates: 2, prompts: 4\n" in out
    assert "not declared" not in out  # a server with tools alone says nothing of the rest


def test_failed_listings_and_bad_items_are_notes_that_leave_the_exit_status_alone(tmp_path: Path) -> None:
    servers = {"bad": fault_server("bad_features")}
    code, out, err = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--format", "json")
    report = json.loads(out)
    assert (code, report["exit_code"], err) == (0, 0, "")
    assert report["summary"] == {"servers": 1, "unreachable": 0, "fatal": 0, "repaired": 0, "smoke_failed": 0}
    [server] = report["servers"]
    features = server["features"]
    assert (features["resources"], features["resource_templates"], features["prompts"]) == (None, 2, 3)
    found = [(p["feature"], p["subject"], p["rule"]) for p in features["problems"]]
    assert found == [("resources", None, "mcp.request_failed"),
                     ("resource_templates", "demo://x/{id", "mcp.listed_item_invalid"),
                     ("prompts", "greet", "mcp.listed_item_invalid"),
                     ("prompts", "args", "mcp.listed_item_invalid")]
    assert "-32603" in features["problems"][0]["message"]
    assert not [p for p in server["problems"] if p["fatal"]]  # the tools' problems are untouched
    code, out, _ = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG")
    assert code == 0
    assert "  resources: failed, resource templates: 2, prompts: 3\n" in out
    assert "  note resources (listing): mcp.request_failed: MCP server `bad` answered resources/list with error " \
           "-32603" in out
    assert "  note prompts greet: mcp.listed_item_invalid: the name 'greet' is listed twice" in out
    assert out.endswith("1 server(s), 0 unreachable, 0 fatal problem(s), 0 repaired, 0 smoke call(s) failed: "
                        "exit 0\n")


def test_a_prompt_argument_without_a_name_fails_the_prompt_listing_with_where(tmp_path: Path) -> None:
    bad = fault_server("bad_features")
    bad["args"].append("unnamed-argument")
    code, out, _ = cli(tmp_path, {"bad": bad}, "check", "--mcp-config", "CONFIG", "--format", "json")
    features = json.loads(out)["servers"][0]["features"]
    assert (code, features["prompts"]) == (0, None)
    [problem] = [p for p in features["problems"] if p["feature"] == "prompts"]
    assert (problem["subject"], problem["rule"]) == (None, "mcp.request_failed")
    assert "prompts/list" in problem["message"] and "prompts.1.arguments.0.name" in problem["message"]


def test_an_unreachable_server_has_no_feature_counts_and_keeps_exit_2(tmp_path: Path) -> None:
    servers = {"gone": {"command": str(tmp_path / "no-such-server")}, "bad": fault_server("bad_features")}
    code, out, _ = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--format", "json")
    report = json.loads(out)
    assert (code, report["exit_code"]) == (2, 2)
    gone = next(s for s in report["servers"] if s["name"] == "gone")
    assert gone["features"] == {"resources": None, "resource_templates": None, "prompts": None, "problems": []}
    assert next(s for s in report["servers"] if s["name"] == "bad")["features"]["prompts"] == 3


def test_the_json_help_describes_the_features_block() -> None:
    from toolbench.cli_check import JSON_HELP

    assert '"features": {"resources", "resource_templates", "prompts",' in JSON_HELP
