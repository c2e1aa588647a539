"""A workspace's files as one gzipped tar, and back: what a recipe (runtime/recipe.py) carries.

Left out: `.toolbench/` at the top (the runtime's records, and the MCP sign-in tokens: secrets
stay where they are) and `tool-results/` (a copy makes its own), and anything not a regular
file, folder or link (a FIFO a hostile workspace planted is never opened). Unpacked through
`tarfile`'s `data` filter: no path or link leaves the folder; a member it refuses is left out.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

LEFT_OUT = (".toolbench", "tool-results")


def pack(workspace: Path) -> bytes:
    """The workspace's files as a gzipped tar, without what `LEFT_OUT` names at its top."""
    buffer = io.BytesIO()

    def kept(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        top = info.name.split("/", 1)[0]
        if top in LEFT_OUT or not (info.isfile() or info.isdir() or info.issym()):
            return None  # a FIFO or device a hostile workspace planted is not carried
        return info

    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for entry in sorted(os.listdir(workspace)):
            tar.add(workspace / entry, arcname=entry, filter=kept)
    return buffer.getvalue()


def unpack(files: bytes, folder: Path) -> None:
    """Unpack `pack`'s tar into `folder`; a member the data filter refuses is left out."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(files), mode="r:gz") as tar:
        for member in tar:
            try:
                tar.extract(member, folder, filter="data")
            except tarfile.FilterError:
                continue

