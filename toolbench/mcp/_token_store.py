"""Where OAuth tokens and client registrations are kept: one owner-only file per server and
resource, outside every workspace, so no model's file tool can read them.

The folder is `TOOLBENCH_TOKEN_DIR`, else `$XDG_STATE_HOME/toolbench/mcp-oauth` (default
`~/.local/state/...`); it is made (and kept) mode 0700, its files 0600 from their creation,
replaced atomically. A folder inside the workspace, a link, or a file that is not a regular one
is refused (`mcp.token_store_unsafe`): a token is never written where a model could read it.
`TokenFile` is the SDK's `TokenStorage` protocol over one such file; tokens go nowhere else
(no log, trace, error or view holds them: the views only say whether a token is stored).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from pydantic import BaseModel, ValidationError

from ..core.errors import ToolbenchError
from ..core.fileio import read_regular_file, replace_at
from ._config import slugify

FILE_BYTES = 256 << 10  # a token file is a few KB
_METADATA: dict[str, type[BaseModel]] = {"oauth_metadata": OAuthMetadata,
                                         "protected_resource_metadata": ProtectedResourceMetadata}


def default_token_dir() -> Path:
    """`TOOLBENCH_TOKEN_DIR`, else the user's state folder (see the module docstring)."""
    given = os.environ.get("TOOLBENCH_TOKEN_DIR")
    if given:
        return Path(given).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "toolbench" / "mcp-oauth"


def _unsafe(why: str) -> ToolbenchError:
    return ToolbenchError("mcp.token_store_unsafe",
                          f"{why}; set TOOLBENCH_TOKEN_DIR to a folder of your own outside the workspace")


class TokenFolder:
    """The folder (None: `default_token_dir()`, read at each use, so setting the variable later
    counts); `root` is the workspace it must stay out of (None: no workspace)."""

    def __init__(self, path: Path | None = None, root: Path | None = None) -> None:
        self._path = path
        self.root = root

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else default_token_dir()

    def file(self, server: str, resource: str) -> TokenFile:
        digest = hashlib.sha256(resource.encode()).hexdigest()[:16]
        return TokenFile(self, f"{slugify(server)}-{digest}.json", server, resource)

    def _check(self) -> None:
        resolved = self.path.resolve()
        if self.root is not None:
            root = Path(self.root).resolve()
            if resolved == root or root in resolved.parents:
                raise _unsafe(f"the OAuth token folder {self.path} is inside the workspace, where a model can read it")

    def open(self) -> int:
        """A descriptor of the folder (made 0700 if missing), checked; the caller closes it."""
        self._check()
        try:
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as exc:
            raise _unsafe(f"cannot use the OAuth token folder {self.path}: {exc.strerror or exc}") from exc
        try:
            if os.fstat(fd).st_uid != os.getuid():
                raise _unsafe(f"the OAuth token folder {self.path} belongs to another user")
            os.fchmod(fd, 0o700)
        except BaseException:
            os.close(fd)
            raise
        return fd


class TokenFile:
    """The SDK's `TokenStorage` for one server and resource (read and written on the bench loop;
    a few KB, so the file I/O is not worth a thread). `expires_at` is kept absolute, so a token
    read in a later session is known to be stale and the SDK refreshes it (`bind`)."""

    def __init__(self, folder: TokenFolder, name: str, server: str, resource: str) -> None:
        self.folder = folder
        self.name = name
        self.server = server
        self.resource = resource
        self.preset_client: OAuthClientInformationFull | None = None  # a pre-registered client wins
        self._context: Any = None

    def bind(self, context: Any) -> None:
        """The SDK provider's context. The SDK's own load reads the token but neither when it
        expires nor where it came from, so a later session could not refresh it: the expiry and
        the discovered metadata (token endpoint, resource) are kept beside it and put back."""
        self._context = context

    # -- the document -------------------------------------------------------------------------

    def read(self) -> dict[str, Any]:
        os.close(self.folder.open())  # checked (and made) first
        try:
            data = read_regular_file(self.folder.path / self.name, FILE_BYTES, follow_links=False)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise _unsafe(f"cannot read the OAuth token file {self.name}: {exc.strerror or exc}") from exc
        try:
            document = json.loads(data)
        except ValueError:
            return {}  # a torn or foreign file: sign in again
        return document if isinstance(document, dict) else {}

    def _write(self, **changes: Any) -> None:
        document = {**self.read(), "server": self.server, "resource": self.resource, **changes}
        fd = self.folder.open()
        try:
            replace_at(fd, self.name, json.dumps(document, indent=1).encode(), mode=0o600)
        except OSError as exc:
            raise _unsafe(f"cannot write the OAuth token file {self.name}: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)

    def has_tokens(self) -> bool:
        try:
            return isinstance(self.read().get("tokens"), dict)
        except ToolbenchError:
            return False

    def clear(self) -> None:
        fd = self.folder.open()
        try:
            os.unlink(self.name, dir_fd=fd)
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)

    # -- TokenStorage ---------------------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        document = self.read()
        try:
            tokens = OAuthToken.model_validate(document["tokens"])
        except (KeyError, ValidationError):
            return None
        context = self._context
        if context is not None:
            expires_at = document.get("expires_at")
            if isinstance(expires_at, int | float):
                context.token_expiry_time = float(expires_at)
            for key, model in _METADATA.items():
                value = (document.get("metadata") or {}).get(key)
                if value is not None and getattr(context, key, None) is None:
                    with contextlib.suppress(ValidationError):  # else discovery runs again
                        setattr(context, key, model.model_validate(value))
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else time.time() + tokens.expires_in
        metadata = {key: found.model_dump(mode="json", exclude_none=True) for key in _METADATA
                    if (found := getattr(self._context, key, None)) is not None}
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at,
                    **({"metadata": metadata} if metadata else {}))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.preset_client is not None:
            return self.preset_client
        try:
            return OAuthClientInformationFull.model_validate(self.read()["client"])
        except (KeyError, ValidationError):
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.preset_client is not None:
            self.preset_client = client_info
            return
        self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    def stored_redirect_port(self) -> int | None:
        """The loopback port a stored registration was made with (its redirect URI must match)."""
        try:
            client = self.read().get("client") or {}
        except ToolbenchError:
            return None
        from urllib.parse import urlparse

        for uri in client.get("redirect_uris") or ():
            parsed = urlparse(str(uri))
            if parsed.hostname == "127.0.0.1" and parsed.port:
                return parsed.port
        return None
