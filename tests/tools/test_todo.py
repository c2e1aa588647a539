"""`todo.write` (LiveAgent §6): replace-whole semantics, validation order, result text, `inv.todos`."""

from __future__ import annotations

import pytest

from toolbench import Profile


@pytest.fixture
def inv(make_bench):
    return make_bench(profile=Profile.default().edit(allow=["builtin:todo.write"])).invocation()


def item(content, status="pending", active=None):
    return {"content": content, "status": status, "activeForm": active or f"Doing {content}"}


def test_a_call_replaces_the_whole_list_and_reports_progress(inv):
    r = inv.call("todo_write", {"todos": [item("Read", "completed"), item("Edit", "in_progress"), item("Test")]})
    assert not r.is_error
    assert r.content == "Todos updated: 1/3 completed.\n1. [completed] Read\n2. [in_progress] Edit\n3. [pending] Test"
    assert r.structured == {"kind": "todo_write", "todos": inv.todos}
    assert [t["content"] for t in inv.todos] == ["Read", "Edit", "Test"]
    inv.call("todo_write", {"todos": [item("Only")]})
    assert inv.todos == [item("Only")]


def test_an_empty_list_clears(inv):
    inv.call("todo_write", {"todos": [item("A")]})
    r = inv.call("todo_write", {"todos": []})
    assert r.content == "Todo list cleared." and inv.todos == []


def test_zero_in_progress_is_fine(inv):
    assert not inv.call("todo_write", {"todos": [item("A"), item("B", "completed")]}).is_error


@pytest.mark.parametrize(("wire", "code"), [
    ({}, "tool.invalid_arguments"),
    ({"todos": "not a list"}, "tool.invalid_arguments"),
    ({"todos": ["text"]}, "tool.invalid_arguments"),
    ({"todos": [{"content": "A", "status": "done", "activeForm": "Doing A"}]}, "tool.invalid_arguments"),
    ({"todos": [{"content": "A", "status": "pending"}]}, "tool.invalid_arguments"),
    ({"todos": [item("   ")]}, "tool.invalid_arguments"),
    ({"todos": [item("A", active=" ")]}, "tool.invalid_arguments"),
    ({"todos": [{**item("A"), "extra": 1}]}, "tool.invalid_arguments"),
    ({"todos": [item("A", "in_progress"), item("B", "in_progress")]}, "todo.too_many_in_progress"),
])
def test_bad_lists_are_refused_and_leave_the_list_untouched(inv, wire, code):
    inv.call("todo_write", {"todos": [item("Keep")]})
    r = inv.call("todo_write", wire)
    assert r.is_error and r.error_code == code
    assert inv.todos == [item("Keep")]


def test_the_count_of_items_in_progress_is_reported(inv):
    r = inv.call("todo_write", {"todos": [item(c, "in_progress") for c in "ABC"]})
    assert r.structured["in_progress"] == 3 and "3 items" in r.content


def test_each_invocation_has_its_own_list(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=["builtin:todo.write"]))
    first, second = bench.invocation(), bench.invocation()
    first.call("todo_write", {"todos": [item("A")]})
    assert second.todos == [] and len(first.todos) == 1
