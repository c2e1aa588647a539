"""read_file on images and PDFs: an image as an attachment with its pixel size, a PDF's pages as text.

Upstream cases (LiveAgent `crates/agent-gui/src-tauri/src/commands/workspace/fs.rs` `read`,
`build_pdf_window`, and `src/lib/tools/fsTools.ts`): images by extension, sent whole with
`Read image: <path>` / `mime=` / `sizeBytes=`; PDFs by `page_start` (default 1) and
`page_limit` (default 5), headed `Read PDF: <path>` / `pages=<a>-<b>/<total>`; text reads
unchanged. Header bytes are built by hand (no imaging library is a dependency)."""

from __future__ import annotations

import base64
import io
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.deadline import run_with_deadline
from toolbench import Profile, Workbench
from toolbench.core.images import MAX_JPEG_SEGMENTS, HeaderError, image_info
from toolbench.tools.workspace.media import MAX_IMAGE_BYTES


def png(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk + b"\x00\x00\x00\x00IEND\xaeB`\x82"


def jpeg(w: int, h: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    dht = b"\xff\xc4" + struct.pack(">H", 4) + b"\x00\x00"  # C4 is in the SOF range but is not a frame
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, h, w, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + dht + b"\xff\xff" + sof + b"\xff\xda\x00\x02\xff\xd9"


def gif(w: int, h: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", w, h) + b"\x00\x00\x00;"


def webp(chunk: bytes, payload: bytes) -> bytes:
    body = b"WEBP" + chunk + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def webp_lossy(w: int, h: int) -> bytes:
    return webp(b"VP8 ", b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", w, h) + bytes(8))


def webp_lossless(w: int, h: int) -> bytes:
    return webp(b"VP8L", b"\x2f" + ((w - 1) | (h - 1) << 14).to_bytes(4, "little") + bytes(4))


def webp_extended(w: int, h: int) -> bytes:
    return webp(b"VP8X", bytes(4) + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little"))


def pdf(*pages: str) -> bytes:
    """A PDF with one page per text (an empty text: a page with no content, as a scan's would be)."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        n = len(objs) + 1
        kids.append(f"{n} 0 R")
        if text:
            stream = "BT /F1 12 Tf 72 720 Td " + " ".join(f"({line}) Tj 0 -14 Td" for line in text.split("\n")) + " ET"
            objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {n + 1} 0 R "
                        "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>")
            objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        else:
            objs.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>")
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = b"%PDF-1.4\n", []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{obj}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    return out + f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


def encrypted(data: bytes, user: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user, owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


# ---- images


@pytest.mark.parametrize(("name", "data", "mime", "size"), [
    ("a.png", png(640, 480), "image/png", (640, 480)),
    ("b.JPG", jpeg(1024, 768), "image/jpeg", (1024, 768)),
    ("c.jpeg", jpeg(3, 2), "image/jpeg", (3, 2)),
    ("d.gif", gif(16, 9), "image/gif", (16, 9)),
    ("e.webp", webp_lossy(300, 200), "image/webp", (300, 200)),
    ("f.webp", webp_lossless(4000, 1), "image/webp", (4000, 1)),
    ("g.webp", webp_extended(16384, 9000), "image/webp", (16384, 9000)),
])
def test_an_image_is_read_as_an_attachment_with_its_pixel_size(call, name, data, mime, size) -> None:
    (call.bench.workspace / "work" / name).write_bytes(data)
    r = call.ok("read_file", {"path": f"work/{name}"})
    assert r.content == (f"Read image: work/{name}\nmime={mime}\nsizeBytes={len(data)}\n"
                         f"dimensions={size[0]}x{size[1]} pixels")
    assert (r.structured["width"], r.structured["height"], r.structured["mimeType"]) == (*size, mime)
    [ref] = r.attachments
    assert (ref.kind, ref.mime_type, ref.size) == ("image", mime, len(data))
    assert (call.bench.workspace / ref.path).read_bytes() == data


def test_an_image_read_is_rendered_as_each_provider_takes_images(call) -> None:
    data = png(2, 2)
    (call.bench.workspace / "work" / "p.png").write_bytes(data)
    r = call.ok("read_file", {"path": "work/p.png"})
    views = call.inv.render_result(r)
    assert [b["type"] for b in views["anthropic"]["content"]] == ["text", "image"]
    assert views["anthropic"]["content"][1]["source"]["data"] == base64.b64encode(data).decode()
    assert [p["inlineData"]["mimeType"] for p in views["gemini"]["functionResponse"]["parts"]] == ["image/png"]
    assert "left out" in views["openai"]["content"]  # chat completions takes no images in tool results


def bomb(w: int, h: int) -> bytes:
    """74 bytes: an IHDR declaring w x h pixels, a tiny IDAT and IEND (no pixel data to speak of)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    idat = zlib.compress(bytes(6), 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_an_image_too_large_for_a_provider_is_not_sent_to_it_and_its_text_says_why(call) -> None:
    data = bomb(50_000, 50_000)
    assert len(data) == 74
    (call.bench.workspace / "work" / "x.png").write_bytes(data)
    r = call.ok("read_file", {"path": "work/x.png"})
    assert "dimensions=50000x50000 pixels" in r.content
    views = call.inv.render_result(r)
    anthropic = views["anthropic"]["content"]
    assert isinstance(anthropic, str)  # text only: the image block is not sent
    line = anthropic.split("## Attachments\n\n")[1]
    assert "left out" in line and "50000x50000" in line and "8000" in line
    assert views["openai-responses"]["output"][1]["type"] == "input_image"  # no pixel limit documented
    assert [p["inlineData"]["mimeType"] for p in views["gemini"]["functionResponse"]["parts"]] == ["image/png"]
    assert call.inv.transcript("anthropic")[-1]["content"][0]["content"] == anthropic


@pytest.mark.parametrize(("name", "data", "found"), [
    ("x.png", jpeg(2, 2), "JPEG"), ("x.jpg", png(2, 2), "PNG"), ("x.gif", b"hello, not a picture", None),
    ("x.webp", pdf("a"), "PDF"), ("x.pdf", png(2, 2), "PNG"), ("x.pdf", b"plain text", None),
])
def test_bytes_that_do_not_match_the_extension_are_refused(call, name, data, found) -> None:
    (call.bench.workspace / "work" / name).write_bytes(data)
    r = call.err("read_file", {"path": f"work/{name}"}, "workspace.media_mismatch")
    assert r.attachments == () and r.structured["found"] == found


@pytest.mark.parametrize("data", [
    png(2, 2)[:20], png(0, 5), jpeg(2, 2)[:30], b"\xff\xd8\xff\xe0\x00\x01", b"\xff\xd8\xff\xd9", b"GIF89a\x01",
    webp(b"VP8 ", bytes(10)), webp(b"ALPH", bytes(20)), b"RIFF\x00\x00\x00\x00WEBP",
])
def test_a_broken_header_is_unreadable_not_a_crash(call, data) -> None:
    name = {b"\x89": "a.png", b"\xff": "a.jpg", b"GI": "a.gif", b"RI": "a.webp"}
    ext = next(v for k, v in name.items() if data.startswith(k))
    (call.bench.workspace / "work" / ext).write_bytes(data)
    call.err("read_file", {"path": f"work/{ext}"}, "workspace.media_unreadable")


def test_an_image_over_the_cap_is_refused_before_it_is_read(call) -> None:
    (call.bench.workspace / "work" / "big.png").write_bytes(png(9000, 9000) + bytes(MAX_IMAGE_BYTES))
    r = call.err("read_file", {"path": "work/big.png"}, "workspace.image_too_large")
    assert r.structured["limitBytes"] == MAX_IMAGE_BYTES


def test_line_arguments_on_an_image_and_page_arguments_on_text_are_refused(call) -> None:
    ws = call.bench.workspace / "work"
    (ws / "p.png").write_bytes(png(1, 1))
    (ws / "t.txt").write_text("one\n")
    (ws / "d.pdf").write_bytes(pdf("a"))
    call.err("read_file", {"path": "work/p.png", "start_line": 2}, "tool.invalid_arguments")
    call.err("read_file", {"path": "work/p.png", "page_start": 1}, "tool.invalid_arguments")
    r = call.err("read_file", {"path": "work/p.png", "char_offset": 3}, "tool.invalid_arguments")
    assert r.structured["arguments"] == ["char_offset"]  # refused for the image, before the text rule
    call.err("read_file", {"path": "work/t.txt", "page_limit": 1}, "tool.invalid_arguments")
    call.err("read_file", {"path": "work/d.pdf", "line_count": 1}, "tool.invalid_arguments")
    assert call.ok("read_file", {"path": "work/t.txt"}).content.endswith("     1\tone\n[end of file]")


def test_a_jpeg_marker_walk_is_linear_on_hostile_segments() -> None:
    hostile = b"\xff\xd8" + b"\xff\xfe\x00\x02" * 200_000  # many empty comment segments, no frame
    with pytest.raises(HeaderError):
        image_info(hostile, "JPEG")


def test_a_jpeg_marker_walk_stops_at_its_segment_cap() -> None:
    frame = jpeg(7, 5)[2:]
    assert image_info(b"\xff\xd8" + b"\xff\xfe\x00\x02" * (MAX_JPEG_SEGMENTS - 10) + frame, "JPEG").width == 7
    with pytest.raises(HeaderError):  # a frame header past the cap is not looked for
        image_info(b"\xff\xd8" + b"\xff\xfe\x00\x02" * MAX_JPEG_SEGMENTS + frame, "JPEG")


# ---- PDFs


def test_a_pdf_gives_its_first_five_pages_with_markers_and_where_to_go_on(call) -> None:
    (call.bench.workspace / "work" / "doc.pdf").write_bytes(pdf(*(f"Page text {i}" for i in range(1, 8))))
    r = call.ok("read_file", {"path": "work/doc.pdf"})
    head, _, rest = r.content.partition("\n\n")
    assert head == "Read PDF: work/doc.pdf\npages=1-5/7"
    assert [line for line in rest.splitlines() if line.startswith("--- page")] == [
        f"--- page {i} ---" for i in range(1, 6)]
    assert "Page text 5" in rest and "Page text 6" not in rest and "page_start=6" in rest
    assert (r.structured["pageStart"], r.structured["numPages"], r.structured["totalPages"],
            r.structured["nextPage"], r.structured["truncated"]) == (1, 5, 7, 6, True)
    r = call.ok("read_file", {"path": "work/doc.pdf", "page_start": 6, "page_limit": 5})
    assert r.content.startswith("Read PDF: work/doc.pdf\npages=6-7/7\n\n--- page 6 ---\n")
    assert r.content.endswith("[end of document]") and r.structured["nextPage"] is None


def test_a_pdf_window_stops_at_a_page_boundary_within_the_char_budget(tmp_path: Path) -> None:
    profile = Profile.default().edit(workspace={"max_read_chars": 1000})
    with Workbench(tmp_path / "ws", profile) as bench:
        (bench.workspace / "work" / "d.pdf").write_bytes(pdf("a" * 600, "b" * 600, "c" * 1500))
        inv = bench.invocation()
        r = inv.call("workspace_read_file", {"path": "work/d.pdf"})
        assert r.structured["numPages"] == 1 and r.structured["nextPage"] == 2
        r = inv.call("workspace_read_file", {"path": "work/d.pdf", "page_start": 3})
        assert r.structured["numPages"] == 1 and r.structured["truncated"] and "1,500 characters" in r.content


def test_pdf_refusals_are_coded(call) -> None:
    ws = call.bench.workspace / "work"
    (ws / "scan.pdf").write_bytes(pdf("", ""))
    r = call.err("read_file", {"path": "work/scan.pdf"}, "workspace.pdf_no_text")
    assert r.structured["totalPages"] == 2
    (ws / "mixed.pdf").write_bytes(pdf("words", ""))
    assert "(no extractable text on this page)" in call.ok("read_file", {"path": "work/mixed.pdf"}).content
    call.err("read_file", {"path": "work/mixed.pdf", "page_start": 3}, "workspace.page_out_of_range")
    (ws / "locked.pdf").write_bytes(encrypted(pdf("secret"), "pw"))
    call.err("read_file", {"path": "work/locked.pdf"}, "workspace.pdf_encrypted")
    (ws / "open.pdf").write_bytes(encrypted(pdf("shown anyway"), ""))  # an empty user password opens
    assert "shown anyway" in call.ok("read_file", {"path": "work/open.pdf"}).content
    (ws / "broken.pdf").write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 4)
    call.err("read_file", {"path": "work/broken.pdf"}, "workspace.pdf_unreadable")
    (ws / "cyclic.pdf").write_bytes(pdf("hi").replace(b"/Kids [3 0 R]", b"/Kids [3 0 R 2 0 R]"))
    call.err("read_file", {"path": "work/cyclic.pdf"}, "workspace.pdf_unreadable")


def test_import_toolbench_does_not_import_pypdf_and_pypdf_warnings_stay_off_stderr(tmp_path: Path) -> None:
    broken = pdf("hi").replace(b"startxref\n", b"startxref\n9")  # a wrong offset: pypdf repairs it, and warns
    (tmp_path / "b.pdf").write_bytes(broken)
    out = run_with_deadline("""
        import io, sys, contextlib, pathlib
        import toolbench
        from toolbench import Profile, Workbench
        before = "pypdf" in sys.modules
        err = io.StringIO()
        with contextlib.redirect_stderr(err), Workbench(pathlib.Path(sys.argv[1]) / "ws", Profile.default()) as b:
            (b.workspace / "work" / "b.pdf").write_bytes((pathlib.Path(sys.argv[1]) / "b.pdf").read_bytes())
            r = b.invocation().call("workspace_read_file", {"path": "work/b.pdf"})
        report([before, r.is_error, "hi" in r.content, err.getvalue()])
    """, args=(str(tmp_path),))
    assert out == [False, False, True, ""]


@settings(max_examples=300, deadline=None)
@given(fmt=st.sampled_from(["PNG", "JPEG", "GIF", "WebP"]), tail=st.binary(max_size=64))
def test_any_bytes_after_a_magic_number_give_a_size_or_a_header_error(fmt: str, tail: bytes) -> None:
    magic = {"PNG": b"\x89PNG\r\n\x1a\n", "JPEG": b"\xff\xd8\xff", "GIF": b"GIF89a",
             "WebP": b"RIFF\x00\x00\x00\x00WEBP"}
    try:
        info = image_info(magic[fmt] + tail, fmt)
    except HeaderError:  # never an IndexError or struct.error: every read is length-checked
        return
    assert info.format == fmt and info.width > 0 and info.height > 0
