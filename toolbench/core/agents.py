"""Sub-agent rules with no I/O: limits, packet checks, the delegate batch check, message routing,
await picks.

The runtime (`toolbench.runtime.agents`) owns the tasks and the child loop; the tool adapters
(`toolbench.tools.agents`) own the schemas. Everything here is a pure function over values, so
each rule is tested alone and kept in one place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final, Literal

from .errors import ToolError

MAX_CHILDREN: Final = 8  # pending or running children per bench (LiveAgent MAX_AGENTS)
DEFAULT_AWAIT_MS: Final = 120_000
MAX_AWAIT_MS: Final = 300_000
DEFAULT_MAX_ROUNDS: Final = 20
AWAIT_MODES: Final = ("nextCompleted", "allCompleted", "statusOnly")
CHANNELS: Final = ("direct", "shared", "decision", "question")
# A packet's text fields, trimmed, are at most this many UTF-8 bytes: upstream measures Rust's
# `str::len` (bytes) though its message says chars (TauriTavern MAX_AGENT_DELEGATION_TASK_FIELD_CHARS).
MAX_PACKET_FIELD: Final = 8_000
TASK_TEXT: Final = ("objective", "title")  # a delegate task's text fields, the required one first
HANDOFF_TEXT: Final = ("objective", "title", "reason", "contextSummary")  # a handoff brief's
PARENT: Final = "parent"
DEFAULT_TEMPLATE: Final = "general"  # the template a LiveAgent-form entry without `template` uses
MODES: Final = ("readonly", "worktree")
IDENTITY: Final = ("name", "role", "identity", "template")  # fixed when a child id is first created
EVERYONE: Final = "*"

TaskStatus = Literal["pending", "running", "completed", "failed", "cancelled"]
ACTIVE: Final = frozenset({"pending", "running"})
_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_agent_id(agent_id: str) -> str:
    """The id itself, or ValueError: an alphanumeric, then up to 63 of `[A-Za-z0-9._-]`."""
    if not isinstance(agent_id, str) or not _AGENT_ID.fullmatch(agent_id):
        raise ValueError(f"agent id {agent_id!r} must start with a letter or digit and continue with up to 63 "
                         "of A-Z a-z 0-9 . _ -")
    return agent_id


@dataclass(frozen=True, slots=True)
class Issue:
    """One reason a delegate batch is refused; `entry` is the 1-based position in the batch."""

    code: str
    entry: int
    agent_id: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "entry": self.entry, "agentId": self.agent_id, "message": self.message}

    def line(self) -> str:
        return f"[{self.code}] entry {self.entry} (agent={self.agent_id or '?'}): {self.message}"


def packet_problem(packet: Mapping[str, Any], name: str, fields: Sequence[str]) -> str | None:
    """Why a delegate `task` or a handoff brief is refused, in upstream's words, or None.

    `name` prefixes the field (`task.objective`); `fields[0]` is required and must not be blank;
    every one of `fields` present, trimmed, is at most MAX_PACKET_FIELD bytes. Other fields
    (context objects, lists) are not measured, as upstream. The schema has checked the types."""
    for n, key in enumerate(fields):
        text = str(packet.get(key) or "").strip()
        if n == 0 and not text:
            return f"{name}.{key} must be a non-empty string"
        if len(text.encode()) > MAX_PACKET_FIELD:
            return f"{name}.{key} must be <= {MAX_PACKET_FIELD} chars"
    return None


def delegate_entries(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The batch a delegate call asks for: `{agentId, task}`, `{tasks: [{agentId, task}, ...]}` or
    LiveAgent's `{agents: [{id, prompt, ...}, ...]}`.

    Raises ToolError(tool.invalid_arguments) when two forms or none are given."""
    single = "agentId" in args or "task" in args
    if "agents" in args:
        if single or "tasks" in args:
            raise ToolError("tool.invalid_arguments",
                            "Give `agents` (LiveAgent entries) alone, without `agentId`, `task` or `tasks`.")
        return [dict(entry) for entry in args["agents"]]
    if "concurrency" in args:
        raise ToolError("tool.invalid_arguments", "`concurrency` goes with `agents` (LiveAgent entries) only.")
    if single and "tasks" in args:
        raise ToolError("tool.invalid_arguments",
                        "Give either `agentId` with `task` (one task) or `tasks` (a batch), not both.")
    if "tasks" in args:
        return [dict(entry) for entry in args["tasks"]]
    if "agentId" in args and "task" in args:
        return [{"agentId": args["agentId"], "task": args["task"]}]
    raise ToolError("tool.invalid_arguments",
                    "`agentId` and `task` are required (or `tasks`, a list of {agentId, task}).")


