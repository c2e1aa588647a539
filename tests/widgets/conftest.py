"""Fixtures for the widget tests: a demo bench with a fixed invocation, and a check that no
handler exception was swallowed by `Button.click()` (it logs them instead of raising)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from toolbench import Workbench
from toolbench.widgets import WorkbenchApp


@pytest.fixture
def bench() -> Iterator[Workbench]:
    with Workbench.demo(seed=7) as bench:
        yield bench


@pytest.fixture
def app(bench: Workbench) -> WorkbenchApp:
    return WorkbenchApp(bench, bench.invocation("chat", id="inv_test"))


@pytest.fixture(autouse=True)
def no_swallowed_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.DEBUG)
    yield
    swallowed = [r for r in caplog.records if "Exception in callback" in r.getMessage()
                 or r.name == "toolbench.widgets"]
    assert not swallowed, [r.getMessage() for r in swallowed]
