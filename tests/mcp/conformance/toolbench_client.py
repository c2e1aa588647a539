"""The official MCP conformance suite's client, built only on toolbench's public API.

The suite (`@modelcontextprotocol/conformance`) starts a scenario's server and runs
`python toolbench_client.py <server-url>` with `MCP_CONFORMANCE_SCENARIO` (the scenario) and
`MCP_CONFORMANCE_CONTEXT` (JSON: credentials the scenario hands out) in the environment, then
judges what it saw on the wire. This client does what a toolbench user would: registers the
server with `bench.mcp.add(url=..., oauth=OAuth(...))`, lists its tools and calls one through
an invocation. Sign-in goes through toolbench's loopback redirect: the `on_authorize` handler
below plays the person's browser (it opens the authorization URL and follows its redirect).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolbench import Workbench
from toolbench.mcp import ElicitationRequest, OAuth

SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
CONTEXT: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
CIMD_URL = "https://conformance-test.local/client-metadata.json"
CALLS = {"tools_call": ("add_numbers", {"a": 5, "b": 3}), "sse-retry": ("test_reconnection", {}),
         "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {})}


def browser(url: str) -> None:
    """The person's browser: open the authorization URL; its redirect lands on toolbench's loopback port."""
    with urllib.request.urlopen(url, timeout=20) as page:
        page.read()


def defaults(request: ElicitationRequest) -> dict[str, Any]:
    """Accept a form with every default it names (SEP-1034)."""
    properties = (request.requested_schema or {}).get("properties", {})
    return {name: schema["default"] for name, schema in properties.items() if "default" in schema}


def fetch_id_jag(audience: str, resource: str) -> str:
    """Cross-app access, leg 1: the enterprise IdP exchanges its ID token for an ID-JAG (RFC 8693)."""
    form = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": CONTEXT["idp_id_token"], "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": audience, "resource": resource, "client_id": CONTEXT["idp_client_id"]}
    body = "&".join(f"{k}={urllib.parse.quote(str(v), safe='')}" for k, v in form.items()).encode()
    with urllib.request.urlopen(CONTEXT["idp_token_endpoint"], data=body, timeout=20) as reply:
        token: str = json.loads(reply.read())["access_token"]
        return token


def authorization_server(url: str) -> str:
    """The issuer the server's protected-resource metadata names (RFC 9728's path-based location)."""
    parts = urlsplit(url)
    metadata = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    with urllib.request.urlopen(metadata, timeout=20) as reply:
        issuer: str = json.loads(reply.read())["authorization_servers"][0]
        return issuer


def oauth_for(url: str, folder: Path) -> OAuth | None:
    if not SCENARIO.startswith("auth/"):
        return None
    if SCENARIO == "auth/client-credentials-jwt":
        key = folder / "client.pem"
        key.write_text(CONTEXT["private_key_pem"])
        key.chmod(0o600)
        return OAuth(grant="client_credentials", client_id=CONTEXT["client_id"], private_key_file=str(key),
                     issuer=authorization_server(url))
    if SCENARIO == "auth/client-credentials-basic":
        return OAuth(grant="client_credentials", client_id=CONTEXT["client_id"], client_secret=CONTEXT["client_secret"],
                     issuer=authorization_server(url))
    if SCENARIO == "auth/cross-app-access-complete-flow":
        return OAuth(grant="identity_assertion", client_id=CONTEXT["client_id"], client_secret=CONTEXT["client_secret"],
                     issuer=authorization_server(url), assertion=fetch_id_jag)
    if CONTEXT.get("client_id"):  # a pre-registered client
        return OAuth(client_id=CONTEXT["client_id"], client_secret=CONTEXT.get("client_secret"))
    return OAuth(client_metadata_url=CIMD_URL)


def main(url: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["TOOLBENCH_TOKEN_DIR"] = str(folder / "tokens")
        bench = Workbench(workspace=folder / "workspace")
        try:
            bench.mcp.on_authorize(browser)
            bench.mcp.on_elicitation(defaults)
            info = bench.mcp.add("conformance", url=url, oauth=oauth_for(url, folder), timeout=25)
            if info.state != "active":
                print(f"{info.diagnostic_code}: {info.diagnostic}", file=sys.stderr)
                return 1
            name, arguments = CALLS.get(SCENARIO, (info.tools[0].name if info.tools else None, {}))
            if name is None:
                return 0
            bench.profile = bench.profile.edit(allow=[str(t.tool_id) for t in info.tools if t.tool_id])
            inv = bench.invocation("chat")
            call = next(call for call, tool_id in inv.snapshot.call_names.items() if tool_id.name == name)
            result = inv.call(call, arguments)
            print(f"{name}: {result.error_code or 'ok'} {result.content[:200]!r}", file=sys.stderr)
            return 0
        finally:
            bench.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
