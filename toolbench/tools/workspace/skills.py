"""The skill index: each `<skills_dir>/<name>/SKILL.md` as (name, description, path)."""

from __future__ import annotations

from pathlib import Path

import frontmatter

from ...core.workspace_settings import WorkspaceSettings
from .files import open_file
from .paths import SKILL_FILE, SKILLS_ROOT, Workspace


def list_skills(workspace: Path, settings: WorkspaceSettings) -> list[dict[str, str]]:
    """Name, description (the front matter's `description`, else "") and workspace path, by name.

    SKILL.md is read like any workspace file (through the resolver, regular files only), so
    a FIFO or a link out of the skill's folder gives no description instead of a hang."""
    ws = Workspace(workspace, settings)
    out = []
    for name in ws.skills():
        path = f"{SKILLS_ROOT}/{name}/{SKILL_FILE}"
        try:
            with open_file(ws, path) as f:
                data = f.read(ws)
            meta = frontmatter.loads(data.decode("utf-8-sig")).metadata
        except Exception:
            meta = {}
        description = meta.get("description")
        out.append({"name": name,
                    "description": str(description).strip() if description is not None else "",
                    "path": path})
    return out
