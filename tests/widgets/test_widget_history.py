from __future__ import annotations

from widget_support import call


def test_history_rows_follow_the_invocation_and_a_row_click_shows_its_result(app):
    call(app, "dice_roll", '{"formula": "3d6+4"}')
    call(app, "dice_roll", '{"formula":')
    assert len(app.history.row_buttons) == 2
    first = app.state.invocation.records[0].result
    app.history.row_buttons[0].click()
    assert app.state.result == first
    assert first.content in app.result.content.value
    assert "tool.invalid_arguments" not in app.result.header.value
    app.history.row_buttons[1].click()
    assert "tool.invalid_arguments" in app.result.header.value


def test_the_history_table_shows_the_dataframe_cells(app):
    call(app, "dice_roll", '{"formula":')
    labels = [c.value for c in app.history.grid.children if hasattr(c, "value")]
    assert "call_0001" in labels and "tool.invalid_arguments" in labels and '{"formula":' in labels


def test_a_new_invocation_empties_the_history(app):
    call(app, "dice_roll", '{"formula": "d4"}')
    app.snapshot.scene.value = "session"
    assert app.state.invocation.snapshot.scene == "session"
    assert app.history.row_buttons == []
