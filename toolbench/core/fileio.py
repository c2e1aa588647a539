"""The file-writing primitives every part shares: atomic replace and write-once.

The only module of `core` that touches the disk; everything else in `core` is pure.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .errors import ToolbenchError


def encode_text(text: str) -> bytes:
    """The UTF-8 bytes every text file is written as. backslashreplace: a lone surrogate (half
    an emoji a model sent) becomes `\\udXXX` text, which a JSON string reads back as the same
    character, instead of failing the write."""
    return text.encode("utf-8", "backslashreplace")


def write_atomic(path: Path, text: str | bytes, *, durable: bool = True) -> None:
    """Replace `path` with `text` (or bytes): temp file, fsync, rename. Readers see old or new, never torn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text if isinstance(text, bytes) else encode_text(text)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ToolbenchError("storage.write_failed", f"cannot write {path}: {exc.strerror or exc}") from exc


def write_once(path: Path, text: str | bytes, *, read_only: bool = True) -> None:
    """Create `path` with `text` (or bytes); refuse if it exists. Written whole, then made read-only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text if isinstance(text, bytes) else encode_text(text)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        if read_only:
            os.chmod(tmp, 0o444)
        os.link(tmp, path)  # fails if path exists: never overwrites
    except FileExistsError as exc:
        raise ToolbenchError("storage.already_exists", f"{path} exists already and is write-once") from exc
    except OSError as exc:
        raise ToolbenchError("storage.write_failed", f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
