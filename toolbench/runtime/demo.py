"""The demo workspace and the demo extension tools the notebooks and `Workbench.demo()` use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .demo_chat import DEMO_CHAT_FILES

if TYPE_CHECKING:
    from .bench import Workbench

DEMO_FILES: dict[str, str] = {
    "work/README.md": (
        "# Demo workspace\n\n"
        "This folder is the agent's workspace. `work/`, `tmp/` and `output/` are writable;\n"
        "`tool-results/` holds long tool results and is read-only to tools.\n"
    ),
    "work/notes.md": (
        "# Notes\n\n"
        "- The dragon sleeps under the northern hill.\n"
        "- The innkeeper owes the party 12 gold.\n"
        "- Next session: the market at dawn.\n"
    ),
    "work/inventory.json": json.dumps(
        {"party": [{"name": "Ada", "hp": 12, "items": ["rope", "lantern"]},
                   {"name": "Brom", "hp": 17, "items": ["axe"]}]}, indent=2) + "\n",
    "work/story.py": (
        "def greet(name):\n"
        "    message = f\"Hello, {name}!\"\n"
        "    return message\n"
    ),
}


def seed_demo_workspace(root: Path) -> None:
    for relative, text in {**DEMO_FILES, **DEMO_CHAT_FILES}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text, encoding="utf-8")


def register_demo_tools(bench: Workbench) -> None:
    """Three extension tools that show the three outcomes: JSON, a long result, an error."""

    def weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, object]:
        """Today's weather for a city (demo data, always the same)."""
        celsius = 8 + len(city) % 10
        return {"city": city, "temperature": celsius if unit == "c" else round(celsius * 9 / 5 + 32),
                "unit": unit, "sky": "overcast"}

    def long_report(lines: int = 2000) -> str:
        """A long report (about 40 characters a line) to show how long results are externalised."""
        return "\n".join(f"line {i:05d}: the quick brown fox jumps" for i in range(1, lines + 1))

    def fail(reason: str = "the demo tool always fails") -> str:
        """Always raises, to show an extension error result."""
        raise RuntimeError(reason)

    for fn in (weather, long_report, fail):
        tool_id = bench.register_tool("demo", fn)
        bench.enable(tool_id)
