"""Signing in to HTTP servers: the manager's `SignIn` builds each connection's SDK OAuth provider
(`_oauth` says which) over its token file (`_token_store`), and runs the authorization-code step.

The step: `on_authorize(handler)` gets the authorization URL (sync or async); the default prints
it and opens a browser where there is one. Before the handler is called toolbench listens on the
redirect's loopback port (127.0.0.1 only) for that one request; the browser lands there, the
page says the sign-in is done, and the listener closes. Other paths get a 404 and the wait goes
on; an `error=` redirect is `mcp.sign_in_failed` with the server's reason. The wait is bounded
(`SIGN_IN_SECONDS`) and the connect timeout is stopped while a person signs in.

`on_authorize(False)` (what `toolbench check` sets unless `--sign-in`) refuses: a server that
needs a person fails to connect with `mcp.sign_in_required`. Failures of the SDK's flow (`OAuthFlowError`,
`OAuthTokenError`, `OAuthRegistrationError`) are kept on the transport context as
`mcp.sign_in_failed`, so the connection reports them rather than the JSON-RPC error the
transport turns them into. Messages never carry a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import sys
import webbrowser
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from ..core.errors import ToolbenchError
from ._client_side import invoke
from ._failures import ConnectFailed
from ._oauth import OAuth, ask_assertion, read_private_key, signing_algorithm
from ._token_store import TokenFile, TokenFolder

if TYPE_CHECKING:
    from ._transport import TransportContext

SIGN_IN_SECONDS = 300.0  # a person's time to sign in
AuthorizeHandler = Callable[[str], Any]
_DONE_PAGE = (b"<!doctype html><title>toolbench</title><p>Signed in. You can close this tab and go back to "
              b"toolbench.</p>")
_OAUTH_ERRORS = (OAuthFlowError, OAuthTokenError, OAuthRegistrationError)


class _ReportedByToolbench(logging.Filter):
    """Drop the SDK's traceback for a failed flow: the connection reports it as one coded line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in ("OAuth flow error", "Invalid refresh response")


logging.getLogger("mcp.client.auth.oauth2").addFilter(_ReportedByToolbench())


class SignInRequired(Exception):
    """Nobody may be asked to sign in now (raised by the non-interactive authorize step)."""


class SignIn:
    """The manager-wide half: the token folder and who is asked to open an authorization URL."""

    def __init__(self, folder: TokenFolder) -> None:
        self.folder = folder
        self.handler: AuthorizeHandler | None = None
        self.interactive = True  # False: no handler means refuse (toolbench check)

    def set_handler(self, handler: AuthorizeHandler | bool | None) -> None:
        """A callable, None (the default: print and open a browser) or False (refuse)."""
        if handler is False:
            self.handler, self.interactive = None, False
            return
        if handler is not None and not callable(handler):
            raise ToolbenchError("bench.misuse",
                                 f"on_authorize takes a callable, None or False, not {type(handler).__name__}")
        self.handler, self.interactive = handler, True

    def token_file(self, server: str, url: str) -> TokenFile:
        return self.folder.file(server, url)

    def auth(self, server: str, url: str, oauth: OAuth | None, context: TransportContext) -> httpx2.Auth:
        """The httpx auth for one connection to `url` (a new SDK provider per connection)."""
        store = self.token_file(server, url)
        provider = _provider(self, server, url, oauth or OAuth(), store, context)
        store.bind(getattr(provider, "context", None))  # the identity-assertion provider keeps no such context
        return _Watched(provider, context)

    async def authorize(self, server: str, url: str) -> None:
        handler = self.handler
        if handler is None:
            if not self.interactive:
                raise SignInRequired(server)
            handler = functools.partial(_default_authorize, server)
        await invoke(handler, url)


def _default_authorize(server: str, url: str) -> None:
    """Print the URL (a notebook shows it as a link) and open a browser when there is one."""
    print(f"Sign in to MCP server `{server}`: open {url}", file=sys.stderr, flush=True)
    with contextlib.suppress(webbrowser.Error):
        webbrowser.get().open(url)


