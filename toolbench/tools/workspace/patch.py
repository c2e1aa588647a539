"""`workspace.apply_patch`: replace a string in a file, over the matcher of edit_match (LiveAgent's
four passes, then Unicode punctuation and blank first/last lines, then edit_more's line-numbers,
whitespace-runs and escapes)."""

from __future__ import annotations

from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext
from .edit_match import apply_edit, unified_diff
from .files import OpenFile, count_lines, decode, note_written, open_file, require_current, version_json
from .paths import Workspace

_PUNCTUATION = "Unicode dashes, quotes or spaces differed and were matched as ASCII; new_string went in as given"
_BLANK = "blank first/last lines of old_string that the file lacks were dropped"
_NOTES = {  # upstream's notes for its three fuzzy strategies, and toolbench's own
    "line-endings": "line endings differed; the file's own line endings were kept",
    "trailing-whitespace": "trailing whitespace on each line was ignored",
    "indentation": "a uniform indentation shift was applied and new_string re-indented to the file",
    "unicode-punctuation": _PUNCTUATION,
    "blank-lines": _BLANK,
    "blank-lines+unicode-punctuation": f"{_BLANK}; {_PUNCTUATION}",
    "line-numbers": "the read tool's line-number prefixes were stripped from old_string (and from new_string "
                    "where every line had one) before matching",
    "whitespace-runs": "runs of spaces and tabs inside lines were read as one space; new_string went in as given",
    "escapes": "written-out escapes in old_string (such as \\n, \\t, \\\") were read as the characters they stand "
               "for (in new_string too where it was escaped the same way)",
}

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.apply_patch"),
    description=(
        "Edit a text file under work/, tmp/ or output/ by replacing `old_string` with `new_string`. Read the "
        "file to its end first. `old_string` must match exactly one place (copy it verbatim with a few lines of "
        "context); differences only in line endings, trailing whitespace, uniform indentation, Unicode "
        "punctuation (dashes, quotes, spaces) or blank first/last lines are tolerated and reported; no match shows "
        "the closest lines of the file and what differs. Set `replace_all: true` to replace every match, "
        "`expected_replacements` to assert the count, and `dry_run: true` to get the unified diff without writing."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative file path."},
            "old_string": {"type": "string", "description": "The exact text to replace (non-empty)."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every match. Default false."},
            "expected_replacements": {"type": "integer", "minimum": 1,
                                      "description": "Fail unless exactly this many replacements are made."},
            "dry_run": {"type": "boolean", "description": "Return the diff it would apply; write nothing."},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    },
    example={"path": "work/example.txt", "old_string": "hello", "new_string": "hello again"},
)


def apply_patch(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    # The folder's lock is held from the read to the replace: the CAS check holds when it writes.
    with open_file(ws, args["path"], write=True) as f:
        return _patch(ctx, ws, f, args)


def _patch(ctx: ToolContext, ws: Workspace, f: OpenFile, args: dict[str, Any]) -> ToolOutput:
    res = f.res
    data = f.read(ws)
    before = decode(res, data)
    # A dry run makes the same checks as the real call, so it predicts its outcome.
    require_current(ctx, res, f.version(data), action="apply_patch")
    replace_all = args.get("replace_all", False)
    result = apply_edit(before, args["old_string"], args["new_string"], replace_all=replace_all,
                        expected_replacements=args.get("expected_replacements"))
    lines = [f"Edit: {res.display}", f"replacements={result.replacements}", f"replaceAll={str(replace_all).lower()}"]
    if result.strategy != "exact":
        lines.append(f"matchStrategy={result.strategy} ({_NOTES[result.strategy]})")
    structured: dict[str, Any] = {
        "path": res.display, "replacements": result.replacements, "replaceAll": replace_all,
        "matchStrategy": result.strategy, "lines": list(result.lines), "dryRun": bool(args.get("dry_run")),
    }
    if args.get("dry_run"):
        diff = unified_diff(res.display, before, result.text)
        structured["diff"] = diff
        lines[0] = f"Dry run (nothing written): {res.display}"
        return ToolOutput(content="\n".join(lines) + "\n\n" + (diff or "(no change)"), structured=structured)
    total = count_lines(result.text)
    version = note_written(ctx, res, f.replace(ws, result.text)[1], total)
    structured.update(totalLines=total, **version_json(version))
    return ToolOutput(content="\n".join(lines), structured=structured, resource_refs=(res.display,))


TOOLS = (BuiltinTool(DESCRIPTOR, apply_patch),)
