"""Property tests: the sanitisers accept any schema, are idempotent, and leave nothing refused."""

from __future__ import annotations

import inspect
import subprocess
import sys
import warnings

from google.genai import types as genai_types
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_tools import tool

import toolbench.protocols as protocols
from toolbench.protocols import check, render

NAMES = st.sampled_from(["a", "b", "path", "$id", "x-y"])
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"])


def schemas(depth: int = 3) -> st.SearchStrategy[dict]:
    child = schemas(depth - 1) if depth else st.just({"type": "string"})
    plain = {
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3)),
        "description": st.text(max_size=5),
        "format": st.sampled_from(["email", "date-time", "int32", "enum", "uri"]),
        "enum": st.lists(st.one_of(st.text(max_size=3), st.integers()), min_size=1, max_size=3),
        "const": LEAVES,
        "default": LEAVES,
        "title": st.text(max_size=3),
        "minimum": st.integers(0, 3),
        "exclusiveMinimum": st.integers(0, 3),
        "multipleOf": st.integers(1, 3),
        "uniqueItems": st.booleans(),
        "additionalProperties": st.one_of(st.booleans(), child),
        "required": st.lists(NAMES, max_size=3),
        "$schema": st.just("http://json-schema.org/draft-07/schema#"),
        "$id": st.just("urn:x"),
        "$ref": st.sampled_from(["#/$defs/A", "#/$defs/Missing", "#/definitions/B"]),
        "properties": st.dictionaries(NAMES, child, max_size=3),
        "items": child,
        "anyOf": st.lists(st.one_of(child, st.just({"type": "null"})), min_size=1, max_size=3),
        "oneOf": st.lists(st.one_of(child, st.just({"type": "null"})), min_size=1, max_size=3),
        "allOf": st.lists(child, min_size=1, max_size=2),
        "not": child,
    }
    keys = st.lists(st.sampled_from(sorted(plain)), unique=True, max_size=4)
    return keys.flatmap(lambda ks: st.fixed_dictionaries({k: plain[k] for k in ks}))


ROOTS = st.builds(
    lambda props, defs, extra: {"type": "object", "properties": props, "$defs": defs, **extra},
    st.dictionaries(NAMES, schemas(), max_size=4),
    st.fixed_dictionaries({"A": schemas(1)}),
    schemas(0),
).map(lambda s: {**s, "type": "object"})


def gemini_parameters(schema: dict, mode: str = "openapi") -> dict | None:
    rendered = render("gemini", [tool("t", schema)], schema=mode)
    field = "parameters" if mode == "openapi" else "parametersJsonSchema"
    return rendered[0]["functionDeclarations"][0].get(field)


@settings(max_examples=150, deadline=None)
@given(ROOTS)
def test_gemini_openapi_render_always_validates_and_leaves_nothing_to_repair(schema):
    parameters = gemini_parameters(schema)
    if parameters is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        genai_types.Schema.model_validate(parameters)
    assert [p for p in check([tool("t", parameters)], protocols=["gemini"], schema="openapi") if p.fatal] == []
    assert gemini_parameters(parameters) == parameters  # idempotent


@settings(max_examples=150, deadline=None)
@given(ROOTS)
def test_gemini_json_schema_render_is_idempotent_and_leaves_nothing_to_repair(schema):
    sent = gemini_parameters(schema, "json-schema")
    if sent is None:
        return
    assert "$schema" not in sent and "$id" not in sent
    assert sent.get("properties", {}).keys() == schema.get("properties", {}).keys()
    genai_types.FunctionDeclaration.model_validate({"name": "t", "parametersJsonSchema": sent})
    assert [p for p in check([tool("t", sent)], protocols=["gemini"]) if p.repaired] == []
    assert gemini_parameters(sent, "json-schema") == sent


@settings(max_examples=150, deadline=None)
@given(ROOTS)
def test_strict_render_is_idempotent_and_closes_every_object(schema):
    once = render("openai", [tool("t", schema)], strict=True)[0]["function"]["parameters"]
    assert render("openai", [tool("t", once)], strict=True)[0]["function"]["parameters"] == once
    repaired = [p for p in check([tool("t", once)], strict=True, protocols=["openai"]) if p.repaired]
    assert repaired == []


@settings(max_examples=150, deadline=None)
@given(ROOTS)
def test_anthropic_render_removes_only_schema_and_id(schema):
    rendered = render("anthropic", [tool("t", schema)])[0]["input_schema"]
    assert "$schema" not in rendered and "$id" not in rendered
    assert rendered.get("properties", {}).keys() == schema.get("properties", {}).keys()
    assert render("anthropic", [tool("t", rendered)])[0]["input_schema"] == rendered


def test_public_names_are_listed_once_and_importable():
    assert len(set(protocols.__all__)) == len(protocols.__all__)
    public = {n for n in dir(protocols) if not n.startswith("_") and not inspect.ismodule(getattr(protocols, n))}
    assert public - {"annotations"} == set(protocols.__all__)


def test_the_library_does_not_import_a_provider_sdk():
    code = (
        "import sys, toolbench.protocols as p; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'anthropic', 'google', 'httpx')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
