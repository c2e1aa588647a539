"""The file-writing primitives every part shares: atomic replace and write-once.

The only module of `core` that touches the disk; everything else in `core` is pure.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .errors import ToolbenchError


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace `path` with `text`: temp file, fsync, rename. Readers see old or new, never torn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # backslashreplace: a lone surrogate (half an emoji a model sent) is written as `\udXXX`
        # text, which a JSON string reads back as the same character, instead of failing the write.
        with open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
            f.write(text)
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
    try:
        if isinstance(text, bytes):
            with open(tmp, "wb") as fb:
                fb.write(text)
        else:
            # backslashreplace: a lone surrogate (half an emoji a model sent) is written as `\udXXX`
            # text, which a JSON string reads back as the same character, instead of failing the write.
            with open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
                f.write(text)
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
