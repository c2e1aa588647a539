"""LiveAgent-form delegation for `bench.agents` (reference liveagent-tools §8): a roster of
children with stable ids, whose identity (name, role, identity, template) is fixed when the id
is first created and whose private context a later entry with that id resumes (`resume: false`
starts afresh under the same identity). Templates are the agents of `bench.agents.define`.

A batch is checked whole (`core.agents.agents_batch_issues`) before any child starts; a rejected
one answers the numbered issues, the roster and the enabled templates. Mode `readonly` (the
default) gives the child the read-only tools and memory in read-only mode; `worktree` runs it
with the file and shell tools in a git worktree of the workspace (`runtime.worktrees`), whose
changes are applied or kept as the entry's `apply_policy` says when the child settles.

Runs of one child go one at a time, in the order they were asked for (upstream's per-id run
queue): a batch naming a child that is still working is accepted, and its run starts after the
current one, from the context that one left (`begin`). Other children run meanwhile. The roster
is durable (`roster_store.py`): written when a child's run ends, read when a bench first
needs it, so a reopened bench resumes its children by id.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.agents import (
    ACTIVE,
    DEFAULT_TEMPLATE,
    IDENTITY,
    Known,
    agents_batch_issues,
    allowed_paths,
    batch_concurrency,
    entry_mode,
    normalize_entry,
    resolve_template,
)
from ...core.errors import ToolbenchError, ToolError
from .. import worktrees
from . import roster_store
from .loop import AnyModel, as_model, opening, readonly_profile

if TYPE_CHECKING:
    from .service import AgentSpec, AgentsService, _Task


@dataclass(eq=False)
class Child:
    """A roster child: its canonical id, fixed identity, last mode, private context and tasks
    (this bench's; `stored_status` is its last status as a reopened bench read it)."""

    id: str
    identity: dict[str, str | None]
    mode: str = "readonly"
    messages: list[dict[str, Any]] = field(default_factory=list)  # its conversation so far (provider messages)
    system: str = ""  # its system prompt, fixed with its identity
    protocol: str | None = None  # the protocol its messages are in
    tasks: list[str] = field(default_factory=list)
    stored_status: str = "idle"
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)  # held by the run under way: one at a time

    def view(self, status: str) -> dict[str, Any]:
        return {"id": self.id, **self.identity, "mode": self.mode, "status": status, "tasks": list(self.tasks)}


INTERRUPTED = "interrupted"  # the status of a child whose run a reopened bench found unfinished


class Roster:
    """The roster children of one bench (casefolded id -> child), read from the workspace's stored
    roster when first needed, and the notices of reading and writing that file."""

    def __init__(self, workspace: Path) -> None:
        self._workspace = workspace
        self._children: dict[str, Child] | None = None
        self.notices: list[roster_store.Notice] = []

    @property
    def children(self) -> dict[str, Child]:
        if self._children is None:
            stored, notice = roster_store.load(self._workspace)
            self._children = hydrate(stored)
            self._note(notice)
        return self._children

    def save(self, children: Sequence[roster_store.StoredChild], working: Collection[str] = ()) -> None:
        """Write the file now; a failure is a notice (the roster stays in memory).

        The file is read again first and merged by id: another bench on this workspace may have
        added children since. A child in `working` (casefolded ids) is mid-run: its context is
        half a run, so the file keeps its last settled context (`save` writes its status as
        `interrupted`, which is what a reopened bench finds)."""
        on_disk, _ = roster_store.load(self._workspace)
        disk = {c.id.casefold(): c for c in on_disk}
        mine: dict[str, roster_store.StoredChild] = {}
        for child in children:
            key = child.id.casefold()
            if key in working:
                before = disk.get(key)
                child = replace(child, context=before.context if before else None)
            mine[key] = child
        merged = [mine.pop(key, child) for key, child in disk.items()] + list(mine.values())
        self._note(roster_store.save(self._workspace, merged))

    def _note(self, notice: roster_store.Notice | None) -> None:
        if notice is not None:
            self.notices.append(notice)


def roster(svc: AgentsService) -> list[dict[str, Any]]:
    """Every child created in the LiveAgent form, with its identity and its last task's status."""
    return [c.view(_status(svc, c)) for c in svc._roster.children.values()]

