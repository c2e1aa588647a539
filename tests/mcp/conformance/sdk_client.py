"""The same conformance client on the raw `mcp` SDK: the measure toolbench is held to.

It follows the suite's contract as `toolbench_client.py` does (see there), with the SDK's own
`Client`, streamable HTTP transport and OAuth providers, and an in-memory token store.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
CONTEXT: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
REDIRECT = "http://localhost:3000/callback"
CALLS = {"tools_call": ("add_numbers", {"a": 5, "b": 3}), "sse-retry": ("test_reconnection", {}),
         "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {})}


class Memory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Redirect:
    """Open the authorization URL and read the code off its redirect (no listener)."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient() as http:
            location = (await http.get(url, follow_redirects=False)).headers["location"]
        query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


async def elicit(context: Any, params: Any) -> Any:
    import mcp.types as types

    schema = getattr(params, "requested_schema", None) or {}
    content = {k: v["default"] for k, v in schema.get("properties", {}).items() if "default" in v}
    return types.ElicitResult(action="accept", content=content)


async def fetch_id_jag(audience: str, resource: str) -> str:
    async with httpx2.AsyncClient(timeout=20) as http:
        reply = await http.post(CONTEXT["idp_token_endpoint"], data={
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": CONTEXT["idp_id_token"], "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": audience, "resource": resource, "client_id": CONTEXT["idp_client_id"]})
        token: str = reply.raise_for_status().json()["access_token"]
        return token


async def auth_for(url: str) -> httpx2.Auth | None:
    storage = Memory()
    if not SCENARIO.startswith("auth/"):
        return None
    if SCENARIO == "auth/client-credentials-jwt":
        jwt = SignedJWTParameters(issuer=CONTEXT["client_id"], subject=CONTEXT["client_id"],
                                  signing_algorithm=CONTEXT.get("signing_algorithm", "ES256"),
                                  signing_key=CONTEXT["private_key_pem"])
        return PrivateKeyJWTOAuthProvider(server_url=url, storage=storage, client_id=CONTEXT["client_id"],
                                          assertion_provider=jwt.create_assertion_provider())
    if SCENARIO == "auth/client-credentials-basic":
        return ClientCredentialsOAuthProvider(server_url=url, storage=storage, client_id=CONTEXT["client_id"],
                                              client_secret=CONTEXT["client_secret"],
                                              token_endpoint_auth_method="client_secret_basic")
    if SCENARIO == "auth/cross-app-access-complete-flow":
        parts = urlsplit(url)
        async with httpx2.AsyncClient(timeout=20) as http:
            prm = (await http.get(f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"))
        return IdentityAssertionOAuthProvider(server_url=url, storage=storage, client_id=CONTEXT["client_id"],
                                              client_secret=CONTEXT["client_secret"],
                                              issuer=prm.json()["authorization_servers"][0],
                                              assertion_provider=fetch_id_jag,
                                              token_endpoint_auth_method="client_secret_basic")
    if CONTEXT.get("client_id"):
        secret = CONTEXT.get("client_secret")
        storage.client = OAuthClientInformationFull(
            client_id=CONTEXT["client_id"], client_secret=secret, redirect_uris=[AnyUrl(REDIRECT)],
            token_endpoint_auth_method="client_secret_basic" if secret else "none")
    redirect = Redirect()
    metadata = OAuthClientMetadata(client_name="conformance-client", redirect_uris=[AnyUrl(REDIRECT)],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    return OAuthClientProvider(server_url=url, client_metadata=metadata, storage=storage,
                               redirect_handler=redirect.redirect, callback_handler=redirect.callback,
                               client_metadata_url="https://conformance-test.local/client-metadata.json")


async def main(url: str) -> None:
    http = httpx2.AsyncClient(auth=await auth_for(url), timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as client:
        tools = (await client.list_tools()).tools
        name, arguments = CALLS.get(SCENARIO, (tools[0].name if tools else None, {}))
        if name is not None:
            await client.call_tool(name, arguments)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