def batch_issues(entries: Sequence[Mapping[str, Any]], *, agents: Collection[str], active: int,
                 has_model: Callable[[str], bool]) -> list[Issue]:
    """Every problem of a delegate batch; the batch starts only when this is empty.

    `agents` are the ids one may delegate to, `active` the children already pending or running
    on the bench, `has_model(agent_id)` whether a model would drive that agent."""
    issues: list[Issue] = []
    for n, entry in enumerate(entries, 1):
        agent_id = str(entry.get("agentId", ""))
        task = entry.get("task") or {}
        if agent_id not in agents:
            issues.append(Issue("agent.unknown_agent", n, agent_id,
                                f"no agent `{agent_id}`; delegate to one of: {', '.join(sorted(agents)) or 'none'}"))
        elif not has_model(agent_id):
            issues.append(Issue("agent.model_missing", n, agent_id,
                                "no model drives this agent; set `bench.agents.model` (or the agent's own model)"))
        problem = packet_problem(task, "task", TASK_TEXT)
        if problem is not None:
            issues.append(Issue("tool.invalid_arguments", n, agent_id, problem))
    if active + len(entries) > MAX_CHILDREN:
        issues.append(Issue("agent.child_limit_reached", len(entries), "",
                            f"{active} children are running and this batch adds {len(entries)}; at most "
                            f"{MAX_CHILDREN} run at once. Await some first (agent_await)."))
    return issues


@dataclass(frozen=True, slots=True)
class Known:
    """A child already on the roster: its canonical id, identity (IDENTITY's fields; template is
    the canonical template id) and last mode. A child still working is known too: a new entry
    for it runs after its current run (the service queues runs per child)."""

    id: str
    identity: Mapping[str, str | None]
    mode: str


# An entry's text fields upstream reads with optionalString (utils.ts): trimmed, a blank one absent.
ENTRY_TEXT: Final = ("id", "prompt", *IDENTITY, "mode", "apply_policy")


def normalize_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A LiveAgent-form entry as upstream reads it (validate.ts parseSubagentBatch with
    utils.ts optionalString): each ENTRY_TEXT string trimmed, and left out when blank, so a
    blank creation field is no identity conflict and ` scout ` names `scout`. Idempotent;
    other fields and non-strings are kept as given (the checks refuse what is wrong)."""
    out = dict(entry)
    for key in ENTRY_TEXT:
        value = out.get(key)
        if isinstance(value, str):
            if value.strip():
                out[key] = value.strip()
            else:
                del out[key]
    return out


def batch_concurrency(count: int, value: float | None) -> int:
    """How many children of an `agents` batch run at once (reference §8):
    `min(count, clamp(floor(value), 1, 8))`, the default 8 (so the batch size)."""
    wanted = MAX_CHILDREN if value is None else max(1, min(math.floor(value), MAX_CHILDREN))
    return max(1, min(count, wanted))


APPLY_POLICIES: Final = ("none", "explicit", "auto")


def worktree_issues(entry: Mapping[str, Any], mode: str, git_repository: bool) -> list[tuple[str, str]]:
    """(code, message) for an entry's worktree fields (reference §8): apply_policy only with mode
    worktree, allowed_output_paths only with (and required by) explicit, each inside the workspace,
    and mode worktree only on a git repository."""
    out: list[tuple[str, str]] = []
    policy = entry.get("apply_policy")
    paths = entry.get("allowed_output_paths")
    if mode == "worktree" and not git_repository:
        out.append(("agent.worktree_unavailable", "mode `worktree` needs the workspace to be a git repository "
                    "with a commit; use `readonly`"))
    if policy is not None and mode != "worktree":
        out.append(("tool.invalid_arguments", "`apply_policy` is valid only with mode `worktree`"))
    if paths is not None and policy != "explicit":
        out.append(("tool.invalid_arguments", "`allowed_output_paths` requires apply_policy `explicit`"))
    if policy == "explicit" and not paths:
        out.append(("tool.invalid_arguments", "apply_policy `explicit` needs at least one allowed_output_paths entry"))
    for raw in paths or ():
        text = str(raw).strip()  # upstream trims each entry before it checks or keeps it
        if not text:  # a blank entry is a bad argument, not a path outside (upstream invalid_arguments)
            out.append(("tool.invalid_arguments", "allowed_output_paths entries must be non-empty strings"))
            continue
        parts = PurePosixPath(text.replace("\\", "/")).parts
        depth = 0
        for part in parts:
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 0:
                break
        if text.startswith("/") or depth < 0 or re.match(r"[A-Za-z]:", text):
            out.append(("agent.output_path_outside_workspace",
                        f"allowed output path `{raw}` must be a relative path inside the workspace"))
    return out


def entry_mode(entry: Mapping[str, Any], known: Known | None) -> str:
    """An entry's mode: the one it gives, else the known child's last mode, else readonly (upstream
    parseSubagentBatch: a new agent is readonly, a resumed one keeps its last mode)."""
    return str(entry.get("mode") or (known.mode if known is not None else "readonly"))


def allowed_paths(entry: Mapping[str, Any]) -> tuple[str, ...]:
    """An entry's allowed_output_paths as upstream keeps them: trimmed, duplicates dropped, in order."""
    return tuple(dict.fromkeys(str(p).strip() for p in entry.get("allowed_output_paths") or ()))


def resolve_template(value: str, templates: Sequence[str]) -> str | None:
    """The enabled template `value` names (by id, case-insensitively), or None."""
    folded = value.casefold()
    return next((t for t in templates if t.casefold() == folded), None)


