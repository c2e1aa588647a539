"""Attachments of results: written once beside the call's records before the call returns, listed
in `ToolResult.attachments`, kept through the long-result projection and a reopen, and sent to
each provider as its API takes them."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.server.mcpserver import Image, MCPServer

from toolbench import Attachment, Profile, ToolbenchError, ToolOutput, Workbench
from toolbench.core.results import call_file_stem
from toolbench.runtime.store import Store


def png(w: int, h: int, tail: bytes = b"") -> bytes:
    """A PNG signature and an IHDR declaring w x h pixels, then `tail` (no pixel data to speak of)."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
            + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + tail)


PNG = png(2, 2, bytes(range(256)))
WAV = b"RIFF" + bytes(64)


def make(tmp_path: Path, fn: Callable[..., object], **tools: object) -> Workbench:
    bench = Workbench(tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:dice.roll"], **tools))
    bench.enable(bench.register_tool("cam", fn, name="snap", input_schema={"type": "object"}))
    return bench


def snap(**_: object) -> ToolOutput:
    return ToolOutput("Two files.", attachments=[Attachment("image", "image/png", PNG),
                                                  Attachment("audio", "audio/wav", WAV)])


def test_attachments_are_written_once_read_only_and_listed(tmp_path: Path) -> None:
    with make(tmp_path, snap) as bench:
        inv = bench.invocation(id="inv_att")
        result = inv.call("snap", {}, call_id="call_x")
        stem = call_file_stem("inv_att", 1, "call_x")
        assert [(a.kind, a.mime_type, a.path, a.size, a.sha256) for a in result.attachments] == [
            ("image", "image/png", f"tool-results/{stem}-1.png", len(PNG), hashlib.sha256(PNG).hexdigest()),
            ("audio", "audio/wav", f"tool-results/{stem}-2.wav", len(WAV), hashlib.sha256(WAV).hexdigest()),
        ]
        for ref, data in zip(result.attachments, (PNG, WAV), strict=True):
            path = bench.workspace / ref.path
            assert path.read_bytes() == data  # written before the call returned
            assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        assert result.content == "Two files." and not result.is_error
        assert inv.to_dataframe()["content_chars"].tolist() == [len("Two files.")]
        wire = result.to_json()["attachments"][0]
        assert set(wire) == {"kind", "mimeType", "path", "size", "sha256", "uri"}


def test_a_result_without_attachments_has_none_and_writes_nothing_more(tmp_path: Path) -> None:
    with make(tmp_path, lambda **_: "plain") as bench:
        result = bench.invocation(id="inv_plain").call("snap", {}, call_id="c")
        bench.flush()
        assert result.attachments == ()
        stem = call_file_stem("inv_plain", 1, "c").split("/")[1]
        assert sorted(p.name for p in (bench.workspace / "tool-results" / "inv_plain").iterdir()) == [f"{stem}.json"]


def test_a_lone_attachment_is_a_result_of_that_attachment(tmp_path: Path) -> None:
    with make(tmp_path, lambda **_: Attachment("blob", "application/pdf", b"%PDF-1.4")) as bench:
        result = bench.invocation().call("snap", {})
        assert result.content == "" and [a.kind for a in result.attachments] == ["blob"]
        assert result.attachments[0].path.endswith("-1.pdf")


@pytest.mark.parametrize("bad", [[b"raw bytes"], "not a list", [Attachment("image", "image/png", PNG), 3]])
def test_attachments_that_are_not_attachments_fail_the_call(tmp_path: Path, bad: object) -> None:
    with make(tmp_path, lambda **_: ToolOutput("x", attachments=bad)) as bench:  # type: ignore[arg-type]
        result = bench.invocation(id="inv_bad").call("snap", {})
        assert result.is_error and result.error_code == "tool.internal_error"
        assert result.attachments == ()
        assert not list((bench.workspace / "tool-results" / "inv_bad").glob("*.png"))


@pytest.mark.parametrize(("kind", "mime", "data"), [("video", "video/mp4", b"x"), ("image", "png", b"x"),
                                                     ("image", "image/png", "iVBORw0KGgo=")])
def test_an_attachment_is_checked_when_made(kind: str, mime: str, data: object) -> None:
    with pytest.raises(ToolbenchError) as caught:
        Attachment(kind, mime, data)  # type: ignore[arg-type]
    assert caught.value.code == "bench.misuse"


def test_a_failed_attachment_write_takes_back_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Store.write_now

    def second_fails(self: Store, relative: str, text: str | bytes) -> None:
        if relative.endswith("-2.wav"):
            raise ToolbenchError("storage.write_failed", f"cannot write {relative}: disk full")
        real(self, relative, text)

    monkeypatch.setattr(Store, "write_now", second_fails)
    with make(tmp_path, snap) as bench:
        with pytest.raises(ToolbenchError) as caught:
            bench.invocation(id="inv_full").call("snap", {})
        assert caught.value.code == "storage.write_failed"
        assert not list((bench.workspace / "tool-results").rglob("*.png"))


def test_a_long_result_is_externalised_and_keeps_its_attachments(tmp_path: Path) -> None:
    def long(**_: object) -> ToolOutput:
        return ToolOutput("x" * 5000, attachments=[Attachment("image", "image/png", PNG)])

    with make(tmp_path, long, external_result_inline_char_limit=1000) as bench:
        inv = bench.invocation(id="inv_long")
        result = inv.call("snap", {}, call_id="c")
        assert result.structured["externalized"] is True
        assert [a.path for a in result.attachments] == [f"tool-results/{call_file_stem('inv_long', 1, 'c')}-1.png"]
        audit = json.loads((bench.workspace / result.structured["auditPath"]).read_text(encoding="utf-8"))
        assert audit["attachments"] == [a.model_dump(mode="json", by_alias=True) for a in result.attachments]
        [block] = inv.transcript("anthropic")[-1]["content"]
        assert block["content"][0]["text"].startswith("This result is too large")
        assert block["content"][1]["source"]["data"] == base64.b64encode(PNG).decode()


def test_attachments_survive_a_reopen_and_a_lost_audit_file(tmp_path: Path) -> None:
    with make(tmp_path, snap) as bench:
        first = bench.invocation(id="inv_re").call("snap", {}, call_id="c")
        bench.flush()
    audit = tmp_path / "ws" / "tool-results" / f"{call_file_stem('inv_re', 1, 'c')}.json"
    audit.unlink()  # as if the deferred record file was lost in a crash
    with make(tmp_path, snap) as again:
        reopened = again.open_invocation("inv_re")
        assert reopened.records[0].result.attachments == first.attachments
        assert json.loads(audit.read_text(encoding="utf-8"))["attachments"][0]["path"] == first.attachments[0].path
        assert (again.workspace / first.attachments[0].path).read_bytes() == PNG  # not swept by the recovery
        output = reopened.transcript("openai-responses")[-1]["output"]
        assert output[1] == {"type": "input_image",
                             "image_url": "data:image/png;base64," + base64.b64encode(PNG).decode()}
        later = reopened.call("snap", {}, call_id="c")  # a new round: new files beside the old ones
        assert later.attachments[0].path != first.attachments[0].path


def test_render_result_shows_each_provider_and_a_missing_file_is_left_out(tmp_path: Path) -> None:
    with make(tmp_path, snap) as bench:
        inv = bench.invocation(id="inv_view")
        result = inv.call("snap", {})
        views = inv.render_result(result)
        assert set(views) == {"openai", "openai-responses", "anthropic", "gemini"}
        assert views["anthropic"] == inv.render_result(result.call_id, "anthropic")
        assert [b["type"] for b in views["anthropic"]["content"]] == ["text", "image"]
        assert "left out" in views["openai"]["content"] and isinstance(views["openai"]["content"], str)
        assert [p["inlineData"]["mimeType"] for p in views["gemini"]["functionResponse"]["parts"]] == ["image/png"]
        path = bench.workspace / result.attachments[0].path
        path.unlink()
        assert "cannot be read" in inv.render_result(result, "anthropic")["content"]
        with pytest.raises(ToolbenchError) as caught:
            inv.render_result("call_nope")
        assert caught.value.code == "bench.misuse"


def bomb_server() -> MCPServer:
    server = MCPServer("bombs", log_level="WARNING")

    @server.tool(description="A picture.")
    def bomb() -> Image:
        return Image(data=png(50_000, 50_000), format="png")

    return server


@pytest.mark.parametrize("source", ["extension", "mcp"])
def test_an_attachment_past_a_providers_pixel_limit_is_sent_only_to_the_others(tmp_path: Path, source: str) -> None:
    """Any tool source's image goes through the one check where a provider's request is built."""
    def snap(**_: object) -> ToolOutput:
        return ToolOutput("A picture.", attachments=[Attachment("image", "image/png", png(50_000, 50_000))])

    profile = Profile.default().edit(allow=["mcp/bombs:bomb"])
    with Workbench(tmp_path / "ws", profile=profile) as bench:
        bench.enable(bench.register_tool("cam", snap, name="snap", input_schema={"type": "object"}))
        if source == "mcp":
            bench.mcp.add("bombs", server=bomb_server(), id="bombs")
        inv = bench.invocation(id="inv_big")
        name = "snap" if source == "extension" else next(
            n for n, tool_id in inv.snapshot.call_names.items() if str(tool_id) == "mcp/bombs:bomb")
        result = inv.call(name, {})
        assert [(a.kind, a.mime_type) for a in result.attachments] == [("image", "image/png")]
        [block] = inv.transcript("anthropic")[-1]["content"]
        assert isinstance(block["content"], str) and "50000x50000" in block["content"] and "8000" in block["content"]
        assert inv.transcript("openai-responses")[-1]["output"][1]["type"] == "input_image"
        parts = inv.transcript("gemini")[-1]["parts"][0]["functionResponse"]["parts"]
        assert [p["inlineData"]["mimeType"] for p in parts] == ["image/png"]
