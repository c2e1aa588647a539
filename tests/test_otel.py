"""toolbench.otel: a span per model round and per tool call, in the GenAI conventions, read
back through the SDK's in-memory exporter and from an OTLP/HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolbench import Profile, Workbench, otel
from toolbench.testing import LocalProvider


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[tuple[Workbench, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with Workbench(tmp_path, Profile.default().edit(allow=["builtin:dice.roll"]), seed=3) as bench:
        otel.instrument(bench, tracer_provider=provider)
        yield bench, exporter


def test_a_run_is_a_span_per_round_and_its_calls_are_children(traced) -> None:
    from toolbench.models import OpenAIChat

    bench, exporter = traced
    answers = [LocalProvider.chat_calls([("dice_roll", {"formula": "2d6"}), ("dice_roll", {"formula": "x"})],
                                        usage=(11, 4)),
               LocalProvider.chat_text("You rolled.", usage=(20, 3))]
    with LocalProvider(answers) as server:
        run = bench.invocation().run(OpenAIChat(server.openai(), "gpt-4.1"), "Roll")
    assert run.stop_reason == "final"
    spans = exporter.get_finished_spans()
    rounds = [s for s in spans if s.name == "chat gpt-4.1"]
    tools = [s for s in spans if s.name == "execute_tool dice_roll"]
    assert len(rounds) == 2 and len(tools) == 2
    first = rounds[0].attributes
    assert (first["gen_ai.operation.name"], first["gen_ai.provider.name"], first["gen_ai.request.model"]) == (
        "chat", "openai", "gpt-4.1")
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (11, 4)
    assert rounds[1].attributes["gen_ai.usage.input_tokens"] == 20
    for tool in tools:  # children of the first round, within its time
        assert tool.parent is not None and tool.parent.span_id == rounds[0].context.span_id
        assert tool.context.trace_id == rounds[0].context.trace_id
        assert rounds[0].start_time <= tool.start_time <= tool.end_time <= rounds[0].end_time
    ok, bad = tools
    assert ok.attributes["gen_ai.tool.call.id"] == run.calls[0].call_id
    assert ok.attributes["toolbench.tool_id"] == "builtin:dice.roll" and "error.type" not in ok.attributes
    sent = run.rounds[0].response["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert ok.attributes["toolbench.arguments_chars"] == len(sent)  # the text as the model sent it
    assert bad.attributes["error.type"] == run.results[1].error_code == "tool.invalid_arguments"
    assert bad.status.status_code.name == "ERROR"
    assert not [s for s in spans if "2d6" in str(dict(s.attributes or {}).values())]  # sizes, never the arguments


def test_a_call_fired_by_hand_is_a_root_span_and_uninstrument_stops(traced) -> None:
    bench, exporter = traced
    inv = bench.invocation()
    inv.call("dice_roll", {"formula": "d4"})
    [span] = exporter.get_finished_spans()
    assert span.parent is None and span.attributes["gen_ai.tool.name"] == "dice_roll"
    assert span.end_time - span.start_time == pytest.approx(inv.records[0].elapsed_ms * 1e6, abs=1e3)


def test_spans_reach_an_otlp_http_receiver(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: list[bytes] = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append(gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{server.server_port}/v1/traces", timeout=10)))
        with Workbench(tmp_path, Profile.default().edit(allow=["builtin:dice.roll"])) as bench:
            stop = otel.instrument(bench, tracer_provider=provider)
            bench.invocation().call("dice_roll", {"formula": "2d6"})
            stop()
            bench.invocation().call("dice_roll", {"formula": "2d6"})  # not traced any more
        provider.shutdown()
    finally:
        server.shutdown()
    names = []
    for body in received:
        request = ExportTraceServiceRequest.FromString(body)
        names += [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert names == ["execute_tool dice_roll"]


def test_a_failing_observer_never_breaks_a_call_or_a_run(tmp_path: Path) -> None:
    import contextlib

    from toolbench.testing import ScriptedModel

    class Broken:
        @contextlib.contextmanager
        def round(self, run, index):  # type: ignore[no-untyped-def]
            yield
            raise RuntimeError("the tracer broke at the round's end")

        def call(self, invocation_id, record):  # type: ignore[no-untyped-def]
            raise RuntimeError("the tracer broke on a call")

    with Workbench(tmp_path, Profile.default().edit(allow=["builtin:dice.roll"])) as bench:
        bench.add_observer(Broken())
        assert bench.invocation().call("dice_roll", {"formula": "d4"}).error_code is None
        run = bench.invocation().run(ScriptedModel([[("dice_roll", {"formula": "d6"})], "done"]), "go")
        assert run.stop_reason == "final" and run.final_text == "done"
