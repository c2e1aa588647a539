"""The skill index: each `<skills_dir>/<name>/SKILL.md` as (name, description, path)."""

from __future__ import annotations

from pathlib import Path

import frontmatter

from ...core.workspace_settings import WorkspaceSettings
from .paths import SKILL_FILE, SKILLS_ROOT, Workspace


def list_skills(workspace: Path, settings: WorkspaceSettings) -> list[dict[str, str]]:
    """Name, description (the front matter's `description`, else "") and workspace path, by name."""
    out = []
    for name, folder in Workspace(workspace, settings).skills().items():
        try:
            meta = frontmatter.load(str(folder / SKILL_FILE)).metadata
        except Exception:
            meta = {}
        description = meta.get("description")
        out.append({"name": name,
                    "description": str(description).strip() if description is not None else "",
                    "path": f"{SKILLS_ROOT}/{name}/{SKILL_FILE}"})
    return out
