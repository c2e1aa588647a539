"""Tool sources from installed packages: the entry-point group `toolbench.sources`.

A distribution declares one entry point per source, a `ToolSource` subclass or a zero-argument
callable making one:

    [project.entry-points."toolbench.sources"]
    remote = "tb_remote:RemoteTools"

`bench.add_installed_sources()` adds them all (the command line does it for every bench it
opens, so `toolbench snapshot` and `call` see their tools, and the app for the bench it shows);
called again it adds only what was not added yet (a package installed since). One that cannot
be used (its import or its factory fails, it makes no ToolSource, its kind is taken, its tools
cannot be read) is skipped and said, each as `tool.source_plugin_skipped: ...`, never raised.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Final

from .sources import ToolSource

GROUP: Final = "toolbench.sources"


def add_installed(add: Callable[[ToolSource], None], added: set[str]) -> list[str]:
    """`add(source)` for every installed source not in `added` (entry points as `name = value`;
    each one added joins it, and a recipe carries those names); the notices of those skipped."""
    notices: list[str] = []
    try:
        found = list(entry_points(group=GROUP))
    except Exception as exc:  # a broken distribution's metadata: nothing is installed then
        return [f"tool.source_plugin_skipped: the `{GROUP}` entry points cannot be read ({exc})"]
    for point in found:
        key = f"{point.name} = {point.value}"
        if key in added:
            continue
        try:
            made = point.load()
            source = made() if callable(made) else made
            if not isinstance(source, ToolSource):
                raise TypeError(f"it made a {type(source).__name__}, not a ToolSource")
            add(source)
            added.add(key)
        except Exception as exc:  # a plugin's failure is its own, never the bench's
            notices.append(f"tool.source_plugin_skipped: `{point.name}` ({point.value}): {type(exc).__name__}: {exc}")
    return notices
