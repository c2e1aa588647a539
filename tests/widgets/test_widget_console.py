from __future__ import annotations

import asyncio
import json

from widget_support import call

from toolbench import MISSING


def test_raw_arguments_call_the_tool_and_show_the_content(app):
    call(app, "dice_roll", '{"formula": "3d6+4"}')
    record = app.state.invocation.records[-1]
    assert record.call_name == "dice_roll"
    assert not record.result.is_error
    assert record.result.content in app.result.content.value
    assert "Rolled 3d6+4: " in app.result.content.value


def test_malformed_raw_arguments_are_sent_verbatim_and_shown_with_their_code(app):
    call(app, "dice_roll", '{"formula":')
    record = app.state.invocation.records[-1]
    assert record.arguments.raw == '{"formula":'
    assert record.result.error_code == "tool.invalid_arguments"
    assert "tool.invalid_arguments" in app.result.header.value
    assert "tb-result-error" in app.result.header.value
    assert app.console.error_view.value == ""  # an error result is not a panel error


def test_an_empty_raw_box_sends_no_arguments_field(app):
    app.console.arguments.value = ""
    assert app.console.wire_arguments() is MISSING


def test_budget_left_is_shown_in_total_and_per_tool(bench):
    from toolbench.widgets import CallConsole

    bench.profile = bench.profile.edit(max_calls_per_tool={"builtin:dice.roll": 2})
    console = CallConsole(bench)
    console.call_name.value = "dice_roll"
    console.arguments.value = '{"formula": "d6"}'
    console.call_button.click()
    assert console.state.invocation.budget() == {"total": 79, "per_tool": {"dice_roll": 1}}
    assert "79" in console.budget.value and "dice_roll</code> 1" in console.budget.value


def test_exhausted_per_tool_budget_comes_back_as_an_error_result(bench):
    from toolbench.widgets import WorkbenchApp

    bench.profile = bench.profile.edit(max_calls_per_tool={"builtin:dice.roll": 1})
    app = WorkbenchApp(bench)
    call(app, "dice_roll", '{"formula": "d6"}')
    call(app, "dice_roll", '{"formula": "d6"}')
    code = app.state.invocation.records[-1].result.error_code
    assert code is not None and code in app.result.header.value


def test_form_mode_sends_the_form_object(app):
    console = app.console
    console.call_name.value = "weather"
    console.mode.value = "form"
    console.form.fields["city"].input.value = "Paris"
    console.form.fields["unit"].input.value = 1  # the index of "f"
    console.call_button.click()
    record = app.state.invocation.records[-1]
    assert record.arguments.value == {"city": "Paris", "unit": "f"}
    assert '"unit":"f"' in record.result.content.replace(" ", "")


def test_form_to_raw_copies_the_json_into_the_raw_box(app):
    console = app.console
    console.call_name.value = "dice_roll"
    console.mode.value = "form"
    console.form.fields["formula"].input.value = "2d10-1"
    console.to_raw.click()
    assert console.mode.value == "raw"
    assert console.arguments.value == '{"formula": "2d10-1"}'


def test_invalid_json_in_a_nested_form_field_shows_an_error_in_the_panel(bench):
    from toolbench.widgets import CallConsole

    def configure(options: dict) -> str:
        return str(sorted(options))

    bench.enable(bench.register_tool("demo", configure))
    console = CallConsole(bench)
    console.call_name.value = "configure"
    console.mode.value = "form"
    console.form.fields["options"].input.value = "{not json"
    console.call_button.click()
    assert console.state.invocation.records == []
    assert "tool.invalid_arguments" in console.error_view.value


def test_a_call_inside_a_running_loop_runs_as_a_task_and_shows_progress(app):
    seen = []
    app.state.observe("busy", lambda: seen.append(app.console.call_button.disabled))

    async def scenario() -> None:
        call(app, "dice_roll", '{"formula": "d20"}')
        assert app.state.busy  # the handler returned at once; the call runs as a task
        for _ in range(200):
            if not app.state.busy:
                break
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert seen == [True, False]
    assert app.state.invocation.records[-1].call_name == "dice_roll"
    assert "Rolled 1d20: " in app.result.content.value


def test_an_unknown_call_name_can_be_typed_and_fired(app):
    app.console.call_name.value = "no_such_tool"
    assert "no tool is named" in app.console.description.value
    app.console.arguments.value = "{}"
    app.console.call_button.click()
    record = app.state.invocation.records[-1]
    assert record.call_name == "no_such_tool"
    assert record.result.error_code == "model.unknown_tool_call"


def test_picking_a_tool_resets_the_raw_box_to_its_example(app):
    console = app.console
    console.call_name.value = "dice_roll"
    console.arguments.value = '{"formula": "9d9"}'
    console.call_name.value = "weather"
    assert json.loads(console.arguments.value) == {"city": ""}  # weather's required field, not dice's text
    console.arguments.value = "edited"
    console.example.click()
    assert json.loads(console.arguments.value) == {"city": ""}


def test_the_raw_box_says_where_the_json_breaks(app):
    console = app.console
    console.arguments.value = '{"formula":\n  3d6}'
    assert "line 2, column 4" in console.json_hint.value  # after the number 3
    assert "tool.invalid_arguments" in console.json_hint.value
    console.arguments.value = '{"formula": "3d6"}'
    assert console.json_hint.value == ""
    console.arguments.value = "[1, 2]"
    assert "not an object" in console.json_hint.value


