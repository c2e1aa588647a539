"""`mcp.json` types of one's own: `register_transport_type` and the entry-point group
`toolbench.transports`, read by the loader and by `toolbench check` like `stdio`."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deadline import ROOT, run_with_deadline

from toolbench import ToolbenchError, Workbench
from toolbench.examples.demo_mcp import build_server
from toolbench.mcp import (
    InProcessTransport,
    McpTransport,
    _transport_types,
    register_transport_type,
    transport_notices,
    transport_types,
    unregister_transport_type,
)


class Loop(McpTransport):
    """Reads `{"type": "loop", "label": ...}`: the demo server, in process, under that name."""

    @classmethod
    def from_config(cls, entry: Any) -> McpTransport:
        return InProcessTransport(build_server(entry.value("label") or "demo"))


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _transport_types.reset()
    yield
    _transport_types.reset()


def test_a_registered_type_is_read_from_mcp_json(tmp_path: Path) -> None:
    config = {"mcpServers": {"mine": {"type": "loop", "label": "looped"}}}
    with Workbench(tmp_path / "ws") as bench:
        with pytest.raises(ToolbenchError) as unknown:
            bench.mcp.load_config(config)
        assert unknown.value.code == "mcp.config_invalid" and "register_transport_type" in unknown.value.message
        register_transport_type("loop", Loop)
        [info] = bench.mcp.load_config(config)
        assert (info.state, info.server_info["name"]) == ("active", "looped")
        assert "loop" in transport_types()
    unregister_transport_type("loop")
    assert "loop" not in transport_types()


@pytest.mark.parametrize(("name", "cls", "says"), [
    ("stdio", Loop, "built in"), ("Loop!", Loop, "lowercase name"), ("x", object, "McpTransport subclass"),
    ("x", InProcessTransport(build_server()), "McpTransport subclass"), (3, Loop, "lowercase name")])
def test_a_bad_registration_is_misuse(name: Any, cls: Any, says: str) -> None:
    with pytest.raises(ToolbenchError) as misuse:
        register_transport_type(name, cls)
    assert misuse.value.code == "bench.misuse" and says in misuse.value.message


def _dist(root: Path, entries: dict[str, str]) -> None:
    info = root / "tb_transport-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tb_transport\nVersion: 0.1\n", encoding="utf-8")
    lines = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{_transport_types.GROUP}]\n{lines}", encoding="utf-8")
    (root / "tb_transport.py").write_text(textwrap.dedent('''
        from toolbench.examples.demo_mcp import build_server
        from toolbench.mcp import InProcessTransport, McpTransport

        class Loop(McpTransport):
            @classmethod
            def from_config(cls, entry):
                return InProcessTransport(build_server(entry.value("label") or "demo"))

        NOT_A_TRANSPORT = 42
    '''), encoding="utf-8")


def test_an_installed_type_reaches_the_check_command_and_a_broken_one_is_a_notice(tmp_path: Path) -> None:
    _dist(tmp_path / "site", {"loop": "tb_transport:Loop", "nope": "tb_transport:NOT_A_TRANSPORT",
                              "gone": "tb_missing:Thing"})
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"mine": {"type": "loop", "label": "installed"}}}),
                                       encoding="utf-8")
    script = """
import contextlib, io, json, sys
from toolbench.cli import main
from toolbench.mcp import transport_notices
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
report([code, json.loads(out.getvalue())["servers"][0]["state"], list(transport_notices())])
"""
    sys_path = f"import sys; sys.path.insert(0, {str(tmp_path / 'site')!r})\n"
    code, state, notices = run_with_deadline(sys_path + script, deadline=90, cwd=ROOT,
                                             args=("check", "--mcp-config", str(tmp_path / "mcp.json"),
                                                   "--format", "json"))
    assert (code, state) == (0, "active")
    assert len(notices) == 2 and all(n.startswith("mcp.transport_plugin_skipped") for n in notices)
    assert any("`gone`" in n and "failed to import" in n for n in notices)
    assert any("`nope`" in n and "McpTransport subclass" in n for n in notices)
    assert transport_notices() == ()  # this process has none installed