def _status(svc: AgentsService, child: Child) -> str:
    return svc._tasks[child.tasks[-1]].status if child.tasks else child.stored_status

def hydrate(stored: Sequence[roster_store.StoredChild]) -> dict[str, Child]:
    """The roster a reopened bench starts with (casefolded id -> child); nothing runs in it yet,
    so a child stored as working is `interrupted`."""
    out: dict[str, Child] = {}
    for s in stored:
        ctx = s.context
        status = INTERRUPTED if s.status in ACTIVE else s.status
        out[s.id.casefold()] = Child(s.id, dict(s.identity), s.mode, stored_status=status,
                                     messages=list(ctx.messages) if ctx else [], system=ctx.system if ctx else "",
                                     protocol=ctx.protocol if ctx else None)
    return out

def save(svc: AgentsService) -> None:
    """Write the roster as the file keeps it: each child's identity, mode, status and context
    (a child's, when its run ends; a new child's identity as soon as it is made)."""
    children = svc._roster.children.values()
    # The file is for a bench that reopens the workspace, where no run goes on: a child pending or
    # running here is `interrupted` there.
    svc._roster.save([roster_store.StoredChild(c.id, dict(c.identity), c.mode,
                                              INTERRUPTED if _status(svc, c) in ACTIVE else _status(svc, c),
                                              roster_store.Context(c.protocol, c.system, tuple(c.messages))
                                              if c.messages else None) for c in children],
                     # a pending run has not touched the context yet; a running one extends it
                     working={c.id.casefold() for c in children if _status(svc, c) == "running"})

def name(task: _Task) -> str:
    """How a task is named to the others: its roster child's id, else its task id."""
    return task.child.id if task.child is not None else task.id

def reachable(svc: AgentsService, parent_id: str, sender: _Task | None) -> dict[str, _Task]:
    """Whom a sender may address, by name: the parent's other tasks. A roster child is addressed by
    its child id (as upstream's roster, validateRecipient) and gets mail at its latest task."""
    reach: dict[str, _Task] = {}
    for t in svc._tasks.values():
        same = t is sender or (sender is not None and t.child is not None and t.child is sender.child)
        if t.parent_id == parent_id and not same:
            reach[name(t)] = t  # a later task of the same child replaces an earlier one
    return reach

def templates(svc: AgentsService) -> list[dict[str, str]]:
    """The enabled templates: the agent directory."""
    return [{"id": a.id, "description": a.description} for a in svc._agents.values()]

async def delegate_agents(svc: AgentsService, parent_id: str, entries: Sequence[Mapping[str, Any]],
                          concurrency: float | None = None) -> list[dict[str, Any]]:
    """Check the whole `agents` batch, then create and start every child (resuming known ids)."""
    entries = [normalize_entry(e) for e in entries]
    enabled = list(svc._agents)
    known = {key: Known(c.id, c.identity, c.mode) for key, c in svc._roster.children.items()}
    wants_tree = any(_mode(e, known) == "worktree" for e in entries)
    issues = agents_batch_issues(entries, roster=known, templates=enabled, active=len(svc._active()),
                                 has_model=lambda a: (svc._agents[a].model or svc.model) is not None,
                                 git_repository=wants_tree and worktrees.is_repository(svc._host.workspace))
    if issues:
        roster_, offered = roster(svc), templates(svc)
        lines = "\n".join(f"{n}. {i.line()}" for n, i in enumerate(issues, 1))
        who = "\n".join(_line(c) for c in roster_) or "- none yet"
        kinds = "\n".join(f"- `{t['id']}`: {t['description']}" for t in offered)
        raise ToolError(issues[0].code, f"Nothing was started:\n{lines}\n\nExisting agents (reuse these ids to "
                        f"resume them):\n{who}\n\nEnabled templates:\n{kinds}", structured={
                            "kind": "subagent_batch", "status": "rejected",
                            "issues": [i.to_json() for i in issues], "roster": roster_, "templates": offered})
    trees = _provision(svc, [e for e in entries if _mode(e, known) == "worktree"])
    tasks = [_spawn(svc, parent_id, entry, enabled, trees.get(id(entry))) for entry in entries]
    save(svc)  # the new identities, before any run: a crash in a first run must not lose them
    return svc._start(tasks, batch_concurrency(len(tasks), concurrency))

