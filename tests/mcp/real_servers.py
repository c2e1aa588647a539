"""The reference MCP servers as users run them, and a raw `mcp.Client` to compare with.

npm servers (`@modelcontextprotocol/server-everything`, `-filesystem`, `-memory`) come from
`tests/mcp/node` (`npm ci --prefix tests/mcp/node`, pinned by its lock file); PyPI servers
(`mcp-server-time`, `mcp-server-git`) are console scripts of the test extra."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import random
import shutil
import struct
import subprocess
import threading
import wave
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

CONFORMANCE_TABLE = pytest.StashKey[str]()  # the conformance suite's table, for the terminal summary
PYPI_SERVERS = ("mcp-server-time", "mcp-server-git")


def pypi_server(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"`{name}` is not on PATH: install the test extra (`pip install -e '.[test]'`)")
    return path


def make_files(root: Path) -> dict[str, Path]:
    """What the filesystem server reads: a ~197 KB PNG, a WAV, a 30,600-character text file."""
    rng = random.Random(13)
    width = height = 256
    raw = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))  # noise: PNG cannot shrink it

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    (root / "sub").mkdir(parents=True, exist_ok=True)
    files = {"png": root / "pic.png", "wav": root / "tone.wav", "text": root / "doc.txt", "md": root / "sub" / "a.md"}
    files["png"].write_bytes(png)
    with wave.open(str(files["wav"]), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(rng.randbytes(3200))
    line = "The quick brown fox jumps over the lazy dog, again and again. "
    files["text"].write_text((line * 500)[:30_599] + ".", encoding="utf-8")
    files["md"].write_text("# A\n\nA small note.\n", encoding="utf-8")
    return files


def make_repo(path: Path) -> Path:
    """A git repository with one commit and an unstaged change (for mcp-server-git)."""
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is not on PATH: mcp-server-git needs it")
    path.mkdir(parents=True)
    (path / "a.txt").write_text("a\n", encoding="utf-8")
    who = ["-c", "user.name=Toolbench", "-c", "user.email=toolbench@example.invalid"]
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
    for args in (["init", "-q", "-b", "main"], ["add", "a.txt"], [*who, "commit", "-q", "-m", "first"]):
        subprocess.run([git, *args], cwd=path, check=True, env=env, timeout=60)
    (path / "a.txt").write_text("a\nb\n", encoding="utf-8")
    return path


def raw_text(wire: Mapping[str, Any]) -> str:
    """The text blocks of a raw answer, trimmed and joined by a blank line (as the mapping joins them)."""
    texts = (b["text"].strip() for b in wire.get("content", []) if b.get("type") == "text")
    return "\n\n".join(t for t in texts if t)


class RawClient:
    """A raw `mcp.Client` on a stdio server, held open on an event loop in a thread; `roots` are
    declared as a bench declares its workspace roots, so both see the same server."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None,
                 roots: Sequence[Path] = ()) -> None:
        from mcp import Client, types
        from mcp.client.stdio import StdioServerParameters, get_default_environment

        params = StdioServerParameters(command=command[0], args=list(command[1:]),
                                       env={**get_default_environment(), **(env or {})})
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="raw-mcp-client", daemon=True)
        self.thread.start()
        opened: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._stop = asyncio.Event()

        async def list_roots(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=p.resolve().as_uri(), name=p.name) for p in roots])

        options = {"list_roots_callback": list_roots} if roots else {}

        async def hold() -> None:
            try:
                async with Client(params, **options) as client:
                    opened.set_result(client)
                    await self._stop.wait()
            except BaseException as exc:
                if not opened.done():
                    opened.set_exception(exc)
                raise

        self._held = asyncio.run_coroutine_threadsafe(hold(), self.loop)
        self.client = opened.result(timeout=60)

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def tools(self) -> list[dict[str, Any]]:
        page = self._run(self.client.list_tools())
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        result = self._run(self.client.call_tool(name, dict(arguments)))
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        try:
            self._held.result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


def read_chars(pid: int) -> int:
    """How many bytes the process has read so far (`/proc/<pid>/io` rchar): it grows when a
    server reads a request, which is how a test knows a call is in flight."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError(f"no rchar in /proc/{pid}/io")
