"""The providers by name: the four built in, those installed packages declare, and those a user
registers at run time.

Every public function takes a provider or a name; `get_provider` is the one place a name
becomes a provider, and `names()` the one list of names (the CLI's `--protocol` choices and
the snapshot panel's selector read it). The built-in names are fixed: they cannot be replaced
or unregistered, so `"openai"` means OpenAI's API in every notebook, run log and test.

Installed providers come from the entry-point group `toolbench.providers` (`_plugins`), loaded
once, the first time a name other than a built-in one is looked up (or `names()` is asked).
`full_provider` is a provider with its model side (`_model_side`): itself when it has one.
"""

from __future__ import annotations

import re
import threading
from typing import Final, cast

from ..core.errors import ToolbenchError
from . import _plugins
from ._anthropic import ANTHROPIC
from ._gemini import GEMINI
from ._model_side import MODEL_SIDE, WithDefaults
from ._openai_chat import OPENAI
from ._openai_responses import OPENAI_RESPONSES
from .types import FullProvider, Provider

_BUILTIN: Final[dict[str, Provider]] = {p.name: p for p in (OPENAI, OPENAI_RESPONSES, ANTHROPIC, GEMINI)}
NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

# Copied on write, never edited in place: a reader (a render on another thread) keeps a whole
# dict while a writer swaps in the next one.
_providers: dict[str, Provider] = dict(_BUILTIN)
_write_lock: Final = threading.Lock()


def names() -> tuple[str, ...]:
    """Every provider name: the built-in ones (`PROTOCOLS`), then the installed and registered
    ones in the order they came (the installed ones load first)."""
    _plugins.load(accept_installed)
    return tuple(_providers)


def get_provider(protocol: str | Provider) -> Provider:
    """The provider registered under `protocol`, or `protocol` itself when it is a provider
    (registered or not). Anything else is `protocol.unknown`."""
    if isinstance(protocol, str):
        found = _providers.get(protocol)
        if found is None:  # maybe an installed provider, not looked for yet
            _plugins.load(accept_installed)
            found = _providers.get(protocol)
        if found is not None:
            return found
    elif isinstance(protocol, Provider) and not isinstance(protocol, type):
        _check_name(protocol)
        return protocol
    raise _unknown(protocol)


def full_provider(protocol: str | Provider) -> FullProvider:
    """`get_provider(protocol)` with its model side (`FullProvider`): the provider itself when it
    has every method (a `BaseProvider` does), else the provider with `ModelSide`'s defaults for
    what it lacks (an empty reading of replies, plain user messages, no scripted bodies)."""
    provider = get_provider(protocol)
    if all(callable(getattr(provider, attr, None)) for attr in MODEL_SIDE):
        return cast(FullProvider, provider)  # checked just above
    return WithDefaults(provider)  # the six forwarded, the rest defaults


def _check_name(provider: Provider) -> None:
    """A provider object's name is a registrable one, and a built-in name only on the built-in
    object: `openai` in a run log or a `Problem` means OpenAI's API."""
    name = provider.name
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ToolbenchError("bench.misuse", f"provider name {name!r} is not 1 to 64 of A-Z a-z 0-9 . _ -")
    if name in _BUILTIN and _BUILTIN[name] is not provider:
        raise ToolbenchError("protocol.name_taken", f"provider name {name!r} is built in; give yours another name")


def register(provider: Provider, *, replace: bool = False) -> Provider:
    """Make `provider` known under its `name`, for every function that takes a name, the CLI
    and the widgets; returns it.

    The name is 1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit (it
    goes into run logs and `Problem.protocol`). A name already registered is refused with
    `protocol.name_taken` unless `replace=True`; a built-in name is always refused."""
    if not isinstance(provider, Provider) or isinstance(provider, type):
        raise ToolbenchError("bench.misuse", f"{provider!r} is not a Provider object (a name and the six methods; "
                             "a class must be instantiated)")
    _check_name(provider)
    name = provider.name
    _plugins.load(accept_installed)  # the installed providers come first, and a clash with one is a clash
    with _write_lock:
        global _providers
        if name in _BUILTIN or (name in _providers and not replace):
            why = "is built in" if name in _BUILTIN else "is taken; pass replace=True to replace it"
            raise ToolbenchError("protocol.name_taken", f"provider name {name!r} {why}")
        _providers = {**_providers, name: provider}
    return provider


def unregister(name: str) -> None:
    """Forget the provider registered under `name`; a built-in one stays (`protocol.name_taken`),
    an unknown name is `protocol.unknown`."""
    with _write_lock:
        global _providers
        if name in _BUILTIN:
            raise ToolbenchError("protocol.name_taken", f"provider name {name!r} is built in; it cannot be removed")
        if name not in _providers:
            raise _unknown(name)
        _providers = {k: v for k, v in _providers.items() if k != name}


def _add(provider: Provider) -> None:
    """Register an installed provider (the caller checked it); nothing if its name is taken."""
    with _write_lock:
        global _providers
        if provider.name not in _providers:
            _providers = {**_providers, provider.name: provider}


def _remove(name: str) -> None:
    with _write_lock:
        global _providers
        if name not in _BUILTIN:
            _providers = {k: v for k, v in _providers.items() if k != name}


def accept_installed(provider: Provider, entry_name: str) -> str | None:
    """Register a provider an entry point named `entry_name` gave; why not, when it cannot be."""
    try:
        _check_name(provider)
    except ToolbenchError as exc:
        return exc.message
    name = provider.name
    if name in _BUILTIN:
        return f"provider name {name!r} is built in"
    if name != entry_name:
        return f"the provider's name is {name!r}; name the entry point as the provider is"
    taken = _providers.get(name)
    if taken is provider:  # it registered itself when imported
        return None
    if taken is not None:
        return f"provider name {name!r} is taken (another entry point, or a register() before the lookup)"
    _add(provider)
    return None


def notices() -> tuple[str, ...]:
    """What was skipped of the installed providers, and why (`protocol.plugin_skipped: ...`)."""
    _plugins.load(accept_installed)
    return _plugins.skipped()


def reset_installed() -> None:
    """Forget the installed providers, to load the group again on the next lookup (a test that
    puts a distribution on `sys.path`; a notebook after a `pip install`)."""
    _plugins.reset(_remove)


def _unknown(protocol: object) -> ToolbenchError:
    return ToolbenchError("protocol.unknown", f"unknown protocol {protocol!r}; use one of {', '.join(names())}")
