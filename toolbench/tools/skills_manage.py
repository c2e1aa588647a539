"""`skills.manage`: LiveAgent's SkillsManager (`skillTools.ts`; reference §7.2) over the
profile's skills folder (`profile.workspace.skills_dir`, else the workspace's `skills/`).

Actions: `list`, `read`, `create`, `validate`, `package`, `delete`, `install`. Installs take a
workspace path (a skill folder, a `.zip`/`.skill` archive or a SKILL.md file); URL sources and
the ClawHub actions are refused (skills.source_unsupported, skills.action_unsupported): this
toolbench has no network installer. Every write goes through `skills_store` (stage, check,
rename into place); the other tools still see `skills/` read-only.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Final

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from . import skills_archive as archive
from . import skills_store as store
from .base import BuiltinTool, ToolContext
from .workspace.files import open_file
from .workspace.paths import SKILLS_ROOT, Workspace
from .workspace.skills import list_skills

ACTIONS: Final = ("read", "list", "install", "create", "validate", "package", "delete")
UNSUPPORTED: Final = ("clawhub_search", "clawhub_install")
DEFAULT_READ_LINES: Final = 200
_STR = {"type": "string"}

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("skills.manage"),
    description=(
        "Manage skills (folders with a SKILL.md). `action`: list; read (`path` as `skill://name/file`, "
        "`offset` 0-based line, `length` lines, default 200); validate, package, delete (`name`); create "
        "(`name`, `description`, `body`, `files` [{path, content}], `conflict` default fail); install "
        "(`source`: a workspace path to a skill folder, .zip/.skill archive or SKILL.md; `name` renames a "
        "single skill; `conflict` backup (default), fail or overwrite)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": [*ACTIONS, *UNSUPPORTED]},
            "path": _STR, "offset": {"type": "integer", "minimum": 0},
            "length": {"type": "integer", "minimum": 1, "maximum": 2000},
            "source": _STR, "name": _STR, "description": _STR, "body": _STR,
            "files": {"type": "array", "items": {"type": "object", "properties": {"path": _STR, "content": _STR},
                                                 "required": ["path", "content"], "additionalProperties": False}},
            "conflict": {"type": "string", "enum": list(store.CONFLICTS)},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    example={"action": "list"},
)


def _need(args: dict[str, Any], key: str, action: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolError("skills.argument_missing", f"action `{action}` needs `{key}`.", structured={"field": key})
    return value


def _root(ws: Workspace) -> Path:
    return ws.skills_dir


def _rel_of(raw: str) -> str:
    """`skill://a/b`, `skill:a/b`, `skills/a/b`, `a/SKILL.md` -> `skills/a/b` (workspace form)."""
    for prefix in ("skill://", "skill:", f"{SKILLS_ROOT}/"):
        if raw.startswith(prefix):
            raw = raw[len(prefix):]
            break
    raw = raw.strip("/")
    return f"{SKILLS_ROOT}/{raw}" if "/" in raw else f"{SKILLS_ROOT}/{raw}/{store.SKILL_FILE}"


def _read(ws: Workspace, args: dict[str, Any]) -> ToolOutput:
    rel = _rel_of(_need(args, "path", "read"))
    with open_file(ws, rel) as f:  # the workspace resolver: confined, regular files only
        text = f.read(ws).decode("utf-8-sig", errors="replace")
    lines = text.splitlines()
    offset, length = int(args.get("offset", 0)), int(args.get("length", DEFAULT_READ_LINES))
    shown = lines[offset:offset + length]
    more = offset + len(shown) < len(lines)
    tail = f"\n[lines {offset + 1}-{offset + len(shown)} of {len(lines)}; pass offset {offset + len(shown)} for more]"
    return ToolOutput("\n".join(shown) + (tail if more else ""),
                      structured={"path": rel, "offset": offset, "lines": len(shown), "totalLines": len(lines),
                                  "truncated": more})


def _list(ctx: ToolContext) -> ToolOutput:
    skills = list_skills(ctx.workspace, ctx.profile.workspace)
    lines = [f"- {s['name']}: {s['description']}" if "code" not in s else
             f"- {s['name']}: (unreadable, {s['code']}: {s['problem']})" for s in skills]
    text = "\n".join(lines) or "No skills installed."
    return ToolOutput(text, structured={"skills": skills})


def _install(ws: Workspace, args: dict[str, Any]) -> ToolOutput:
    source = _need(args, "source", "install").strip()
    if "://" in source or source.lower().startswith(("github.com/", "www.")):
        raise ToolError("skills.source_unsupported", "URL and GitHub sources are not supported here; "
                        "install from a workspace folder or a .zip/.skill archive.",
                        structured={"source": source[:200]})
    conflict = str(args.get("conflict", "backup"))
    name = store.check_name(args["name"]) if "name" in args else None
    root = _root(ws)
    loc = ws.locate(source, field="source")
    try:
        real, shown = loc.res.real, loc.res.display
        if not real.exists():
            raise ToolError("skills.source_not_found", f"`{source[:120]}` does not exist.",
                            structured={"source": source[:200]})
        with store.staging_area(root):
            tmp = store.staging_dir(root, "source")
            try:
                installed = _install_from(root, real, shown, tmp, name, conflict)
            finally:
                store.remove(tmp)
    finally:
        loc.close()
    text = "\n".join(f"Installed skill `{i['name']}`" + (f" (previous copy kept as .backups/{i['backup']})"
                                                         if i["backup"] else "") for i in installed)
    return ToolOutput(text, structured={"installed": installed})


def _install_from(root: Path, real: Path, shown: str, tmp: Path, name: str | None,
                  conflict: str) -> list[dict[str, Any]]:
    """Install the skills of the source `real` (the model's `shown`); an archive is extracted to `tmp`."""
    if real.is_file() and real.suffix.lower() in (".zip", ".skill"):
        archive.extract_archive(real, tmp)
        found_in = tmp  # an archive's entries are named as if it were a folder: `work/a.zip/x/SKILL.md`
    elif real.is_file() and real.name == store.SKILL_FILE:
        found_in, shown = real.parent, posixpath.dirname(shown)
    elif real.is_dir():
        found_in = real
    else:
        raise ToolError("skills.source_unsupported", "a source is a skill folder, a .zip/.skill archive "
                        "or a SKILL.md file.", structured={"source": shown[:200]})
    candidates = store.discover(found_in)
    if not candidates:
        raise ToolError("skills.source_not_found", "no skill folder (one holding SKILL.md) in the source.",
                        structured={"source": shown[:200]})
    if name is not None and len(candidates) != 1:
        raise ToolError("skills.argument_invalid", "`name` needs exactly one skill in the source.",
                        structured={"field": "name"})
    installed = []
    for folder in candidates:
        display = posixpath.normpath(posixpath.join(shown, folder.relative_to(found_in).as_posix(), store.SKILL_FILE))
        meta = store.load_metadata(folder, display).metadata
        target, backup = store.install_dir(root, folder, name or str(meta.get("name", folder.name)), conflict,
                                           display=display)
        installed.append({"name": target.name, "backup": backup.name if backup else None})
    return installed


def _create(ws: Workspace, args: dict[str, Any]) -> ToolOutput:
    name = store.check_name(store.normalize_name(_need(args, "name", "create")))
    description = _need(args, "description", "create").strip()
    if len(description.encode()) > store.MAX_DESCRIPTION_CHARS:
        raise ToolError("skills.invalid", f"description is too long; maximum is {store.MAX_DESCRIPTION_CHARS}.")
    body = str(args.get("body") or "").strip() or f"# {name.replace('-', ' ').title()}\n\n## Workflow\n\n1. ..."
    root = _root(ws)
    with store.staging_area(root):
        return _create_in(root, name, description, body, args)


def _create_in(root: Path, name: str, description: str, body: str, args: dict[str, Any]) -> ToolOutput:
    tmp = store.staging_dir(root, "create")
    try:
        src = tmp / name
        src.mkdir()
        quoted = '"' + description.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        (src / store.SKILL_FILE).write_text(f"---\nname: {name}\ndescription: {quoted}\n---\n\n{body}\n", "utf-8")
        for entry in args.get("files") or []:
            rel = store.check_child_path(entry["path"])
            if rel.name.lower() in ("skill.md", "skill.json", "readme.md"):
                raise ToolError("skills.path_invalid", "use name/description/body for SKILL.md; files cannot "
                                "replace the skill's metadata.", structured={"path": str(rel)})
            if len(entry["content"].encode()) > store.MAX_FILE_BYTES:
                raise ToolError("skills.source_too_large", f"`{rel}` is past {store.MAX_FILE_BYTES} bytes.")
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_text(entry["content"], "utf-8")
        target, backup = store.install_dir(root, src, name, str(args.get("conflict", "fail")),
                                           display=f"{SKILLS_ROOT}/{name}/{store.SKILL_FILE}")
    finally:
        store.remove(tmp)
    return ToolOutput(f"Created skill `{name}`.",
                      structured={"name": name, "backup": backup.name if backup else None,
                                  "path": f"{SKILLS_ROOT}/{target.name}/{store.SKILL_FILE}"})


def manage(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    action = args["action"]
    if action in UNSUPPORTED:
        raise ToolError("skills.action_unsupported", f"`{action}` (ClawHub) is not available in this toolbench; "
                        "install from a workspace folder or archive.", structured={"action": action})
    ws = Workspace.of(ctx)
    if action == "list":
        return _list(ctx)
    if action == "read":
        return _read(ws, args)
    if action == "install":
        return _install(ws, args)
    if action == "create":
        return _create(ws, args)
    name = store.check_name(_need(args, "name", action))
    if action == "delete":
        store.delete(_root(ws), name)
        return ToolOutput(f"Deleted skill `{name}`.", structured={"name": name})
    problems = store.validate_dir(_root(ws) / name)
    if action == "validate":
        return ToolOutput(f"Skill `{name}` is valid." if not problems else
                          f"Skill `{name}` has {len(problems)} problem(s):\n" + "\n".join(f"- {p}" for p in problems),
                          structured={"name": name, "ok": not problems, "errors": problems})
    if problems:  # package
        raise ToolError("skills.invalid", f"skill `{name}` does not validate: " + "; ".join(problems),
                        structured={"name": name, "errors": problems})
    archive = store.package(_root(ws), name)
    return ToolOutput(f"Packaged skill `{name}` as {archive.name} in the skills folder's {store.PACKAGES}/.",
                      structured={"name": name, "archive": str(archive)})


TOOLS = (BuiltinTool(DESCRIPTOR, manage),)
