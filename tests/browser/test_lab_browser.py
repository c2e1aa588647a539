"""The quickstart in a real browser: JupyterLab + headless Chromium driven through Playwright.

Starts JupyterLab on a temporary copy of the notebooks (loopback, no token), opens the
quickstart, runs all cells, picks a call name, types arguments, clicks call and checks the
result the model reads and the `tool-results/` file view. Saves a screenshot in the test's
temp folder; with TOOLBENCH_UPDATE_SCREENSHOT=1 it refreshes the README's `docs/screenshot.png`.
Chromium is Debian's package (never `playwright install`); `.ci/run` installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
README_SCREENSHOT = ROOT / "docs" / "screenshot.png"
SERVER_START_S = 90
KERNEL_S = 120  # a cold kernel running every cell of the quickstart
STEP_MS = 60_000

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(apt-get install -y chromium; .ci/run does it)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_server(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)  # polling a server that is starting: a bounded wait, not a sleep-for-correctness
    raise AssertionError(f"jupyter lab did not answer in {SERVER_START_S}s:\n{log.read_text()[-3000:]}")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server on a copy of the notebooks; yields its base URL, stops it after."""
    root = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", root)
    config = tmp_path / "config"
    (config / "labconfig").mkdir(parents=True)
    # No news pop-up over the notebook.
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    port = _free_port()
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.token=",
               "--ServerApp.password=", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = tmp_path / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(url, proc, log)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _wait_idle(page, timeout_ms: int) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=timeout_ms)


def _accept_kernel_dialog(page) -> None:  # type: ignore[no-untyped-def]
    """JupyterLab may ask which kernel to start; take the notebook's own (Python 3)."""
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    try:
        accept.wait_for(state="visible", timeout=5_000)
    except Exception:  # no dialog this time
        return
    accept.click()


def test_quickstart_runs_and_the_console_calls_a_tool(lab: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            console_log: list[str] = []
            page.on("console", lambda msg: console_log.append(f"{msg.type}: {msg.text}"))
            page.set_default_timeout(STEP_MS)
            page.goto(f"{lab}/lab/tree/01-quickstart.ipynb", timeout=STEP_MS)
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=STEP_MS)
            _accept_kernel_dialog(page)
            _wait_idle(page, KERNEL_S * 1000)

            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            call_name = page.locator(".tb-call-name select").first
            call_name.wait_for(state="attached", timeout=KERNEL_S * 1000)
            _wait_idle(page, KERNEL_S * 1000)
            call_name.scroll_into_view_if_needed()
            call_name.select_option("long_report")
            arguments = page.locator(".tb-arguments textarea").first
            arguments.fill('{"lines": 2000}')
            page.locator(".tb-call-button").first.click()

            content = page.locator(".tb-result-content").first
            expect(content).to_contain_text("too large to include in full (75999 characters)", timeout=STEP_MS)
            expect(content).to_contain_text("tool-results/inv_demo/round-007-call_", timeout=STEP_MS)
            file_view = page.locator(".tb-result-file").first
            expect(file_view).to_contain_text("line 00001: the quick brown fox jumps", timeout=STEP_MS)
            expect(file_view).to_contain_text("line 00200: the quick brown fox jumps", timeout=STEP_MS)

            # A malformed call, typed by hand, comes back as an error result with its code.
            call_name.select_option("dice_roll")
            arguments.fill('{"formula":')
            page.locator(".tb-call-button").first.click()
            expect(page.locator(".tb-result .tb-result-error").first).to_contain_text(
                "tool.invalid_arguments", timeout=STEP_MS)

            # The screenshot shows the long result and its file side by side.
            page.locator(".tb-history-row").nth(6).click()
            expect(file_view).to_contain_text("line 00001:", timeout=STEP_MS)
            page.locator(".tb-console").first.evaluate("el => el.scrollIntoView({block: 'start'})")
            shot = README_SCREENSHOT if os.environ.get("TOOLBENCH_UPDATE_SCREENSHOT") == "1" else tmp_path / "lab.png"
            page.screenshot(path=str(shot), timeout=STEP_MS)
            assert shot.stat().st_size > 10_000  # a real page, not an empty frame
        except Exception:
            failure = tmp_path / "failure.png"
            page.screenshot(path=str(failure), full_page=True)
            print(f"browser state at the failure: {failure}")
            print("\n".join(console_log[-40:]))
            raise
        finally:
            browser.close()