def _line(child: Mapping[str, Any]) -> str:
    """A roster child as a rejected batch lists it: what a resuming entry must match (upstream's
    `id=... name=... role=... mode=... status=...` line)."""
    fixed = "".join(f" {k}={child[k]}" for k in ("name", "role") if child.get(k))
    return f"- `{child['id']}`{fixed} template={child['template']} mode={child['mode']} status={child['status']}"

def _mode(entry: Mapping[str, Any], known: Mapping[str, Known]) -> str:
    return entry_mode(entry, known.get(str(entry.get("id", "")).casefold()))

def _provision(svc: AgentsService, entries: Sequence[Mapping[str, Any]]) -> dict[int, worktrees.Worktree]:
    """A worktree for every worktree entry (keyed by the entry's id()), all made before any child
    exists: when git fails for one, those made are removed and nothing starts."""
    home = svc._host.workspace
    made: dict[int, worktrees.Worktree] = {}
    try:
        for entry in entries:
            made[id(entry)] = worktrees.create(
                home, home / ".toolbench" / "worktrees" / f"{entry['id']}-{secrets.token_hex(4)}",
                policy=str(entry.get("apply_policy") or "none"),
                allowed=allowed_paths(entry),
                retain=bool(entry.get("retain_worktree", False)))
    except (ToolbenchError, OSError) as exc:
        for tree in made.values():
            with contextlib.suppress(ToolbenchError):
                worktrees.remove(tree)
        why = exc.message if isinstance(exc, ToolbenchError) else exc.strerror or type(exc).__name__
        raise ToolError("agent.provision_failed", f"Nothing was started: a worktree could not be made "
                        f"({why})") from exc  # an OSError's text names host paths: its reason only
    return made

def _spawn(svc: AgentsService, parent_id: str, entry: Mapping[str, Any], enabled: list[str],
           tree: worktrees.Worktree | None) -> _Task:
    child = svc._roster.children.get(str(entry["id"]).casefold())
    if child is None:
        template = resolve_template(str(entry.get("template") or DEFAULT_TEMPLATE), enabled)
        identity = {k: (template if k == "template" else entry.get(k)) for k in IDENTITY}
        child = svc._roster.children[entry["id"].casefold()] = Child(entry["id"], identity)
    previous, child.mode = child.mode, str(entry.get("mode") or child.mode)
    spec: AgentSpec = svc._agents[str(child.identity["template"])]
    profile = spec.profile or svc._host.profile()
    if tree is None:  # readonly; a worktree child keeps the caller's file and shell tools
        profile = readonly_profile(profile, {d.id: d for d in svc._host.catalog()})
    task = svc._new_task(parent_id, spec, {"objective": str(entry["prompt"])}, profile=profile, child=child,
                         workspace=tree.path if tree else None)
    task.worktree = tree
    task.invocation.state.memory_read_only = True  # both modes: memory.manage refuses its writes
    if entry.get("resume", True):
        # A changed mode is said on resume, since the resumed system message still names the old one
        # (upstream "Execution mode changed: readonly -> worktree").
        task.resume = "" if previous == child.mode else f"Execution mode changed: {previous} -> {child.mode}.\n\n"
    child.tasks.append(task.id)
    return task

def begin(task: _Task, model: AnyModel | None) -> None:
    """Give a roster child's task its context when its turn comes (after the child's earlier
    runs): on resume, the conversation those left, then the new prompt; else (the first task,
    `resume: false`, or a context in another protocol than the model's) a fresh private context
    under the same identity."""
    child = task.child
    assert child is not None
    protocol = as_model(model).protocol if model is not None else None
    if task.resume is not None and child.messages and child.protocol == protocol:
        task.messages, task.system = child.messages, child.system  # the same list: the run extends it
        task.pending.append(f"# {task.title}\n\n{task.resume}{task.task['objective']}")
    else:
        task.messages = child.messages = []
        task.system, brief = opening(task)
        child.system = task.system
        task.pending.append(brief)
    child.protocol = protocol
