"""OpenTelemetry traces of a bench's work, in the GenAI semantic conventions.

    from toolbench import otel
    otel.instrument(bench)                 # the global tracer provider; or tracer_provider=...

Each model round of a run is a span `chat <model>` (`gen_ai.operation.name` "chat",
`gen_ai.provider.name`, `gen_ai.request.model`, the tokens in `gen_ai.usage.input_tokens` /
`output_tokens`, `gen_ai.response.finish_reasons`), current while the round runs, so each of
its tool calls is its child. Each answered call is a span `execute_tool <call name>`
(`gen_ai.operation.name` "execute_tool", `gen_ai.tool.name`, `gen_ai.tool.call.id`, and
`toolbench.tool_id`, `toolbench.invocation_id`, `toolbench.round`, `toolbench.arguments_chars`,
`toolbench.content_chars`, `error.type` with the error code), timed by the call's own elapsed
time (a wait for Approve left out). Calls fired outside a run are root spans. Arguments and
results themselves are not recorded (they may hold secrets): their sizes are.

Needs `opentelemetry-api` (the SDK and an exporter are the user's: `toolbench[otel]`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .core.errors import ToolbenchError

try:
    from opentelemetry import trace
except ImportError as exc:  # an optional part: say how to get it
    raise ToolbenchError("bench.misuse",
                         f"toolbench.otel needs OpenTelemetry: pip install 'toolbench[otel]' ({exc})") from None
from .runtime.run import token_counts

if TYPE_CHECKING:
    from .runtime.bench import Workbench
    from .runtime.records import CallRecord
    from .runtime.run import Run

SCOPE = "toolbench"


class _Tracer:
    """The observer `instrument` adds: rounds and calls as spans."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer

    @contextlib.contextmanager
    def round(self, run: Run, index: int) -> Iterator[None]:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": run.protocol,
                      "gen_ai.request.model": run.model, "toolbench.run_id": run.id, "toolbench.run_round": index}
        with self.tracer.start_as_current_span(f"chat {run.model}", kind=trace.SpanKind.CLIENT,
                                               attributes=attributes) as span:
            try:
                yield
            finally:
                done = run.rounds[-1] if run.rounds and run.rounds[-1].index == index else None
                if done is not None:
                    tokens_in, tokens_out = token_counts(done.usage)
                    if tokens_in is not None:
                        span.set_attribute("gen_ai.usage.input_tokens", tokens_in)
                    if tokens_out is not None:
                        span.set_attribute("gen_ai.usage.output_tokens", tokens_out)
                    if done.finish:
                        span.set_attribute("gen_ai.response.finish_reasons", [done.finish])
                    if done.error is not None:
                        span.set_attribute("error.type", done.error.code)
                        span.set_status(trace.StatusCode.ERROR, done.error.code)

    def call(self, invocation_id: str, record: CallRecord) -> None:
        ended = time.time_ns()
        result = record.result
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": record.call_name,
            "gen_ai.tool.call.id": record.call_id, "toolbench.invocation_id": invocation_id,
            "toolbench.round": record.round, "toolbench.tool_id": record.tool_id or "",
            "toolbench.arguments_chars": len(_sent(record)),
            "toolbench.content_chars": len(result.content), "toolbench.externalized": record.externalized}
        if result.error_code:
            attributes["error.type"] = result.error_code
        span = self.tracer.start_span(f"execute_tool {record.call_name}", kind=trace.SpanKind.INTERNAL,
                                      attributes=attributes, start_time=ended - int(record.elapsed_ms * 1e6))
        if result.is_error:
            span.set_status(trace.StatusCode.ERROR, result.error_code or "error")
        span.end(end_time=ended)


def _sent(record: CallRecord) -> str:
    """The arguments' text as the model sent it (valid or not)."""
    arguments = record.arguments
    return arguments.sent_text or (arguments.replay_text() if arguments.is_valid else arguments.raw)


def instrument(bench: Workbench, tracer_provider: trace.TracerProvider | None = None) -> Callable[[], None]:
    """Trace `bench`'s model rounds and tool calls from now on; returns the function that stops it."""
    tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
    return bench.add_observer(_Tracer(tracer))
