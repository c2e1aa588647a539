"""The evidence contract and its block (LiveAgent services/memory/mutations/evidence.rs, content.rs):
the canonical front-matter block at the head of a body, read back for the confidence, replaced
by new evidence and kept whole by a merge."""

from __future__ import annotations

import pytest

from toolbench.tools.memory.evidence import (
    apply_evidence,
    confidence_of,
    merge_with_evidence,
    parse_aliases,
    split_evidence,
    with_evidence,
)

TRIP_BLOCK = "\n".join([
    "---", "confidence: high", 'source_quote: "please remember my plan"', 'reasoning: "asked to remember"',
    "aliases: []", "conflicts_with: []", 'supersedes: ""', 'override_reject: ""', "---"])


@pytest.mark.parametrize(("fields", "applied", "downgraded"), [
    ({"confidence": "high", "source_quote": "I love tea"}, "high", False),
    ({"confidence": "high", "source_quote": "tea"}, "medium", True),
    ({"confidence": "high"}, "low", True),
    ({"confidence": "medium", "source_quote": "x"}, "medium", False),
    ({"confidence": "medium"}, "low", True),
    ({"confidence": "LOW"}, "low", False),
    ({"confidence": "certain", "source_quote": "I love tea"}, "low", False),
    ({"source_quote": "I love tea"}, "low", False),
])
def test_the_confidence_contract(fields, applied, downgraded):
    evidence = apply_evidence(fields)
    assert evidence is not None
    assert (evidence.confidence, evidence.auto_downgraded) == (applied, downgraded)


def test_no_evidence_fields_means_no_evidence():
    assert apply_evidence({"body": "x"}) is None


def test_aliases_take_a_comma_string_or_a_list_of_eight():
    assert parse_aliases(" a, b ,,c ") == ["a", "b", "c"]
    assert parse_aliases(["x", "y"]) == ["x", "y"]
    with pytest.raises(Exception, match="at most 8"):
        parse_aliases(",".join("abcdefghi"))


def test_the_block_is_canonical_and_heads_the_body():
    evidence = apply_evidence({"confidence": "high", "source_quote": "tabs", "aliases": "tabs, indent",
                               "reasoning": 'said "always"\ntwice'})
    assert evidence is not None
    assert with_evidence("The user prefers tabs.", evidence) == "\n".join([
        "---", "confidence: medium", "auto_downgraded: true", 'source_quote: "tabs"',
        'reasoning: "said \\"always\\" twice"', 'aliases: ["tabs", "indent"]', "conflicts_with: []",
        'supersedes: ""', 'override_reject: ""', "---", "", "The user prefers tabs."])


def test_new_evidence_replaces_a_block_the_body_brought():
    evidence = apply_evidence({"confidence": "low"})
    assert evidence is not None
    body = with_evidence(f"{TRIP_BLOCK}\n\nA trip in July.", evidence)
    assert body.count("---\n") == 2 and confidence_of(body) == "low" and body.endswith("\n\nA trip in July.")


def test_quotes_and_fields_are_bounded():
    evidence = apply_evidence({"confidence": "high", "source_quote": "q" * 200, "reasoning": "r" * 500})
    assert evidence is not None
    block, _ = split_evidence(with_evidence("x", evidence))
    assert f'source_quote: "{"q" * 80}"' in block.split("\n") and f'reasoning: "{"r" * 240}"' in block.split("\n")


@pytest.mark.parametrize(("body", "confidence"), [
    (f"{TRIP_BLOCK}\n\nbody", "high"),
    ("---\nconfidence: 'Medium'\n---\nbody", "medium"),
    ("---\nconfidence: sure\n---\n\nbody", None),
    ("plain body", None),
    ("---\nnever closed\nconfidence: high", None),  # not a block: the text stays the body's
])
def test_the_confidence_is_read_from_the_block(body, confidence):
    assert confidence_of(body) == confidence


def test_split_evidence():
    assert split_evidence(f"{TRIP_BLOCK}\n\n\nA trip.") == (TRIP_BLOCK[4:-4], "A trip.")
    assert split_evidence("No block.") == ("", "No block.")


def test_a_merge_keeps_the_existing_block_whole():
    old = f"{TRIP_BLOCK}\n\nA trip in July. Day one: the palace."
    merged = merge_with_evidence(old, "A trip in August.")
    assert merged.startswith(TRIP_BLOCK + "\n\n")
    assert "A trip in August." in merged and "Day one: the palace." in merged and "July" not in merged


def test_a_merge_takes_the_incoming_block_when_there_is_one():
    """upstream confidence_only_update_refreshes_evidence_without_rewriting_body"""
    old = "---\nconfidence: low\nsource_quote: \"maybe CS\"\n---\n\nThe user may study computer science."
    incoming = "---\nconfidence: medium\nsource_quote: \"I study CS\"\n---"
    merged = merge_with_evidence(old, incoming)
    assert confidence_of(merged) == "medium" and "confidence: low" not in merged
    assert merged.endswith("\n\nThe user may study computer science.")
