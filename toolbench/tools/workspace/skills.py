"""The skill index: each `<skills_dir>/<name>/SKILL.md` as (name, description, path).

SKILL.md is read like any workspace file (through the resolver, regular files only, the file
tools' size cap), so a FIFO or a link out of the skill's folder cannot hang the listing, and its
front matter through `skills_store.front_matter_of` (the one safe reader). A skill whose
SKILL.md cannot be read is still listed, with an empty description and the refusal's `code`
and `problem`, so one bad file neither hides nor breaks the others.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import ToolError
from ...core.workspace_settings import WorkspaceSettings
from ..skills_store import front_matter_of
from .files import open_file
from .paths import SKILL_FILE, SKILLS_ROOT, Workspace


def list_skills(workspace: Path, settings: WorkspaceSettings) -> list[dict[str, str]]:
    """Name, description (the front matter's `description`, else "") and workspace path, by
    name; `code` and `problem` too for a skill whose SKILL.md is refused."""
    ws = Workspace(workspace, settings)
    out = []
    for name in ws.skills():
        path = f"{SKILLS_ROOT}/{name}/{SKILL_FILE}"
        entry = {"name": name, "description": "", "path": path}
        try:
            with open_file(ws, path) as f:
                data = f.read(ws)
            description = front_matter_of(data, path).metadata.get("description")
            if description is not None:
                entry["description"] = str(description).strip()
        except ToolError as exc:
            entry |= {"code": exc.code, "problem": exc.message}
        out.append(entry)
    return out
