"""The workbench app in a real browser: JupyterLab + Debian's Chromium driven through Playwright.

Every step is a mouse click (or key press) on a visible control, so a control that is covered
or has no height fails its click, whatever the widget unit tests say. Two notebooks, one lab:

- the quickstart, after Run All: a long result's `tool-results/` file paged forward and back, by
  keyboard, to a line, searched; a malformed call's error banner;
- a notebook written here: a nested-object call from the form, an unknown call name, a history
  row re-run and copied, an image result beside what each provider receives, an approval
  approved and one denied, a prompt sent from the chat to a scripted model, a streamed run seen
  growing and stopped mid-answer, at 1440 and at 1024 px, then a closed bench that refuses.

Screenshots go to `$TOOLBENCH_SCREENSHOT_DIR` (default: the test's temp folder); with
TOOLBENCH_UPDATE_SCREENSHOT=1 the quickstart's refreshes the README's `docs/screenshot.png`.
Chromium is Debian's package (never `playwright install`); `.ci/run` installs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
README_SCREENSHOT = ROOT / "docs" / "screenshot.png"
SERVER_START_S = 90
KERNEL_S = 120  # a cold kernel running every cell of the quickstart
STEP_MS = 60_000

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(apt-get install -y chromium; .ci/run does it)")

# The notebook of the second test: every feature of the app on one bench.
APP_SETUP = '''\
import asyncio, json, struct, zlib
from toolbench import Attachment, ToolOutput, Workbench
from toolbench.models import OpenAIChat
from toolbench.examples.demo_mcp import build_server
from toolbench.testing import ScriptedModel
from toolbench.widgets import WorkbenchApp

def png(width, height, rgb):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\\x89PNG\\r\\n\\x1a\\n" + body

bench = Workbench.demo(seed=7)
ISSUE = {"type": "object", "required": ["title", "owner"], "properties": {
    "title": {"type": "string", "description": "One line."},
    "owner": {"type": "object", "required": ["name"],
              "properties": {"name": {"type": "string"}, "email": {"type": "string"}}},
    "labels": {"type": "array", "items": {"type": "string"}}}}
bench.enable(bench.register_tool("tracker", lambda **issue: json.dumps(issue, sort_keys=True), name="create_issue",
                                 description="File an issue in the tracker.", input_schema=ISSUE))
bench.enable(bench.register_tool("camera", lambda: ToolOutput("a red square", attachments=[
    Attachment(kind="image", mime_type="image/png", data=png(48, 48, (220, 30, 30)))]),
    name="snap", description="Take a picture."))
bench.set_permission("extension/demo:weather", "ask")
bench.mcp.add("demo", server=build_server())
bench.enable("mcp/demo:echo")
bench.mcp.add("everything", command=[EVERYTHING], timeout=60)  # the reference server, for resources and prompts

async def nap(seconds: float = 30.0) -> str:
    """Sleep, then answer (a call to cancel)."""
    await asyncio.sleep(seconds)
    return "woke up"

bench.enable(bench.register_tool("clock", nap, name="nap"))
rows = (f"row {i:04d} of a big builtin read\\n" for i in range(1, 3001))
(bench.workspace / "work" / "big.txt").write_text("".join(rows))
chat_model = ScriptedModel([[("dice_roll", {"formula": "2d6"})], "You rolled 2d6 from the chat."])

class SlowStream:  # streams some text and half a call as Chat Completions chunks, then waits (stop ends it)
    protocol, model = "openai", "slow-stream"
    def __init__(self):
        shape = OpenAIChat(None, "slow-stream")
        self.read, self.user_message, self.request = shape.read, shape.user_message, shape.request
    async def send(self, body):
        raise RuntimeError("this model only streams")
    async def stream(self, body):
        call = {"index": 0, "id": "call_s", "type": "function", "function": {"name": "dice_roll", "arguments": ""}}
        half = {"index": 0, "function": {"arguments": '{"formula": "2'}}
        for delta in [{"role": "assistant", "content": ""}, {"content": "Rolling the dice "}, {"content": "for you."},
                      {"tool_calls": [call]}, {"tool_calls": [half]}]:
            yield {"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "slow-stream",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        await asyncio.Event().wait()

app = WorkbenchApp(bench, bench.invocation("chat", id="inv_browser"),
                   models={"scripted": chat_model, "streamed": SlowStream()})
app
'''


def _notebook(*cells: str) -> dict[str, Any]:
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                       "source": source} for i, source in enumerate(cells)],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


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


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on a copy of the notebooks plus the app notebook; yields its URL."""
    tmp_path = tmp_path_factory.mktemp("lab")
    root = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", root)
    from tests.node_servers import ensure_node_servers

    everything = json.dumps(str(ensure_node_servers() / "mcp-server-everything"))
    setup = APP_SETUP.replace("[EVERYTHING]", f"[{everything}]")
    (root / "app-check.ipynb").write_text(json.dumps(_notebook(setup, "bench.close()")))
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


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TOOLBENCH_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser: Any, lab: str, notebook: str, width: int) -> Any:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": 1000})
    page.set_default_timeout(STEP_MS)
    # The assertions wait as long as the actions do (Playwright's own default is 5 s): a loaded
    # machine (the suite runs across the cores) reaches the same state, later.
    expect.set_options(timeout=STEP_MS)
    page.console_log = []
    page.on("console", lambda msg: page.console_log.append(f"{msg.type}: {msg.text}"))
    page.goto(f"{lab}/lab/tree/{notebook}?reset", timeout=STEP_MS)  # only this notebook open
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=STEP_MS)
    accept = page.locator(".jp-Dialog .jp-mod-accept")  # JupyterLab may ask which kernel to start
    try:
        accept.wait_for(state="visible", timeout=5_000)
        accept.click()
    except Exception:  # no dialog this time
        pass
    _wait_idle(page)
    return page


