"""The snapshot with its provider faces: what `inv.snapshot` is.

`core.snapshot.Snapshot` is the data (bindings, budgets, diagnostics, the strict settings) and
its invariants; this subclass adds what needs the providers (rendering the tool list, the tool
choice, the schema checks, the golden form and the diff), so core never imports the providers.
The kernel freezes invocations into this class (`prepare(..., snapshot_type=Snapshot)`) and
`toolbench.Snapshot` is this class.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core.snapshot import Snapshot as SnapshotData
from ..core.turn import TurnContract
from ._api import check as check_bindings
from ._api import encode_tool_choice
from ._api import render as render_bindings
from ._diff import ToolListDiff, diff, golden
from ._registry import get_provider, names
from .types import Problem, Provider


class Snapshot(SnapshotData):
    def render(self, protocol: str | Provider, *, schema: str = "json-schema", strict: bool | None = None,
               defer_loading: Iterable[str] = (), contract: TurnContract | None = None) -> list[dict[str, Any]]:
        """The tool list exactly as that provider's API takes it (`protocol`: a provider or the
        name it is registered under, `toolbench.protocols.names()`); with `contract`, only the
        tools that round offers (`tool_choice` gives the matching tool choice).

        Gemini gets `parametersJsonSchema`, or the OpenAPI subset in `parameters` with
        `schema="openapi"` (for older models). `strict` defaults to the profile's setting for
        that provider (`tools.openaiStrict`, `tools.anthropicStrict`); `defer_loading` names
        Anthropic tools to send with `defer_loading: true`."""
        provider = get_provider(protocol)
        chosen = self.strict_for(provider.name) if strict is None else strict
        bindings = self.bindings
        if contract is not None:
            offered = set(contract.apply(self).names)
            bindings = tuple(b for b in bindings if b.call_name in offered)
        return render_bindings(provider, bindings, strict=chosen, schema=schema, defer_loading=defer_loading)

    def tool_choice(self, protocol: str | Provider, contract: TurnContract) -> Any:
        """The provider's tool choice for a round under `contract` (`None`: send no tool
        choice, as for `none`/`auto` with no tools); pairs with `render(protocol, contract=...)`."""
        turn = contract.apply(self)
        return encode_tool_choice(protocol, turn.protocol_choice(), turn.names)

    def check(self, protocols: Iterable[str | Provider] | None = None, *,
              schema: str = "json-schema") -> list[Problem]:
        """Every call-name and schema problem per provider, with the rule it breaks
        (`toolbench.protocols.Problem`); `fatal` ones would make that provider refuse the request.
        `protocols` are providers or names (default: every name of `toolbench.protocols.names()`).
        `schema` is Gemini's field, as in `render`; strict rules follow the profile's settings."""
        problems: list[Problem] = []
        for provider in map(get_provider, protocols or names()):
            problems += check_bindings(self.bindings, strict=self.strict_for(provider.name), protocols=[provider],
                                       schema=schema)
        return problems

    def golden(self) -> list[dict[str, Any]]:
        """The tool list as a JSON-able golden form: call name, ToolId, description, schema."""
        return golden(self.bindings)

    def diff(self, other: SnapshotData | list[dict[str, Any]]) -> ToolListDiff:
        """What changed from this snapshot to `other` (a Snapshot or a golden list)."""
        return diff(self.bindings, other.bindings if isinstance(other, SnapshotData) else other)
