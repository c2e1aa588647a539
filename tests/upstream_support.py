"""The scenarios of tests/runtime/test_agents_upstream.py: LiveAgent's sub-agent tests that take
more than one call (tests/fixtures/liveagent_subagents.json names each by its `scenario`).

Each scenario is `fn(make_bench, tmp_path)` and asserts what a model (or the developer reading
the bench) can see. Nothing sleeps: a child that must still be running waits on a gate that
the scenario opens, bounded by WAIT."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agents_support import WAIT, GatedModel, parent_profile

from toolbench.testing import ModelRequest, ScriptedModel

Scenario = Callable[[Any, Path], None]
SCENARIOS: dict[str, Scenario] = {}
RETURN = [("task_return", {"summary": "report"})]
PARENT_ONLY_CALLS = {"agent_delegate", "agent_await", "agent_handoff"}
_CHILD = re.compile(r"Your agent id is `([^`]+)`")


def scenario(fn: Scenario) -> Scenario:
    SCENARIOS[fn.__name__] = fn
    return fn


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=30).stdout


def init_repo(ws: Path) -> Path:
    """A git repository with one commit: work/notes.md, and .toolbench/ ignored."""
    ws.mkdir(parents=True, exist_ok=True)
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "t@example.com")
    git(ws, "config", "user.name", "t")
    (ws / "work").mkdir()
    (ws / "work" / "notes.md").write_text("original\n")
    (ws / ".gitignore").write_text(".toolbench/\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "start")
    return ws


def worktrees(repo: Path) -> list[str]:
    """The repository's worktrees besides itself (none when it is not a repository)."""
    if not (repo / ".git").exists():
        return []
    return [line.split(" ", 1)[1] for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")][1:]


def always_return(summary: str = "report") -> Callable[..., Any]:
    """A model whose every turn is task_return (any number of children)."""
    return lambda messages, tools: [("task_return", {"summary": summary})]


class PerChild:
    """A model with a script per roster child (told apart by its system message); the first turn
    of each child in `gated` waits for `release(child)`."""

    def __init__(self, scripts: Mapping[str, Sequence[Any]], gated: Sequence[str] = ()) -> None:
        self.scripts = {k: ScriptedModel(v) for k, v in scripts.items()}
        self._gates = {k: threading.Event() for k in gated}
        self.asked: list[str] = []
        self._seen = threading.Condition()

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        match = _CHILD.search(messages[0]["content"])
        assert match, messages[0]["content"]
        child = match[1]
        first = not self.scripts[child].requests
        with self._seen:
            self.asked.append(child)
            self._seen.notify_all()
        if first and child in self._gates and not self._gates[child].wait(WAIT):
            raise TimeoutError(f"{child} was never released")
        return self.scripts[child](messages, tools)

    def wait_asked(self, count: int) -> None:
        with self._seen:
            assert self._seen.wait_for(lambda: len(self.asked) >= count, WAIT), self.asked

    def release(self, *children: str) -> None:
        for child in children or tuple(self._gates):
            self._gates[child].set()

    def requests(self, child: str) -> list[ModelRequest]:
        return self.scripts[child].requests


def _bench(make_bench: Any, tmp_path: Path, *, git_repo: bool = False, folder: str = "ws") -> tuple[Any, Any]:
    if git_repo:
        init_repo(tmp_path / folder)
    bench = make_bench(folder, profile=parent_profile("builtin:workspace.write_file"), seed=1)
    return bench, bench.invocation(id="inv_root")


def _delegate(inv: Any, *entries: dict[str, Any], **args: Any) -> list[dict[str, Any]]:
    result = inv.call("agent_delegate", {"agents": list(entries), **args})
    assert not result.is_error, result.content
    tasks: list[dict[str, Any]] = result.structured["tasks"]
    return tasks


def _users(request: ModelRequest) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "user"]


def _writes(*files: tuple[str, str]) -> list[Any]:
    # notes.md is read first: write_file changes an existing file only after reading it
    return [[("workspace_read_file", {"path": "work/notes.md"})],
            [("workspace_write_file", {"path": p, "content": c}) for p, c in files], RETURN]