def _wait_idle(page: Any) -> None:
    """The kernel of the notebook on show is idle (other notebooks' panels may be open, hidden)."""
    idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true").first
    idle.wait_for(state="visible", timeout=KERNEL_S * 1000)


def _run_cell(page: Any, index: int) -> None:
    """Select cell `index` by its prompt and run it (Shift+Enter), as a user would."""
    page.locator(".jp-NotebookPanel .jp-Cell").nth(index).locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")


def _shot(page: Any, path: Path, anchor: str = ".tb-app") -> None:
    page.locator(anchor).first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(path), timeout=STEP_MS)
    assert path.stat().st_size > 10_000  # a real page, not an empty frame
    print(f"screenshot: {path}")


def _failed(page: Any, folder: Path, name: str) -> None:
    failure = folder / f"{name}-failure.png"
    page.screenshot(path=str(failure))
    print(f"browser state at the failure: {failure}")
    print("\n".join(page.console_log[-40:]))


def _in_view(page: Any, marked: str) -> float:
    """Wait until the row `marked` is inside the file view's visible area (its box, not the page
    number); the time it took, in seconds."""
    started = time.monotonic()
    page.wait_for_function("""(selector) => {
        const row = document.querySelector(selector);
        const box = row && row.closest('.tb-fv-scroll');
        if (!row || !box) return false;
        const r = row.getBoundingClientRect(), b = box.getBoundingClientRect();
        return r.height > 0 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
    }""", arg=marked, timeout=STEP_MS)
    return time.monotonic() - started


def _overflowing(page: Any, root: str) -> list[str]:
    """The text blocks under `root` wider than the column they stand in (a long unbroken token
    pushing past its box, its end hidden), as "<class>: <width> in <width>"; [] when none."""
    return list(page.evaluate("""(root) => {
        const out = [];
        for (const top of document.querySelectorAll(root)) {
            for (const pre of top.querySelectorAll('pre, .tb-pre')) {
                const box = pre.getBoundingClientRect();
                if (box.width === 0) continue;  // not on show
                const column = pre.closest('.tb-scroll') || pre.parentElement;
                const outer = column.parentElement.getBoundingClientRect();
                if (pre.scrollWidth > pre.clientWidth + 1 || box.right > outer.right + 1)
                    out.push(`${pre.className}: ${Math.round(pre.scrollWidth)} in ${Math.round(outer.width)}`);
            }
        }
        return out;
    }""", root))