def agents_batch_issues(entries: Sequence[Mapping[str, Any]], *, roster: Mapping[str, Known],
                        templates: Sequence[str], active: int,
                        has_model: Callable[[str], bool], git_repository: bool = False) -> list[Issue]:
    """Every problem of a LiveAgent-form batch (`agents: [{id, prompt, ...}]`, reference §8);
    the caller passes each entry through `normalize_entry` first.

    `roster` maps a casefolded child id to what is known of it; `templates` are the enabled
    template ids; `active` the children pending or running; `git_repository` whether the
    workspace is a git repository with a commit (mode worktree needs one). The schema has
    checked the types."""
    issues: list[Issue] = []
    seen: set[str] = set()
    for n, entry in enumerate(entries, 1):
        raw = entry.get("id")
        agent_id = raw if isinstance(raw, str) else ""

        def add(code: str, message: str, agent_id: str = agent_id, n: int = n) -> None:
            issues.append(Issue(code, n, agent_id, message))
        try:
            check_agent_id(agent_id)
        except ValueError as exc:
            add("tool.invalid_arguments", str(exc))
        folded = agent_id.casefold()
        if folded and folded in seen:  # compared case-insensitively, as upstream
            add("agent.duplicate_agent_id", f"agent id `{agent_id}` appears more than once in this batch")
        seen.add(folded)
        if not str(entry.get("prompt") or "").strip():
            add("tool.invalid_arguments", "`prompt` must be a non-empty string")
        template = None
        if entry.get("template") is not None:
            template = resolve_template(str(entry["template"]), templates)
            if template is None:
                add("agent.unknown_template", f"no enabled template `{entry['template']}`; use one of: "
                    f"{', '.join(templates) or 'none'}")
        known = roster.get(folded)
        chosen = (template or resolve_template(DEFAULT_TEMPLATE, templates) if known is None
                  else str(known.identity.get("template") or ""))
        if chosen and chosen in templates and not has_model(chosen):
            add("agent.model_missing", f"no model drives template `{chosen}`; set `bench.agents.model`")
        if known is not None:
            given = {k: (template if k == "template" else entry.get(k)) for k in IDENTITY if entry.get(k) is not None}
            differ = [k for k, v in given.items() if v is not None and v != known.identity.get(k)]
            if differ:
                add("agent.identity_conflict", f"`{known.id}` exists with a different {', '.join(differ)}: "
                    "the identity is fixed when an id is first created (leave those fields out, or use a new id)")
        mode = entry_mode(entry, known)
        if mode not in MODES:
            add("tool.invalid_arguments", f"`mode` must be one of {', '.join(MODES)}")
        else:
            for code, message in worktree_issues(entry, mode, git_repository):
                add(code, message)
    if active + len(entries) > MAX_CHILDREN:
        issues.append(Issue("agent.child_limit_reached", len(entries), "",
                            f"{active} children are running and this batch adds {len(entries)}; at most "
                            f"{MAX_CHILDREN} run at once. Await some first (agent_await)."))
    return issues


@dataclass(frozen=True, slots=True)
class Route:
    """Where a message goes: recipient keys (`parent` or task ids) and the normalised channel."""

    recipients: tuple[str, ...]
    channel: str
    broadcast: bool


def route_message(to: str | None, channel: str | None, *, has_parent: bool, roster: Sequence[str]) -> Route:
    """Resolve `agent.send_message`'s recipient against the sender's roster (LiveAgent §8).

    `roster` lists the ids the sender may address: a child's siblings, or a parent's children.
    `parent` and ids match case-insensitively; `*` (or no `to` with channel shared) is everyone
    the sender can reach. Raises ToolError(agent.unknown_recipient) listing the valid targets."""
    if to is None or not to.strip():
        if channel != "shared":
            raise ToolError("tool.invalid_arguments", "`to` is required unless `channel` is `shared` (a broadcast).")
        to = EVERYONE
    target = to.strip()
    everyone = ([PARENT] if has_parent else []) + list(roster)
    if target == EVERYONE:
        if not everyone:
            raise ToolError("agent.unknown_recipient", "No one to broadcast to: no parent and no other agents.")
        kept = channel if channel in ("decision", "question") else "shared"
        return Route(tuple(everyone), kept, True)
    folded = target.casefold()
    if folded == PARENT and has_parent:
        return Route((PARENT,), "direct" if channel in (None, "shared") else channel, False)
    for name in roster:
        if name.casefold() == folded:
            return Route((name,), "direct" if channel in (None, "shared") else channel, False)
    valid = ", ".join(f"`{n}`" for n in [*everyone, EVERYONE]) if everyone else "none"
    raise ToolError("agent.unknown_recipient", f"Unknown recipient `{target}`. Valid targets: {valid}.",
                    structured={"valid": [*everyone, EVERYONE] if everyone else []})


def pick_next(done_order: Sequence[str], reported: Collection[str]) -> str | None:
    """For `nextCompleted`: the earliest finished task not yet reported, if any."""
    return next((t for t in done_order if t not in reported), None)


def clamp_timeout_ms(value: Any) -> int:
    return DEFAULT_AWAIT_MS if value is None else max(0, min(int(value), MAX_AWAIT_MS))
