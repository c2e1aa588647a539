"""OAuth 2.1 for streamable HTTP servers: the `OAuth` value and which SDK provider it builds.

Every flow is the SDK's own (`mcp.client.auth`): discovery of the protected-resource and
authorization-server metadata, dynamic client registration, client ID metadata documents,
PKCE, scope selection and step-up, refresh. toolbench only chooses the provider and hands it
a token store (`_token_store`) and, for the authorization-code grant, the loopback redirect
(`_sign_in`):

- `grant="authorization_code"` (the default): `OAuthClientProvider`. With `client_id` the
  client is pre-registered (`client_secret` makes its token requests `client_secret_basic`,
  none makes them `none`); with `client_metadata_url` the SDK sends that URL as the client id
  where the server supports client ID metadata documents; otherwise it registers dynamically.
  The redirect URI is `http://127.0.0.1:<port>/callback` (RFC 8252's loopback literal): the
  port is `callback_port`, else the one the stored registration names, else a free one.
- `grant="client_credentials"`: `PrivateKeyJWTOAuthProvider` with `private_key_file` (a PEM
  key; its type picks the signing algorithm), else `ClientCredentialsOAuthProvider` with
  `client_secret` (`client_secret_basic`, which RFC 6749 makes every server support). Give
  `issuer` (the authorization server's): without it the MCP server's metadata decides where
  the credentials go, and the SDK warns so (it will require it in 3.0).
- `grant="identity_assertion"` (cross-app access, SEP-990): `IdentityAssertionOAuthProvider`
  with `client_id`, `client_secret`, the authorization server's `issuer`, and `assertion`, a
  callable `(audience, resource) -> ID-JAG` (sync or async) that asks the enterprise IdP.

Every HTTP server gets OAuth when it answers 401, as the format's other clients do; `OAuth()`
or an `mcp.json` `"oauth"` object only says how.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.errors import ToolbenchError
from ..core.fileio import read_regular_file
from ._client_side import invoke
from ._mcp_json import config_invalid

Grant = Literal["authorization_code", "client_credentials", "identity_assertion"]
GRANTS: tuple[str, ...] = ("authorization_code", "client_credentials", "identity_assertion")
Assertion = Callable[[str, str], "Awaitable[str] | str"]

# mcp.json's camelCase keys and the fields they set (`assertion` is a callable: Python only).
_CONFIG_KEYS = {
    "clientId": "client_id", "clientSecret": "client_secret", "scopes": "scopes", "callbackPort": "callback_port",
    "grant": "grant", "privateKeyFile": "private_key_file", "clientMetadataUrl": "client_metadata_url",
    "issuer": "issuer",
}


@dataclass(frozen=True, slots=True)
class OAuth:
    """How to sign in to one HTTP server (all optional: the SDK discovers and registers)."""

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] | None = None
    callback_port: int | None = None
    grant: Grant = "authorization_code"
    private_key_file: str | None = None
    client_metadata_url: str | None = None
    issuer: str | None = None
    assertion: Assertion | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in ("client_id", "client_secret", "private_key_file", "client_metadata_url", "issuer"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise config_invalid(f"`oauth.{name}` must be a non-empty string")
        if self.scopes is not None:
            scopes = (self.scopes,) if isinstance(self.scopes, str) else self.scopes
            if not isinstance(scopes, list | tuple) or not all(isinstance(s, str) and s.strip() for s in scopes):
                raise config_invalid("`oauth.scopes` must be a list of scope names")
            object.__setattr__(self, "scopes", tuple(s for scope in scopes for s in scope.split()))
        port = self.callback_port
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise config_invalid(f"`oauth.callback_port` must be a port number (1-65535), not {port!r}")
        if self.grant not in GRANTS:
            raise config_invalid(f"`oauth.grant` is one of {', '.join(GRANTS)}, not {self.grant!r}")
        if self.assertion is not None and not callable(self.assertion):
            raise config_invalid("`oauth.assertion` must be a callable (audience, resource) -> ID-JAG")
        missing = [f"`{name}`" for name in self._required() if getattr(self, name) is None]
        if missing:
            raise config_invalid(f"the {self.grant} grant needs {', '.join(missing)} in `oauth`")
        if self.client_metadata_url is not None and not self.client_metadata_url.startswith("https://"):
            raise config_invalid("`oauth.client_metadata_url` must be an https:// URL (a client ID metadata document)")

    def _required(self) -> tuple[str, ...]:
        if self.grant == "client_credentials":
            return ("client_id",) if self.private_key_file else ("client_id", "client_secret")
        if self.grant == "identity_assertion":
            return ("client_id", "client_secret", "issuer", "assertion")
        return ()

    @property
    def interactive(self) -> bool:
        """Whether signing in needs a person (the authorization-code grant)."""
        return self.grant == "authorization_code"

    @classmethod
    def from_config(cls, value: Any) -> OAuth | None:
        """From an `mcp.json` entry's expanded `"oauth"` object (camelCase keys); None stays None."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise config_invalid("`oauth` must be an object (`{}` for discovery and registration)")
        unknown = sorted(str(k) for k in value if k not in _CONFIG_KEYS)
        if unknown:
            raise config_invalid(f"`oauth` takes {', '.join(_CONFIG_KEYS)}; not {', '.join(unknown)}")
        return cls(**{_CONFIG_KEYS[k]: v for k, v in value.items() if v is not None})


async def ask_assertion(assertion: Assertion, audience: str, resource: str) -> str:
    """The ID-JAG from a sync (run in a worker thread) or async assertion callable."""
    reply = await invoke(assertion, audience, resource)
    if not isinstance(reply, str) or not reply:
        raise ToolbenchError("mcp.sign_in_failed", "the OAuth assertion callable returned no ID-JAG")
    return reply


def signing_algorithm(pem: bytes) -> str:
    """The JWS algorithm for a PEM private key: ES256/384/512 by curve, RS256, or EdDSA."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ToolbenchError("mcp.sign_in_failed",
                             f"the OAuth private key is not an unencrypted PEM key: {exc}") from exc
    if isinstance(key, ec.EllipticCurvePrivateKey):
        by_curve = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
        if key.curve.name in by_curve:
            return by_curve[key.curve.name]
    elif isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ToolbenchError("mcp.sign_in_failed", f"the OAuth private key's type ({type(key).__name__}) cannot sign a JWT")


def read_private_key(path: str) -> bytes:
    """The PEM key file's bytes, read as a regular file of at most 64 KB."""
    try:
        return read_regular_file(Path(path).expanduser(), 64 << 10)
    except OSError as exc:
        raise ToolbenchError("mcp.sign_in_failed",
                             f"cannot read the OAuth private key file {path}: {exc.strerror or exc}") from exc