def _pick(page: Any, call_name: str) -> None:
    """Pick a tool by clicking it in the tool list, and wait until the console shows it: its
    example arguments come from the kernel, and typed before they arrive they would be typed into."""
    page.locator(".tb-tool-list .tb-tool-item", has_text=re.compile(f"^{re.escape(call_name)}$")).first.click()
    page.locator(f".tb-console [data-call={json.dumps(call_name)}]").first.wait_for(state="attached")


def _fire_raw(page: Any, arguments: str) -> None:
    page.locator(".tb-console .tb-mode button", has_text="raw").first.click()
    page.locator(".tb-arguments textarea").first.fill(arguments)
    page.locator(".tb-call-button").first.click()


def test_the_quickstart_pages_and_searches_a_long_result(browser: Any, lab: str, shots: Path) -> None:
    from playwright.sync_api import expect

    page = _open(browser, lab, "01-quickstart.ipynb", 1440)
    try:
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        page.locator(".tb-app").first.wait_for(state="visible", timeout=KERNEL_S * 1000)
        _wait_idle(page)

        _pick(page, "long_report")
        _fire_raw(page, '{"lines": 2000}')
        content = page.locator(".tb-result-content").first
        expect(content).to_contain_text("too large to include in full (75999 characters)")
        file_view = page.locator(".tb-result-file").first
        label = page.locator(".tb-file-page").first
        expect(file_view).to_contain_text("line 00001: the quick brown fox jumps")
        expect(label).to_contain_text("page 1 of 10")
        # The box scrolls by the wheel, as any file view does: the rows past the first screen are
        # drawn, the preview's end (after line 79) is marked.
        page.locator(".tb-result .tb-fv-scroll").first.hover()
        page.mouse.wheel(0, 70 * 18)
        _in_view(page, ".tb-result .tb-preview-end")
        page.mouse.wheel(0, 130 * 18)
        expect(file_view).to_contain_text("line 00200: the quick brown fox jumps")

        page.locator(".tb-file-next").first.click()  # the step that used to be covered
        expect(file_view).to_contain_text("line 00201:")
        expect(label).to_contain_text("page 2 of 10")
        page.locator(".tb-file-prev").first.click()
        expect(file_view).to_contain_text("line 00001:")
        # The page box is synced from the kernel: step it only once it reads 1 again.
        expect(label).to_contain_text("page 1 of 10")
        expect(page.locator(".tb-file-page-input input").first).to_have_value("1")
        page.locator(".tb-file-page-input input").first.press("ArrowUp")  # by keyboard
        expect(label).to_contain_text("page 2 of 10")

        go = page.locator(".tb-file-line input").first
        go.fill("1500")
        go.press("Enter")
        expect(label).to_contain_text("page 8 of 10")
        expect(page.locator(".tb-result .tb-line-mark").first).to_contain_text("line 01500")
        _in_view(page, ".tb-result .tb-file-mark")  # scrolled to, not only on the page

        search = page.locator(".tb-file-search input").first
        search.fill("line 01999")
        search.press("Enter")
        expect(page.locator(".tb-result").first).to_contain_text("1 of 1 hit")
        expect(label).to_contain_text("page 10 of 10")
        expect(file_view.locator("mark").first).to_contain_text("line 01999")
        _in_view(page, ".tb-result .tb-hit-current")
        search.fill("")
        search.press("Enter")

        # A malformed call, typed by hand, comes back as an error result with its code.
        _pick(page, "dice_roll")
        _fire_raw(page, '{"formula":')
        expect(page.locator(".tb-result .tb-result-error").first).to_contain_text("tool.invalid_arguments")

        # The README's picture: the long result again, its file paged past line 200.
        page.locator(".tb-history .tb-history-row").nth(1).click()
        expect(content).to_contain_text("too large to include in full")
        page.locator(".tb-file-next").first.click()
        expect(file_view).to_contain_text("line 00201:")
        update = os.environ.get("TOOLBENCH_UPDATE_SCREENSHOT") == "1"
        page.set_viewport_size({"width": 1440, "height": 1300})  # the whole app, the file view in it
        _shot(page, README_SCREENSHOT if update else shots / "quickstart-1440.png")
    except Exception:
        _failed(page, shots, "quickstart")
        raise
    finally:
        page.close()


