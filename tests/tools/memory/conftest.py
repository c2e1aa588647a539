"""Benches offering the memory tools, on a fixed clock."""

from __future__ import annotations

import pytest
from memory_support import NOW

from toolbench import Profile


@pytest.fixture
def mem_profile():
    def make(**memory):
        profile = Profile.default().edit(allow=["builtin:memory.manage", "builtin:memory.query"])
        if memory:
            data = profile.model_dump(mode="json")
            data["memory"] |= memory
            profile = Profile.parse(data)
        return profile
    return make


@pytest.fixture
def bench(make_bench, mem_profile):
    return make_bench(profile=mem_profile())


@pytest.fixture
def inv(bench):
    inv = bench.invocation()
    inv.state.memory_clock = lambda: NOW
    return inv


@pytest.fixture
def mem(inv):
    """`mem(action, **fields)` calls memory.manage."""
    return lambda action, **fields: inv.call("memory_manage", {"action": action, **fields})