def _worktree_run(make_bench: Any, tmp_path: Path, turns: Sequence[Any], **entry: Any) -> dict[str, Any]:
    bench, inv = _bench(make_bench, tmp_path, git_repo=True)
    bench.agents.model = ScriptedModel(turns)
    _delegate(inv, {"id": "maker", "prompt": "Write.", "mode": "worktree", **entry})
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "completed", task
    return task


# --- agent-tool.test.mjs ---------------------------------------------------------------------
@scenario
def readonly_happy_path(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    (task,) = _delegate(inv, {"id": "reviewer-a", "prompt": "Inspect the implementation for obvious issues.",
                              "name": "Code Reviewer", "role": "Review code paths",
                              "identity": "Prefer concrete defects over style nits."})
    assert (task["childId"], task["mode"]) == ("reviewer-a", "readonly")
    bench.agents.wait(timeout=WAIT)
    request = model.requests[0]
    names = set(request.tool_names)
    assert {"workspace_read_file", "agent_send_message", "task_return"} <= names
    assert not names & (PARENT_ONLY_CALLS | {"workspace_write_file"})
    system = request.messages[0]["content"]
    for text in ("`reviewer-a`", "mode readonly", "Your name: Code Reviewer", "Your role: Review code paths",
                 "Your identity: Prefer concrete defects over style nits."):
        assert text in system, text
    assert _users(request)[-1].endswith("Inspect the implementation for obvious issues.")
    (child,) = bench.agents.roster()
    assert (child["name"], child["mode"], child["status"]) == ("Code Reviewer", "readonly", "completed")
    assert bench.agents.invocation(task["taskId"]).state.memory_read_only is True


@scenario
def no_delegate_in_children(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path, git_repo=True)
    model = PerChild({"r": [RETURN], "w": [RETURN]})
    bench.agents.model = model
    _delegate(inv, {"id": "r", "prompt": "read stuff"}, {"id": "w", "prompt": "write stuff", "mode": "worktree"})
    bench.agents.wait(timeout=WAIT)
    for child in ("r", "w"):
        (request,) = model.requests(child)
        assert not set(request.tool_names) & PARENT_ONLY_CALLS, child


@scenario
def worktree_tools(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path, git_repo=True)
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    (task,) = _delegate(inv, {"id": "builder", "prompt": "build", "mode": "worktree"})
    bench.agents.wait(timeout=WAIT)
    request = model.requests[0]
    assert {"workspace_read_file", "workspace_write_file", "agent_send_message", "task_return"} <= set(
        request.tool_names)
    assert "git worktree" in request.messages[0]["content"]
    assert bench.agents.invocation(task["taskId"]).state.memory_read_only is True  # memory read-only


@scenario
def concurrency_cap(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    ids = ("a", "b", "c", "d")
    model = PerChild({i: [RETURN] for i in ids}, gated=ids)
    bench.agents.model = model
    _delegate(inv, *({"id": i, "prompt": "x"} for i in ids), concurrency=2)
    model.wait_asked(2)  # two run; the others wait for a slot (they cannot get one while these are gated)
    statuses = sorted(t["status"] for t in bench.agents.tasks())
    assert statuses == ["pending", "pending", "running", "running"]
    model.release()
    assert [t["status"] for t in bench.agents.wait(timeout=WAIT)] == ["completed"] * 4


@scenario
def same_id_while_running(make_bench: Any, tmp_path: Path) -> None:
    # upstream queues the second run of a busy id after the first (one run per id at a time);
    # another child meanwhile runs at once
    bench, inv = _bench(make_bench, tmp_path)
    model = PerChild({"same-agent": [[("task_return", {"summary": "report:1"})], RETURN], "other": [RETURN]},
                     gated=["same-agent"])
    bench.agents.model = model
    (first,) = _delegate(inv, {"id": "same-agent", "prompt": "first"})
    model.wait_asked(1)
    (second,) = _delegate(inv, {"id": "same-agent", "prompt": "second"})
    _delegate(inv, {"id": "other", "prompt": "elsewhere"})
    model.wait_asked(2)  # the other child was asked; the second run of same-agent still waits
    assert model.asked == ["same-agent", "other"] and bench.agents.task(second["taskId"])["status"] == "pending"
    model.release()
    views = bench.agents.wait(timeout=WAIT)
    assert [v["status"] for v in views] == ["completed"] * 3 and model.asked.count("same-agent") == 2
    resumed = model.requests("same-agent")[1]  # it runs with the context the first run left
    assert "report:1" in json.dumps(resumed.messages) and _users(resumed)[-1].endswith("second")
    (child, _) = bench.agents.roster()
    assert child["tasks"] == [first["taskId"], second["taskId"]]


@scenario
def auto_apply(make_bench: Any, tmp_path: Path) -> None:
    task = _worktree_run(make_bench, tmp_path, _writes(("work/notes.md", "fixed\n"), ("work/new.md", "new\n")),
                         apply_policy="auto")
    tree = task["worktree"]
    assert (tree["applied"], tree["retained"], sorted(tree["changedFiles"])) == (True, False,
                                                                                 ["work/new.md", "work/notes.md"])
    assert (tmp_path / "ws" / "work" / "notes.md").read_text() == "fixed\n"
    assert worktrees(tmp_path / "ws") == []


@scenario
def explicit_applies(make_bench: Any, tmp_path: Path) -> None:
    task = _worktree_run(make_bench, tmp_path, _writes(("work/notes.md", "fixed\n")), apply_policy="explicit",
                         allowed_output_paths=["work/**"])
    tree = task["worktree"]
    assert (tree["applied"], tree["retained"], tree["allowedOutputPaths"]) == (True, False, ["work/**"])


@scenario
def explicit_mismatch(make_bench: Any, tmp_path: Path) -> None:
    task = _worktree_run(make_bench, tmp_path, _writes(("work/notes.md", "x\n"), ("work/docs/notes.md", "d\n")),
                         apply_policy="explicit", allowed_output_paths=["work/docs/**"])
    tree = task["worktree"]
    assert (tree["applied"], tree["retained"]) == (False, True)
    assert sorted(tree["changedFiles"]) == ["work/docs/notes.md", "work/notes.md"]
    assert (tmp_path / "ws" / "work" / "notes.md").read_text() == "original\n"  # nothing applied
    assert len(worktrees(tmp_path / "ws")) == 1


@scenario
def none_keeps(make_bench: Any, tmp_path: Path) -> None:
    task = _worktree_run(make_bench, tmp_path, _writes(("work/notes.md", "sketch\n")))
    tree = task["worktree"]
    assert (tree["applyPolicy"], tree["applied"], tree["retained"]) == ("none", False, True)
    assert tree["changedFiles"] == ["work/notes.md"] and len(worktrees(tmp_path / "ws")) == 1


@scenario
def none_clean(make_bench: Any, tmp_path: Path) -> None:
    task = _worktree_run(make_bench, tmp_path, [RETURN])
    tree = task["worktree"]
    assert (tree["changedFiles"], tree["applied"], tree["retained"]) == ([], False, False)
    assert worktrees(tmp_path / "ws") == []


@scenario
def retain(make_bench: Any, tmp_path: Path) -> None:
    task = _worktree_run(make_bench, tmp_path, _writes(("work/notes.md", "kept\n")), apply_policy="auto",
                         retain_worktree=True)
    tree = task["worktree"]
    assert (tree["applied"], tree["retained"]) == (True, True) and len(worktrees(tmp_path / "ws")) == 1


@scenario
def resume_keeps_context(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    model = ScriptedModel([[("task_return", {"summary": "report:1"})], RETURN])
    bench.agents.model = model
    (first,) = _delegate(inv, {"id": "historian", "prompt": "study era one"})
    bench.agents.wait(timeout=WAIT)
    (second,) = _delegate(inv, {"id": "historian", "prompt": "study era two"})
    bench.agents.wait(timeout=WAIT)
    seen = model.requests[1]
    assert any("study era one" in u for u in _users(seen)) and "report:1" in json.dumps(seen.messages)
    assert _users(seen)[-1].endswith("study era two")  # the continuation comes last
    (child,) = bench.agents.roster()
    assert child["tasks"] == [first["taskId"], second["taskId"]]


def _reopen(make_bench: Any, bench: Any, model: Any) -> Any:
    bench.close()
    again = make_bench("ws", profile=parent_profile("builtin:workspace.write_file"), seed=1)
    again.agents.model = model
    return again


def _roster_file(tmp_path: Path) -> Path:
    return tmp_path / "ws" / ".toolbench" / "agents" / "roster.json"


@scenario
def reopen_resumes_roster(make_bench: Any, tmp_path: Path) -> None:
    # upstream hydrates identities and the latest run per agent from its store (ready(), loadRun)
    bench, inv = _bench(make_bench, tmp_path)
    bench.agents.model = ScriptedModel([[("task_return", {"summary": "report:1"})]])
    _delegate(inv, {"id": "sage", "prompt": "collect wisdom", "name": "Sage"})
    bench.agents.wait(timeout=WAIT)
    model = ScriptedModel([RETURN])
    again = _reopen(make_bench, bench, model)
    (child,) = again.agents.roster()
    assert (child["id"], child["name"], child["mode"], child["status"], child["tasks"]) == (
        "sage", "Sage", "readonly", "completed", [])
    parent = again.invocation(id="inv_again")
    clash = parent.call("agent_delegate", {"agents": [{"id": "sage", "prompt": "x", "name": "Other"}]})
    assert clash.is_error and clash.error_code == "agent.identity_conflict"
    (task,) = _delegate(parent, {"id": "SAGE", "prompt": "share wisdom"})
    again.agents.wait(timeout=WAIT)
    seen = model.requests[0]
    assert any("collect wisdom" in u for u in _users(seen)) and "report:1" in json.dumps(seen.messages)
    assert _users(seen)[-1].endswith("share wisdom") and "Your name: Sage" in seen.messages[0]["content"]
    assert again.agents.roster()[0]["tasks"] == [task["taskId"]] and again.agents.notices == ()


@scenario
def stored_context_version(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    bench.agents.model = always_return()
    _delegate(inv, {"id": "old-timer", "prompt": "ancient task", "name": "Old Timer", "role": "Legacy"})
    bench.agents.wait(timeout=WAIT)
    bench.close()
    stored = json.loads(_roster_file(tmp_path).read_text())
    stored["children"][0]["context"]["schemaVersion"] = 0  # a context another version wrote
    _roster_file(tmp_path).write_text(json.dumps(stored))
    model = ScriptedModel([RETURN])
    again = _reopen(make_bench, bench, model)
    _delegate(again.invocation(id="inv_again"), {"id": "old-timer", "prompt": "modern task"})
    again.agents.wait(timeout=WAIT)
    messages = model.requests[0].messages
    assert [m["role"] for m in messages] == ["system", "user"] and "ancient task" not in json.dumps(messages)
    assert messages[1]["content"].endswith("modern task") and "Your name: Old Timer" in messages[0]["content"]
    assert again.agents.notices == ()


@scenario
def roster_write_fails(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    _roster_file(tmp_path).mkdir(parents=True)  # a folder where the file goes: every write fails
    model = ScriptedModel([[("task_return", {"summary": "report:1"})], RETURN])
    bench.agents.model = model
    _delegate(inv, {"id": "scribe", "prompt": "note it"})
    (view,) = bench.agents.wait(timeout=WAIT)
    assert view["status"] == "completed"
    # written when the child is made and when its run ends: both fail
    assert [n.code for n in bench.agents.notices] == ["agent.roster_unreadable", *["agent.roster_write_failed"] * 2]
    _delegate(inv, {"id": "scribe", "prompt": "go on"})  # the roster in memory is whole: it resumes
    bench.agents.wait(timeout=WAIT)
    assert "report:1" in json.dumps(model.requests[1].messages)
    assert [c["status"] for c in bench.agents.roster()] == ["completed"] and len(bench.agents.notices) == 5


@scenario
def resume_false(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    model = ScriptedModel([RETURN, RETURN])
    bench.agents.model = model
    _delegate(inv, {"id": "phoenix", "prompt": "first life", "name": "Phoenix"})
    bench.agents.wait(timeout=WAIT)
    _delegate(inv, {"id": "phoenix", "prompt": "second life", "resume": False})
    bench.agents.wait(timeout=WAIT)
    messages = model.requests[1].messages
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"].endswith("second life") and "first life" not in json.dumps(messages)
    assert "Your name: Phoenix" in messages[0]["content"]  # the identity is reused
    (child,) = bench.agents.roster()
    assert (child["name"], child["mode"]) == ("Phoenix", "readonly")


@scenario
def resume_upgrades_mode(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path, git_repo=True)
    model = ScriptedModel([RETURN, RETURN])
    bench.agents.model = model
    _delegate(inv, {"id": "learner", "prompt": "research it"})
    bench.agents.wait(timeout=WAIT)
    (task,) = _delegate(inv, {"id": "learner", "prompt": "now implement it", "mode": "worktree"})
    bench.agents.wait(timeout=WAIT)
    assert task["mode"] == "worktree" and "workspace_write_file" in model.requests[1].tool_names
    continuation = _users(model.requests[1])[-1]
    assert "Execution mode changed: readonly -> worktree" in continuation
    assert [c["mode"] for c in bench.agents.roster()] == ["worktree"]


@scenario
def template_in_system(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    bench.agents.define("reviewer", description="Focus on concrete defects.")
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    (task,) = _delegate(inv, {"id": "templated", "prompt": "review the diff", "template": "reviewer"})
    bench.agents.wait(timeout=WAIT)
    assert task["agentId"] == "reviewer"
    assert "You are the agent `reviewer`: Focus on concrete defects." in model.requests[0].messages[0]["content"]
    (child,) = bench.agents.roster()
    assert (child["template"], child["name"], child["role"]) == ("reviewer", None, None)


@scenario
def cancel_retains(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path, git_repo=True)
    model = GatedModel(_writes(("work/notes.md", "half\n")), gated=(3,))
    bench.agents.model = model
    (task,) = _delegate(inv, {"id": "doomed", "prompt": "never finishes", "mode": "worktree",
                              "apply_policy": "auto"})
    model.wait_asked(3)  # it has written and is asked for its last turn
    handed = inv.call("agent_handoff", {"agentId": "general", "handoff": {"objective": "take over"}})
    assert not handed.is_error and handed.structured["cancelledTasks"] == [task["taskId"]]
    model.release(3)
    view = bench.agents.task(task["taskId"])
    assert (view["status"], view["error"]["code"]) == ("cancelled", "agent.task_cancelled")
    assert (view["worktree"]["applied"], view["worktree"]["retained"]) == (False, True)
    assert (tmp_path / "ws" / "work" / "notes.md").read_text() == "original\n"


@scenario
def failure_retains(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path, git_repo=True)
    script = ScriptedModel(_writes(("work/notes.md", "broken\n"))[:2])

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if script.remaining == 0:
            raise RuntimeError("model exploded")
        return script(messages, tools)
    bench.agents.model = model
    _delegate(inv, {"id": "unlucky", "prompt": "try", "mode": "worktree", "apply_policy": "auto"})
    (view,) = bench.agents.wait(timeout=WAIT)
    assert (view["status"], view["error"]["code"]) == ("failed", "agent.child_model_failed")
    assert (view["worktree"]["applied"], view["worktree"]["retained"]) == (False, True)


@scenario
def readonly_gating(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    (tmp_path / "ws" / "work").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ws" / "work" / "a.md").write_text("a\n")
    bench.agents.model = ScriptedModel([[("workspace_read_file", {"path": "work/a.md"}),
                                         ("workspace_write_file", {"path": "work/a.md", "content": "b"})], RETURN])
    (task,) = _delegate(inv, {"id": "gated", "prompt": "read only"})
    (view,) = bench.agents.wait(timeout=WAIT)
    assert view["status"] == "completed"
    read, write = bench.agents.invocation(task["taskId"]).records[:2]
    assert not read.result.is_error
    # upstream: "Tool Write is not available to delegated subagents in mode=readonly"
    assert write.result.is_error and write.result.error_code == "model.unknown_tool_call"
    assert "workspace_write_file" not in write.result.structured["available"]
    assert (tmp_path / "ws" / "work" / "a.md").read_text() == "a\n"


@scenario
def one_fails(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if "will fail" in messages[1]["content"]:
            raise RuntimeError("half broken")
        return RETURN
    bench.agents.model = model
    _delegate(inv, {"id": "ok-agent", "prompt": "will pass"}, {"id": "bad-agent", "prompt": "will fail"})
    answer = inv.call("agent_await", {"mode": "allCompleted"})
    assert not answer.is_error, answer.content
    by_child = {t["childId"]: t["status"] for t in answer.structured["completed"]}
    assert by_child == {"ok-agent": "completed", "bad-agent": "failed"}


# --- send-message.test.mjs and bus-roster.test.mjs -------------------------------------------
@scenario
def child_messages_parent(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    bench.agents.model = PerChild({"agent-a": [
        [("agent_send_message", {"to": "parent", "message": "Found the bug in policy.ts."})], RETURN],
        "agent-b": [RETURN]})
    _delegate(inv, {"id": "agent-a", "prompt": "look"}, {"id": "agent-b", "prompt": "look"})
    answer = inv.call("agent_await", {"mode": "allCompleted"})
    (message,) = answer.structured["messages"]
    assert (message["from"], message["to"], message["channel"]) == ("agent-a", ["parent"], "direct")
    assert message["message"] == "Found the bug in policy.ts."


@scenario
def parent_messages_child(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    model = PerChild({"agent-a": [[("dice_roll", {})], RETURN], "agent-b": [RETURN]}, gated=["agent-a"])
    bench.agents.model = model
    _delegate(inv, {"id": "agent-a", "prompt": "wait"}, {"id": "agent-b", "prompt": "go"})
    model.wait_asked(1)
    self_note = inv.call("agent_send_message", {"to": "parent", "message": "self note"})
    assert self_note.is_error and self_note.error_code == "agent.unknown_recipient"
    assert self_note.structured["valid"] == ["agent-a", "agent-b", "*"]  # addressed by child id
    sent = inv.call("agent_send_message", {"to": "AGENT-A", "message": "task"})
    assert not sent.is_error and (sent.structured["from"], sent.structured["to"]) == ("parent", ["agent-a"])
    model.release()
    bench.agents.wait(timeout=WAIT)
    assert any("Message from `parent`" in u and u.endswith("task") for u in _users(model.requests("agent-a")[1]))


@scenario
def direct_is_private(make_bench: Any, tmp_path: Path) -> None:
    bench, inv = _bench(make_bench, tmp_path)
    two = [[("dice_roll", {})], RETURN]
    model = PerChild({"agent-b": two, "agent-c": two}, gated=["agent-b", "agent-c"])
    bench.agents.model = model
    _delegate(inv, {"id": "agent-b", "prompt": "wait"}, {"id": "agent-c", "prompt": "wait"})
    model.wait_asked(2)
    assert not inv.call("agent_send_message", {"to": "agent-b", "message": "for b only"}).is_error
    model.release()
    bench.agents.wait(timeout=WAIT)
    assert any("for b only" in u for u in _users(model.requests("agent-b")[1]))
    assert not any("for b only" in u for u in _users(model.requests("agent-c")[1]))