def _provider(sign_in: SignIn, server: str, url: str, oauth: OAuth, store: TokenFile,
              context: TransportContext) -> Any:
    scope = " ".join(oauth.scopes) if oauth.scopes else None
    if oauth.grant == "client_credentials":
        assert oauth.client_id is not None  # OAuth checks what each grant needs
        if oauth.private_key_file:
            pem = read_private_key(oauth.private_key_file)
            jwt = SignedJWTParameters(issuer=oauth.client_id, subject=oauth.client_id,
                                      signing_algorithm=signing_algorithm(pem), signing_key=pem.decode())
            return PrivateKeyJWTOAuthProvider(server_url=url, storage=store, client_id=oauth.client_id,
                                              assertion_provider=jwt.create_assertion_provider(), scope=scope,
                                              issuer=oauth.issuer)
        assert oauth.client_secret is not None
        return ClientCredentialsOAuthProvider(server_url=url, storage=store, client_id=oauth.client_id,
                                              client_secret=oauth.client_secret, scope=scope, issuer=oauth.issuer,
                                              token_endpoint_auth_method="client_secret_basic")
    if oauth.grant == "identity_assertion":
        assertion = oauth.assertion
        assert oauth.client_id and oauth.client_secret and oauth.issuer and assertion is not None

        async def id_jag(audience: str, resource: str) -> str:
            return await ask_assertion(assertion, audience, resource)

        return IdentityAssertionOAuthProvider(server_url=url, storage=store, client_id=oauth.client_id,
                                              client_secret=oauth.client_secret, issuer=oauth.issuer,
                                              assertion_provider=id_jag, scope=scope,
                                              token_endpoint_auth_method="client_secret_basic")
    port = oauth.callback_port or store.stored_redirect_port() or _free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    if oauth.client_id is not None:
        store.preset_client = OAuthClientInformationFull(
            client_id=oauth.client_id, client_secret=oauth.client_secret, redirect_uris=[AnyUrl(redirect)],
            token_endpoint_auth_method="client_secret_basic" if oauth.client_secret else "none",
        )
    step = _AuthorizationStep(sign_in, server, url, port, context)
    metadata = OAuthClientMetadata(client_name="toolbench", redirect_uris=[AnyUrl(redirect)], scope=scope,
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    return OAuthClientProvider(server_url=url, client_metadata=metadata, storage=store,
                               redirect_handler=step.redirect, callback_handler=step.callback,
                               client_metadata_url=oauth.client_metadata_url)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class _AuthorizationStep:
    """One authorization: listen on the loopback port, ask the person, wait for the redirect."""

    def __init__(self, sign_in: SignIn, server: str, url: str, port: int, context: TransportContext) -> None:
        self._sign_in = sign_in
        self._server = server
        self._url = url
        self._port = port
        self._context = context
        self._listener: _Loopback | None = None

    async def redirect(self, authorization_url: str) -> None:
        self._context.person_waiting(True)
        try:
            self._listener = await _Loopback.open(self._port)
            await self._sign_in.authorize(self._server, authorization_url)
        except BaseException:
            await self._close()
            raise

    async def callback(self) -> AuthorizationCodeResult:
        try:
            if self._listener is None:
                raise OAuthFlowError("the loopback listener is not open")
            return await asyncio.wait_for(self._listener.result, SIGN_IN_SECONDS)
        except TimeoutError:
            raise OAuthFlowError(f"nobody signed in within {SIGN_IN_SECONDS:g} s") from None
        finally:
            await self._close()

    async def _close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.close()
        self._context.person_waiting(False)


class _Loopback:
    """An HTTP listener on 127.0.0.1:port for the one redirect to `/callback`."""

    def __init__(self) -> None:
        self.result: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None

    @classmethod
    async def open(cls, port: int) -> _Loopback:
        listener = cls()
        try:
            listener._server = await asyncio.start_server(listener._serve, "127.0.0.1", port)
        except OSError as exc:
            raise OAuthFlowError(f"cannot listen for the sign-in redirect on 127.0.0.1:{port} ({exc.strerror}); "
                                 "set another `callbackPort`") from exc
        return listener

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers: nothing in them is needed
            parts = line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
            if target is None or target.path != "/callback" or self.result.done():
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            if "error" in query:
                why = query["error"] + (f": {query['error_description']}" if query.get("error_description") else "")
                self.result.set_exception(OAuthFlowError(f"the authorization server refused the sign-in ({why})"))
            else:
                self.result.set_result(AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"),
                                                               iss=query.get("iss")))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(_DONE_PAGE), _DONE_PAGE))
        except (TimeoutError, OSError, ValueError, IndexError):
            pass
        finally:
            with contextlib.suppress(OSError):
                await writer.drain()
            writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)


class _Watched(httpx2.Auth):
    """The SDK provider, with its failures kept on the transport context (see the docstring)."""

    requires_request_body = True
    requires_response_body = True

    def __init__(self, provider: httpx2.Auth, context: TransportContext) -> None:
        self.provider = provider
        self._context = context

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except SignInRequired:
            self._context.auth_failed(ConnectFailed(
                "mcp.sign_in_required",
                "the server needs you to sign in (OAuth) and nobody can be asked here: sign in once with "
                "`toolbench check --sign-in` (the token is kept for later runs), or use a client-credentials grant",
            ))
            raise
        except _OAUTH_ERRORS as exc:
            self._context.auth_failed(ConnectFailed("mcp.sign_in_failed", f"signing in failed: {exc}"))
            raise
        except ToolbenchError as exc:
            self._context.auth_failed(ConnectFailed(exc.code, exc.message))
            raise
        finally:
            await flow.aclose()
