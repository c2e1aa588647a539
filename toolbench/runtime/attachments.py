"""A result's attachments on disk: written once beside the call's records, read back to replay.

`save` runs before the call returns (the model may be told about the files, like an
externalised result's): each attachment becomes `tool-results/<call file stem>-<n><suffix>`,
write-once and read-only, and the result lists it as an `AttachmentRef`. The run log keeps
the refs, never the bytes, so a reopened invocation finds its attachments in those files;
`views` reads them back for transcripts, as runtime files (`runtime_files`: a regular file
beneath the workspace, at most the size the ref names); a missing or planted file gives a view
without data, which the providers' renderers report as left out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError
from ..core.results import Attachment, AttachmentRef, attachment_path
from ..protocols.types import AttachmentView
from ..tools.workspace.runtime_files import read_runtime_file

if TYPE_CHECKING:
    from .store import Store


def check(attachments: Any) -> str | None:
    """Why a tool's `attachments` are unusable, or None."""
    if isinstance(attachments, str | bytes) or not isinstance(attachments, Sequence):
        return f"the tool's attachments are a list of Attachment, not {type(attachments).__name__}"
    bad = next((a for a in attachments if not isinstance(a, Attachment)), None)
    if bad is not None:
        return f"the tool returned an attachment that is a {type(bad).__name__}, not an Attachment"
    return None


def save(store: Store, stem: str, attachments: Sequence[Attachment]) -> tuple[AttachmentRef, ...]:
    """Write each attachment of the call `stem` and return their refs; all or none are written
    (a failure takes back the files written so far, then raises `storage.*`)."""
    refs: list[AttachmentRef] = []
    try:
        for index, item in enumerate(attachments, 1):
            path = attachment_path(stem, index, item.mime_type)
            store.write_now(path, item.data)
            refs.append(AttachmentRef(kind=item.kind, mime_type=item.mime_type, path=path, size=len(item.data),
                                      sha256=hashlib.sha256(item.data).hexdigest(), uri=item.uri))
    except ToolbenchError:
        for ref in refs:
            store.remove(ref.path)
        raise
    return tuple(refs)


def views(store: Store, refs: Sequence[AttachmentRef]) -> tuple[AttachmentView, ...]:
    """The attachments with their bytes, as the protocol renderers take them."""
    out = []
    for ref in refs:
        try:  # a runtime file: a FIFO, a link out or a file over its size is not the one the call wrote
            data = read_runtime_file(store.workspace, ref.path, limit=ref.size)
        except ToolbenchError:
            data = None
        if data is not None and len(data) != ref.size:  # not the file the call wrote
            data = None
        out.append(AttachmentView(kind=ref.kind, mime_type=ref.mime_type, path=ref.path, size=ref.size, data=data))
    return tuple(out)