def test_every_feature_of_the_app_by_mouse_at_1440_and_1024(browser: Any, lab: str, shots: Path) -> None:
    from playwright.sync_api import expect

    page = _open(browser, lab, "app-check.ipynb", 1440)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab)
    try:
        _run_cell(page, 0)
        page.locator(".tb-app").first.wait_for(state="visible", timeout=KERNEL_S * 1000)
        _wait_idle(page)
        result = page.locator(".tb-result").first
        content = page.locator(".tb-result-content").first

        # A nested-object call from the form.
        _pick(page, "create_issue")
        page.locator(".tb-console .tb-mode button", has_text="form").first.click()
        form = page.locator(".tb-console .tb-form").first
        form.locator(".tb-field-title input").first.fill("Pager hidden")
        form.locator(".tb-field-owner .tb-field-name input").first.fill("Ann")
        form.locator(".tb-field-labels .tb-add-item").first.click()
        form.locator(".tb-field-labels input[type=text]").first.fill("ui")
        page.locator(".tb-call-button").first.click()
        expect(content).to_contain_text('{"labels": ["ui"], "owner": {"name": "Ann"}, "title": "Pager hidden"}')

        # An unknown call name, typed: what a model gets for it.
        name = page.locator(".tb-call-name input").first
        name.fill("create_isue")
        name.press("Tab")
        _fire_raw(page, "{}")
        expect(page.locator(".tb-result .tb-result-error").first).to_contain_text("model.unknown_tool_call")

        # Re-run and copy a history row.
        page.locator(".tb-tabs .lm-TabBar-tab", has_text="History").first.click()
        rows = page.locator(".tb-history .tb-history-row")
        expect(rows).to_have_count(2)
        rows.nth(1).click()  # the oldest: the form's call
        page.locator(".tb-history-rerun").first.click()
        expect(rows).to_have_count(3)
        expect(content).to_contain_text('"title": "Pager hidden"')
        rows.nth(0).click()
        page.locator(".tb-history-copy").first.click()
        copied = page.locator(".tb-copy-text textarea").first
        expect(copied).to_have_value(re.compile(r'^inv\.call\("create_issue", '))
        # The page wrote the clipboard within the click; the box shows the same text.
        expect(page.locator(".tb-copy-hint").first).to_contain_text("copied to your clipboard")
        assert page.evaluate("navigator.clipboard.readText()") == copied.input_value()
        page.locator(".tb-history-copy-json").first.click()
        expect(copied).to_have_value(re.compile(r'"call_name": "create_issue"'))
        assert '"call_name": "create_issue"' in page.evaluate("navigator.clipboard.readText()")

        # A long unbroken token wraps inside its column: the result, its provider JSON, the history detail.
        token = "W" * 300
        _pick(page, "mcp__demo__echo")
        _fire_raw(page, json.dumps({"text": token}))
        expect(content).to_contain_text(token)
        assert _overflowing(page, ".tb-result") == []
        rows.nth(0).click()
        expect(page.locator(".tb-history-detail").first).to_contain_text(token)
        assert _overflowing(page, ".tb-history-detail") == []
        _shot(page, shots / "app-long-token-1440.png")

        # Pick, then type at once: the pick's late example never overwrites the typing; Ctrl+Enter calls.
        page.locator(".tb-console .tb-mode button", has_text="raw").first.click()
        box = page.locator(".tb-arguments textarea").first
        _pick(page, "weather")
        _pick(page, "dice_roll")
        box.fill('{"formula": "3d6+4"}')
        box.press("Control+Enter")
        expect(content).to_contain_text("Rolled 3d6+4")
        page.wait_for_timeout(1000)  # what a late example would need to arrive
        expect(box).to_have_value('{"formula": "3d6+4"}')
        _pick(page, "weather")
        expect(box).to_have_value(re.compile(r'"city"'))  # the new tool's example, not dice's text

        # A slow call fired by hand is cancelled: its result says the outcome is unknown.
        _pick(page, "nap")
        _fire_raw(page, "{}")
        expect(page.locator(".tb-pending").first).to_contain_text("calling")
        cancel = page.locator(".tb-call-cancel").first
        expect(cancel).to_be_enabled()
        cancel.click()
        expect(page.locator(".tb-result .tb-result-error").first).to_contain_text("tool.cancelled")
        expect(content).to_contain_text("outcome is unknown")
        expect(cancel).to_be_disabled()

        # A big builtin result is inline: the file column says why, and pages and searches its text.
        _pick(page, "workspace_read_file")
        _fire_raw(page, '{"path": "work/big.txt"}')
        expect(result).to_contain_text("a builtin tool's result is never written to a file")
        search = page.locator(".tb-file-search input").first
        search.fill("row 1500 of")
        search.press("Enter")
        expect(result).to_contain_text("1 of 1 hit")
        _in_view(page, ".tb-result .tb-hit-current")
        search.fill("")
        search.press("Enter")

        # A 200,000-line result: go to a line far down, scrolled into view.
        _pick(page, "long_report")
        _fire_raw(page, '{"lines": 200000}')
        expect(content).to_contain_text("too large to include in full")
        go = page.locator(".tb-file-line input").first
        go.fill("150000")
        started = time.monotonic()
        go.press("Enter")
        expect(result.locator(".tb-line-mark").first).to_contain_text("line 150000")
        _in_view(page, ".tb-result .tb-file-mark")
        print(f"go to line 150,000 of a 200,000-line file: in view {time.monotonic() - started:.2f} s after Enter")
        _shot(page, shots / "app-200k-lines-1440.png")

        # An image result, beside what each provider receives.
        _pick(page, "snap")
        _fire_raw(page, "{}")
        image = page.locator(".tb-result-attachment img").first
        expect(image).to_be_visible()
        assert image.bounding_box()["height"] > 20
        result.locator("select").filter(has_text="anthropic").first.select_option("anthropic")
        expect(result).to_contain_text('"type": "image"')
        _shot(page, shots / "app-image-1440.png", ".tb-result")

        # An MCP call, then the server's protocol trace in the MCP tab.
        _pick(page, "mcp__demo__echo")
        _fire_raw(page, '{"text": "hello from the browser"}')
        expect(content).to_contain_text("hello from the browser")
        page.locator(".tb-tabs .lm-TabBar-tab", has_text="MCP servers").first.click()
        mcp = page.locator(".tb-mcp").first
        expect(mcp).to_contain_text("active")
        mcp.locator(".lm-TabBar-tab", has_text="protocol").first.click()
        trace = page.locator(".tb-trace select").first
        expect(trace).to_contain_text("tools/call")
        trace.select_option(index=0)
        expect(mcp).to_contain_text("hello from the browser")
        _shot(page, shots / "app-mcp-1440.png", ".tb-tabs")

        # The reference server's resources and prompts, as MCP Inspector shows them.
        mcp.locator(".tb-mcp-server select").first.select_option("everything")
        mcp.locator(".lm-TabBar-tab", has_text="resources").first.click()
        resources = mcp.locator(".tb-mcp-resources").first
        expect(resources).to_contain_text("demo://resource/dynamic/text/{resourceId}")
        uri = resources.locator(".tb-mcp-resource-uri input").first
        uri.fill("demo://resource/dynamic/text/1")
        resources.locator(".tb-mcp-resource-read").first.click()
        shown = resources.locator(".tb-mcp-resource-content").first
        expect(shown).to_contain_text("Resource 1: This is a plaintext resource")
        uri.fill("demo://resource/dynamic/blob/2")
        resources.locator(".tb-mcp-resource-read").first.click()
        expect(shown).to_contain_text("blob: text/plain")
        expect(shown).to_contain_text("Resource 2: This is a base64 blob")
        assert shown.bounding_box()["width"] <= resources.bounding_box()["width"] + 1  # never wider than its column
        _shot(page, shots / "app-mcp-resources-1440.png", ".tb-mcp-resources")
        mcp.locator(".lm-TabBar-tab", has_text="prompts").first.click()
        prompts = mcp.locator(".tb-mcp-prompts").first
        prompts.locator(".tb-mcp-prompt-pick select").first.select_option("args-prompt")
        city = prompts.locator(".tb-mcp-prompt-argument input").first
        expect(city).to_be_visible()
        city.fill("Oslo")
        prompts.locator(".tb-mcp-prompt-get").first.click()
        expect(prompts.locator(".tb-mcp-prompt-messages").first).to_contain_text("What's weather in Oslo?")
        _shot(page, shots / "app-mcp-prompts-1440.png", ".tb-mcp-prompts")
        mcp.locator(".lm-TabBar-tab", has_text="tools").first.click()

        # A server pasted into the MCP tab is callable at once, from the tool list.
        mcp.get_by_text("add a server").first.click()
        mcp.locator(".tb-mcp-name input").first.fill("added")
        from tests.node_servers import ensure_node_servers

        everything = str(ensure_node_servers() / "mcp-server-everything")
        mcp.locator(".tb-mcp-config textarea").first.fill(json.dumps({"command": everything}))
        mcp.locator(".tb-mcp-add").first.click()
        expect(page.locator(".tb-tool-list").first).to_contain_text("mcp__added__get-sum", timeout=STEP_MS)
        expect(mcp).to_contain_text(re.compile(r"\d+ tools, \d+ in the snapshot"))
        _shot(page, shots / "app-mcp-added-1440.png", ".tb-tabs")
        _pick(page, "mcp__added__get-sum")
        _fire_raw(page, '{"a": 1, "b": 2}')
        expect(content).to_contain_text("3")
        expect(page.locator(".tb-result").first).to_contain_text("mcp/added:get-sum")
        page.locator(".tb-tabs .lm-TabBar-tab", has_text="History").first.click()

        # Approve one call and deny another.
        _approve_and_deny(page, content, shots / "app-approval-1440.png")
        _shot(page, shots / "app-1440.png")

        # A prompt from the chat: the scripted model's call lands in the history as if fired by hand.
        chat = page.locator(".tb-chat").first
        rows = page.locator(".tb-history .tb-history-row")
        before = rows.count()
        chat.locator(".tb-chat-input textarea").first.fill("Roll 2d6 for me")
        chat.locator(".tb-chat-send").first.click()
        expect(chat.locator(".tb-chat-status").first).to_contain_text("You rolled 2d6 from the chat.")
        expect(chat.locator(".tb-chat-transcript").first).to_contain_text("dice_roll")
        expect(rows).to_have_count(before + 1)
        expect(page.locator(".tb-history .tb-history-body .tb-history-cells").first).to_contain_text("dice_roll")
        for control in (".tb-chat-input textarea", ".tb-chat-send", ".tb-chat-stop"):
            assert chat.locator(control).first.bounding_box()["height"] > 20, control
        stream_box = chat.locator(".tb-chat-stream input").first
        expect(stream_box).to_be_enabled()  # a scripted model streams too (its answers as its API's events)
        _shot(page, shots / "app-chat-1440.png", ".tb-chat")

        # A streamed run: its text and its call's arguments show as they arrive; stop ends it mid-answer.
        chat.locator(".tb-chat-model select").first.select_option("streamed")
        expect(stream_box).to_be_enabled()
        expect(stream_box).to_be_checked()
        chat.locator(".tb-chat-input textarea").first.fill("Roll 2d6, streamed")
        chat.locator(".tb-chat-send").first.click()
        live = chat.locator(".tb-chat-live").first
        expect(live).to_contain_text("Rolling the dice for you.")
        expect(live).to_contain_text('dice_roll {"formula": "2')
        expect(chat.locator(".tb-chat-status").first).to_contain_text("round 1 · streaming")
        _shot(page, shots / "app-chat-stream-1440.png", ".tb-chat")
        chat.locator(".tb-chat-stop").first.click()
        expect(chat.locator(".tb-chat-status").first).to_contain_text("stopped")
        expect(live).to_contain_text("(not run)")
        expect(rows).to_have_count(before + 1)  # nothing of the stopped answer ran
        _shot(page, shots / "app-chat-stopped-1440.png", ".tb-chat")
        chat.locator(".tb-chat-model select").first.select_option("scripted")

        # The same app at 1024 px: the columns stack, every control still takes a click.
        page.set_viewport_size({"width": 1024, "height": 1000})
        _approve_and_deny(page, content)
        _pick(page, "long_report")
        _fire_raw(page, '{"lines": 2000}')
        page.locator(".tb-file-next").first.click()
        expect(page.locator(".tb-file-page").first).to_contain_text("page 2 of 10")
        go.fill("1500")
        go.press("Enter")
        _in_view(page, ".tb-result .tb-file-mark")
        assert _overflowing(page, ".tb-result") == []
        # Stacked, the file's controls stay near the result's header (they were ~570 px below it).
        header = page.locator(".tb-result .tb-result-columns").first.bounding_box()
        controls = page.locator(".tb-file-prev").first.bounding_box()
        assert controls["y"] - header["y"] < 400, (header, controls)
        _shot(page, shots / "app-1024.png")

        # The snapshot's provider checks and the profile grid: bounded, their columns in view.
        tabs = page.locator(".tb-tabs").first
        tabs.locator(".lm-TabBar-tab", has_text="Snapshot").first.click()
        snapshot = page.locator(".tb-snapshot").first
        snapshot.locator(".lm-TabBar-tab", has_text="provider checks").first.click()
        expect(snapshot.locator(".tb-snapshot-checks")).to_be_visible()
        assert snapshot.bounding_box()["height"] < 900
        panel, message = snapshot.bounding_box(), snapshot.locator(".tb-snapshot-checks th").last.bounding_box()
        assert message["x"] + message["width"] <= panel["x"] + panel["width"]  # the message column in view
        _shot(page, shots / "snapshot-checks-1024.png", ".tb-tabs")
        tabs.locator(".lm-TabBar-tab", has_text="Profile").first.click()
        expect(page.locator(".tb-profile").first).to_contain_text("ToolId")
        _shot(page, shots / "profile-1024.png", ".tb-tabs")

        # The dark theme: the app takes JupyterLab's colours.
        page.get_by_role("menuitem", name="Settings", exact=True).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$")).first.click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile("^JupyterLab Dark$")).first.click()
        expect(page.locator("body[data-jp-theme-light='false']")).to_be_attached()
        _pick(page, "dice_roll")
        _fire_raw(page, '{"formula":')  # the error banner, in the dark theme's colours
        expect(page.locator(".tb-result .tb-result-error").first).to_contain_text("tool.invalid_arguments")
        assert _overflowing(page, ".tb-app") == []
        _shot(page, shots / "app-dark-1024.png")
        _shot(page, shots / "app-dark-result-1024.png", ".tb-result")

        # Closing the bench greys the app out; a call is refused.
        _run_cell(page, 1)
        _wait_idle(page)
        expect(page.locator(".tb-app.tb-closed").first).to_be_attached()
        expect(page.locator(".tb-call-button").first).to_be_disabled()
        expect(page.locator(".tb-console .tb-error").first).to_contain_text("bench.closed")
        _shot(page, shots / "app-closed-1024.png")
    except Exception:
        _failed(page, shots, "app")
        raise
    finally:
        page.close()


def _approve_and_deny(page: Any, content: Any, shot: Path | None = None) -> None:
    from playwright.sync_api import expect

    for button, expected in (("tb-approve", '"city":"Oslo"'), ("tb-deny", "tool.approval_denied")):
        _pick(page, "weather")
        _fire_raw(page, '{"city": "Oslo"}')
        expect(page.locator(".tb-pending").first).to_contain_text("calling")
        if shot is not None and button == "tb-approve":
            page.locator(f".tb-approval .{button}").first.wait_for(state="visible")
            _shot(page, shot, ".tb-console")
        page.locator(f".tb-approval .{button}").first.click()
        if button == "tb-approve":
            expect(content).to_contain_text("Oslo")
        else:
            expect(page.locator(".tb-result .tb-result-error").first).to_contain_text(expected)
