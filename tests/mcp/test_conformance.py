"""The official MCP conformance suite's client scenarios, run against toolbench and the raw SDK.

`@modelcontextprotocol/conformance` (pinned in `tests/mcp/node`, with the Node 22 it needs from
npm's `node` package) starts each scenario's server and judges what a client does on the wire.
Both clients (`conformance/toolbench_client.py`, on toolbench's public API, and
`conformance/sdk_client.py`, on the raw `mcp` SDK) run every client scenario, concurrently; the
side-by-side table goes to the terminal summary. toolbench must pass every scenario the SDK passes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from node_servers import NODE_BIN, ensure_node_servers
from real_servers import CONFORMANCE_TABLE

HERE = Path(__file__).parent / "conformance"
CLIENTS = {"toolbench": HERE / "toolbench_client.py", "sdk": HERE / "sdk_client.py"}
IN_FLIGHT = 8  # scenarios at once: each is a node harness and a Python client
SCENARIO_SECONDS = 60


@dataclass(frozen=True)
class Outcome:
    passed: bool
    checks: int
    failures: tuple[str, ...]


def _harness() -> Path:
    ensure_node_servers()
    harness = NODE_BIN / "conformance"
    if not harness.exists() or not (NODE_BIN / "node").exists():
        pytest.fail(f"the conformance suite is not installed: run `npm ci --prefix {NODE_BIN.parent.parent}`")
    return harness


def _scenarios(harness: Path, env: dict[str, str]) -> list[str]:
    listing = subprocess.run([str(harness), "list"], capture_output=True, text=True, env=env, timeout=60, check=True)
    lines = listing.stdout.split("Client scenarios", 1)[1].splitlines()
    return [line.split("- ", 1)[1].split(" [")[0] for line in lines if line.strip().startswith("- ")]


def _run(harness: Path, env: dict[str, str], client: str, scenario: str, out: Path) -> Outcome:
    folder = out / client
    command = f"{sys.executable} {CLIENTS[client]}"
    try:
        done = subprocess.run(
            [str(harness), "client", "--command", command, "--scenario", scenario, "--timeout",
             str(SCENARIO_SECONDS * 1000), "-o", str(folder)],
            capture_output=True, text=True, env=env, timeout=SCENARIO_SECONDS + 30,
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, 0, ("the harness did not finish",))
    results = sorted(folder.rglob("checks.json"))  # the folder is this job's alone
    checks = json.loads(results[0].read_text()) if results else []
    failures = tuple(f"{c['id']}: {c.get('description', '')}" for c in checks
                     if c.get("status") in ("FAILURE", "WARNING"))
    return Outcome(done.returncode == 0, len(checks), failures)


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Outcome]]:
    harness = _harness()
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("TOOLBENCH_TOKEN_DIR", None)  # each client keeps its tokens in its own temporary folder
    scenarios = _scenarios(harness, env)
    out = tmp_path_factory.mktemp("conformance")
    jobs = [(client, scenario) for scenario in scenarios for client in CLIENTS]
    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        done = list(pool.map(lambda job: _run(harness, env, job[0], job[1], out / job[1].replace("/", "-")), jobs))
    table: dict[str, dict[str, Outcome]] = {}
    for (client, scenario), outcome in zip(jobs, done, strict=True):
        table.setdefault(scenario, {})[client] = outcome
    request.config.stash[CONFORMANCE_TABLE] = _table(table)
    shutil.rmtree(out, ignore_errors=True)
    return table


def _table(table: dict[str, dict[str, Outcome]]) -> str:
    width = max(len(s) for s in table)
    lines = [f"{'scenario':<{width}}  toolbench  sdk"]
    for scenario, row in table.items():
        cells = ["pass" if row[c].passed else "FAIL" for c in CLIENTS]
        lines.append(f"{scenario:<{width}}  {cells[0]:<9}  {cells[1]}")
    totals = [sum(row[c].passed for row in table.values()) for c in CLIENTS]
    lines.append(f"{'passed':<{width}}  {totals[0]}/{len(table):<7}  {totals[1]}/{len(table)}")
    return "\n".join(lines)


def test_the_suite_ran_every_client_scenario(outcomes: dict[str, dict[str, Outcome]]) -> None:
    # 0.1.16 has 26 client scenarios; each ran and reported checks for the SDK client.
    assert len(outcomes) == 26
    ran = [s for s, row in outcomes.items() if row["sdk"].checks > 0]
    assert ran == list(outcomes)
    # The raw SDK passes 25 of them: the one it fails is the suite's own bug, fixed after 0.1.16.
    assert [s for s, row in outcomes.items() if not row["sdk"].passed] == ["auth/2025-03-26-oauth-metadata-backcompat"]


def test_toolbench_passes_every_scenario_the_sdk_passes(outcomes: dict[str, dict[str, Outcome]]) -> None:
    behind = {s: row["toolbench"].failures for s, row in outcomes.items()
              if row["sdk"].passed and not row["toolbench"].passed}
    assert behind == {}
