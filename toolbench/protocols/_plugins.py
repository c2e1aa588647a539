"""Providers from installed packages: the entry-point group `toolbench.providers`.

A distribution declares one entry point per provider, named as the provider is:

    [project.entry-points."toolbench.providers"]
    mistral = "tb_mistral:MISTRAL"      # a Provider object, or a zero-argument callable making one

They are loaded once, the first time a name that is not built in is looked up (or `names()`,
`notices()` or `register` is called), so `import toolbench` imports none of them, and then
they work as if registered: by name in every function, the CLI (`toolbench snapshot --protocol
mistral`) and the widgets' selectors. An entry point that cannot be used (its import fails, it
is not a Provider, its name is not the provider's, is built in or is already taken) is skipped,
never raised: `notices()` says which and why, each as `protocol.plugin_skipped: ...`.

This module reads the group; what a name may be, and whether it is taken, is the registry's
rule (`_registry.accept_installed`), which it hands in: this module imports no registry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Final

from .types import Provider

GROUP: Final = "toolbench.providers"

Accept = Callable[[Provider, str], "str | None"]  # registers (provider, entry point name), or says why not

_lock: Final = threading.RLock()
_loaded = False
_loading = False  # read and set under the lock only: True in the one thread loading them
_names: list[str] = []  # the names the entry points registered (`reset` forgets them)
_notices: list[str] = []


def load(accept: Accept) -> None:
    """Register the group's providers through `accept`, once (a provider whose import looks a
    name up, or that registers itself, does not load them again)."""
    global _loaded, _loading
    if _loaded:
        return
    with _lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            _load_all(accept)
        finally:
            _loading, _loaded = False, True


def skipped() -> tuple[str, ...]:
    """The notices of the last load: what was skipped, and why."""
    return tuple(_notices)


def reset(remove: Callable[[str], None]) -> None:
    """Forget the installed providers (`remove` each name), to load the group again on the next
    lookup (a test that puts a distribution on `sys.path`; a notebook after a `pip install`)."""
    global _loaded
    with _lock:
        for name in _names:
            remove(name)
        _names.clear()
        _notices.clear()
        _loaded = False


def _load_all(accept: Accept) -> None:
    try:
        found = list(entry_points(group=GROUP))
    except Exception as exc:  # a broken distribution's metadata: nothing is installed then
        _notices.append(f"protocol.plugin_skipped: the `{GROUP}` entry points cannot be read "
                        f"({type(exc).__name__}: {exc})")
        return
    seen: set[tuple[str, str]] = set()
    for point in found:
        if (point.name, point.value) in seen:  # the same distribution found twice on sys.path
            continue
        seen.add((point.name, point.value))
        why = _install(point, accept)
        if why is not None:
            origin = f" ({point.dist.name} {point.dist.version})" if point.dist is not None else ""
            _notices.append(f"protocol.plugin_skipped: entry point `{point.name} = {point.value}`{origin} "
                            f"of `{GROUP}`: {why}")


def _install(point: EntryPoint, accept: Accept) -> str | None:
    """Register the provider `point` names; why not, when it cannot be."""
    try:
        target: Any = point.load()
    except Exception as exc:
        return f"it cannot be imported ({type(exc).__name__}: {exc})"
    if isinstance(target, type) or (callable(target) and not isinstance(target, Provider)):
        try:
            target = target()
        except Exception as exc:
            return f"calling it with no arguments failed ({type(exc).__name__}: {exc})"
    if not isinstance(target, Provider) or isinstance(target, type):
        return f"it gives {type(target).__name__}, not a Provider (a name and the six methods)"
    why = accept(target, point.name)
    if why is None:
        _names.append(target.name)
    return why