def test_json_problem_names_the_place():
    from toolbench.widgets.console import json_problem

    assert json_problem("") is None and json_problem("null") is None and json_problem("{}") is None
    assert json_problem('{"a": 1,}') == ("the JSON breaks at line 1, column 9: "
                                         "Expecting property name enclosed in double quotes")


# the argument box, Ctrl+Enter and cancel ----------------------------------------------------
def typed(box, text: str) -> None:
    """What the browser sends for one edit: the text and its edit count."""
    box.edit_seq += 1
    box.value = text


def test_an_example_is_stamped_with_the_edits_it_had_seen(app):
    box = app.console.arguments
    typed(box, '{"formula": "d20"}')
    app.console.call_name.value = "weather"  # the pick's example, written after that edit
    assert json.loads(box.value).keys() == {"city"}
    assert box.value_seq == box.edit_seq  # the browser applies it: nothing was typed since
    stamp = box.value_seq
    typed(box, '{"city": "Oslo"}')  # typed in the browser before the next example arrives
    app.console.call_name.value = "dice_roll"
    assert box.value_seq == stamp + 1  # stamped with that edit: a later edit in the browser refuses it


def test_ctrl_enter_calls_with_the_text_the_browser_has(app):
    app.console.call_name.value = "dice_roll"
    handlers = app.console.arguments._msg_callbacks.callbacks
    for handler in handlers:
        handler(app.console.arguments, {"kind": "call", "text": '{"formula": "2d6"}'}, [])
    record = app.state.record
    assert record is not None and record.call_name == "dice_roll" and not record.result.is_error
    assert record.arguments.to_json() == {"formula": "2d6"}
    for handler in handlers:  # a message the box never sends is ignored, not an error
        handler(app.console.arguments, {"kind": "call", "text": 5}, [])
    assert len(app.state.records) == 1 and app.console.error_code is None


def test_cancel_ends_a_running_call_and_its_result_says_the_outcome_is_unknown(bench):
    import asyncio

    from toolbench.widgets import CallConsole, WorkbenchState

    started = asyncio.Event()

    async def hang() -> str:
        """Never returns."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    bench.enable(bench.register_tool("slow", hang, name="hang"))
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_early"))
    early = CallConsole(state)

    async def cancel_at_once() -> None:  # cancelled before the task began: the app is not left busy
        early.call_name.value = "hang"
        early.call_button.click()
        early.cancel.click()
        await asyncio.sleep(0.05)

    asyncio.run(cancel_at_once())
    assert state.pending is None and not early.call_button.disabled and early.cancel.disabled

    state = WorkbenchState(bench, bench.invocation("chat", id="inv_cancel"))
    console = CallConsole(state)
    assert console.cancel.disabled  # nothing runs

    async def run() -> None:
        console.call_name.value = "hang"
        console.arguments.value = "{}"
        console.call_button.click()
        await asyncio.wait_for(started.wait(), 30)  # the tool runs
        assert not console.cancel.disabled and console.call_button.disabled
        console.cancel.click()
        for _ in range(500):
            if state.pending is None:
                break
            await asyncio.sleep(0.01)

    asyncio.run(run())
    (record,) = state.records
    assert record.result.error_code == "tool.cancelled" and "outcome is unknown" in record.result.content
    assert state.record is record and console.cancel.disabled and not console.call_button.disabled
    assert not state.invocation.call("dice_roll", {"formula": "d6"}).is_error  # the invocation goes on


# the examples a person starts from ------------------------------------------------------------
def test_each_builtin_example_is_valid_and_fires_as_it_is(tmp_path):
    """A tool's own example (people only) validates against its schema and is not refused as sent;
    the form and the raw box start from it; the snapshot never carries it."""
    import jsonschema_rs

    from toolbench import Profile, Workbench
    from toolbench.widgets import WorkbenchApp

    bench = Workbench(tmp_path / "ws")
    builtins = [d for d in bench.catalog() if d.example is not None]
    assert {str(d.id) for d in builtins} >= {"builtin:dice.roll", "builtin:workspace.read_file",
                                           "builtin:workspace.search_files", "builtin:workspace.shell"}
    bench.close()
    allow = [str(d.id) for d in builtins]
    with Workbench(profile=Profile.default().edit(allow=allow)) as bench:
        app = WorkbenchApp(bench)
        order = ["workspace_write_file", "workspace_apply_patch", "workspace_delete"]  # the file's life
        bindings = sorted(app.state.invocation.snapshot.bindings,
                          key=lambda b: order.index(b.call_name) if b.call_name in order else -1)
        examples = {d.id: d.example for d in bench.catalog()}
        for binding in bindings:
            example = examples[binding.tool_id]
            assert binding.descriptor.example is None  # the snapshot's descriptor drops it
            jsonschema_rs.validate(binding.descriptor.input_schema, example)
            app.console.call_name.value = binding.call_name
            assert json.loads(app.console.arguments.value) == example, binding.call_name
            assert app.console.form.value() == example, binding.call_name
            result = app.state.invocation.call(binding.call_name, example)
            assert result.error_code is None, (binding.call_name, result.content)
            assert "example" not in binding.descriptor.model_dump(mode="json")
