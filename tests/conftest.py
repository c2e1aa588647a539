"""Shared fixtures: benches on `tmp_path` that close themselves, fake descriptors, catalogs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents_support import PARENT_ONLY
from hypothesis import settings
from plugin_support import MISTRAL_ENTRY, installed, write_dist

from toolbench import Profile, ToolDescriptor, ToolId, Workbench

# No per-example deadline: a loaded machine must not turn a slow example into a failure.
settings.register_profile("toolbench", deadline=None)
settings.load_profile("toolbench")

# toolbench's own pytest plugin (toolbench_bench, assert_golden, toolbench_call). Named by its
# module, as its pytest11 entry point is, so an install that has the entry point registers it once.
pytest_plugins = ["toolbench.pytest_plugin"]



def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "user_provider: a test parametrized with protocol=\"mistral\" runs with "
                            "tests/fixtures/user_provider installed (conftest._user_provider)")


@pytest.fixture(autouse=True)
def _user_provider(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """In a module marked `user_provider`, a test parametrized with `protocol="mistral"` runs
    with the provider outside the package (tests/fixtures/user_provider) installed through its
    `toolbench.providers` entry point, so the built-in providers' tests are its tests too."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or callspec.params.get("protocol") != "mistral" \
            or request.node.get_closest_marker("user_provider") is None:
        yield
        return
    root = tmp_path_factory.mktemp("site")
    write_dist(root, "tb_mistral", MISTRAL_ENTRY)
    with installed(root):
        yield


# The nine builtins a session does not offer (tauritavern reference §3.3).
SESSION_EXCLUDED = (
    "chat.search",
    "chat.read_messages",
    "worldinfo.read_activated",
    "workspace.commit",
    "workspace.finish",
    "agent.delegate",
    "agent.handoff",
    "agent.await",
    "task.return",
)

# The sixteen upstream builtins (reference §8); the completion tools must end their round.
UPSTREAM_BUILTINS = (
    "workspace.list_files",
    "workspace.read_file",
    "workspace.search_files",
    "workspace.write_file",
    "workspace.apply_patch",
    "workspace.shell",
    "workspace.commit",
    "workspace.finish",
    "chat.search",
    "chat.read_messages",
    "worldinfo.read_activated",
    "dice.roll",
    "agent.delegate",
    "agent.await",
    "agent.handoff",
    "task.return",
)
COMPLETION_TOOLS = frozenset({"workspace.finish", "agent.handoff", "task.return"})

QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "what to look for"}},
    "required": ["query"],
    "additionalProperties": False,
}


def fake(tool_id: str, **fields: Any) -> ToolDescriptor:
    """A descriptor for a tool that need not exist (tests of preparation only)."""
    fields.setdefault("description", f"fake {tool_id}")
    return ToolDescriptor(id=ToolId.parse(tool_id), **fields)


def upstream_catalog_descriptors() -> dict[ToolId, ToolDescriptor]:
    """Fake descriptors of all sixteen upstream builtins, scene-limited as upstream."""
    out = {}
    for name in UPSTREAM_BUILTINS:
        descriptor = fake(
            f"builtin:{name}",
            input_schema=QUERY_SCHEMA,
            scenes=frozenset({"chat"}) if name in SESSION_EXCLUDED else frozenset({"chat", "session"}),
            completes_round=name in COMPLETION_TOOLS,
            parent_only=name in PARENT_ONLY,
        )
        out[descriptor.id] = descriptor
    return out


@pytest.fixture
def descriptor() -> Callable[..., ToolDescriptor]:
    """`descriptor("builtin:x", scenes=frozenset({"chat"}))` builds a fake descriptor."""
    return fake


@pytest.fixture
def session_excluded() -> tuple[str, ...]:
    """The native names of the nine builtins a session does not offer."""
    return SESSION_EXCLUDED


@pytest.fixture
def upstream_builtins() -> tuple[str, ...]:
    """The native names of the sixteen upstream builtins, in reference §8 order."""
    return UPSTREAM_BUILTINS


@pytest.fixture
def upstream_catalog() -> dict[ToolId, ToolDescriptor]:
    return upstream_catalog_descriptors()


def small_profile(*allow: str, **tools: Any) -> Profile:
    """The default profile offering only `allow` (dice.roll when empty), with `tools` settings."""
    return Profile.default().edit(allow=list(allow or ("builtin:dice.roll",)), **tools)


@pytest.fixture
def profile_with() -> Callable[..., Profile]:
    return small_profile


@pytest.fixture
def make_bench(tmp_path: Path) -> Iterator[Callable[..., Workbench]]:
    """A factory of benches on folders under `tmp_path`; every bench is closed afterwards."""
    made: list[Workbench] = []

    def make(folder: str = "ws", profile: Profile | str | Path | None = None, **options: Any) -> Workbench:
        bench = Workbench(tmp_path / folder, profile=profile if profile is not None else small_profile(),
                          **options)
        made.append(bench)
        return bench

    yield make
    for bench in made:
        bench.close()


@pytest.fixture
def bench(make_bench: Callable[..., Workbench]) -> Workbench:
    """A bench on `tmp_path / "ws"` offering only `dice.roll`, seeded; closed after the test."""
    return make_bench(seed=1)
