"""Table 9.10 rows through the Workbench."""

from __future__ import annotations


def test_runtime_folder_is_invisible_to_the_shell(call) -> None:
    ws = call.bench.workspace
    (ws / "tool-args").mkdir(exist_ok=True)
    (ws / "tool-args" / "secret.json").write_text("{}")
    r = call("shell", {"command": "cp /tool-args/secret.json /work/leaked.json"})
    assert r.is_error
    assert not (ws / "work" / "leaked.json").exists()


def test_python_cannot_write_tool_results(call) -> None:
    r = call("shell", {"command": "python3 -c \"open('/tool-results/forbidden.txt','w').write('x')\""})
    assert r.is_error
    assert not (call.bench.workspace / "tool-results" / "forbidden.txt").exists()


def test_file_pipeline(call) -> None:
    ws = call.bench.workspace
    script = ("mkdir -p /work/d && printf '{\"text\":\"shell draft\"}' > /work/d/in.json && "
              "jq -r .text /work/d/in.json > /output/draft.md && cp /output/draft.md /output/copy.md && "
              "mv /output/copy.md /output/Moved.MD && rm /output/draft.md && cat /output/Moved.MD")
    r = call.ok("shell", {"command": script})
    assert "shell draft" in r.content
    assert (ws / "output" / "Moved.MD").read_text() == "shell draft\n"
    assert not (ws / "output" / "draft.md").exists()


def test_shell_write_makes_an_earlier_read_stale(call) -> None:
    ws = call.bench.workspace
    (ws / "output" / "doc.md").write_text("hello\n")
    call.ok("read_file", {"path": "output/doc.md"})
    call.ok("shell", {"command": "python3 -c \"open('doc.md','a').write('more\\n')\"", "workdir": "/output"})
    call.err("apply_patch", {"path": "output/doc.md", "old_string": "hello", "new_string": "bye"},
             "workspace.stale_file")
    call.ok("read_file", {"path": "output/doc.md"})
    call.ok("apply_patch", {"path": "output/doc.md", "old_string": "hello", "new_string": "bye"})
    assert (ws / "output" / "doc.md").read_text() == "bye\nmore\n"


def test_failed_python_keeps_its_write(call) -> None:
    r = call("shell", {"command": "python3 -c \"open('/tmp/x.txt','w').write('kept'); raise ValueError('boom')\""})
    assert r.is_error and r.error_code == "workspace.shell_exit" and r.structured["exitCode"] == 1
    assert (call.bench.workspace / "tmp" / "x.txt").read_text() == "kept"


def test_slash_tmp_is_workspace_tmp(call) -> None:
    call.ok("shell", {"command": "printf 'saved tmp' > /tmp/check.txt"})
    assert "saved tmp" in call.ok("read_file", {"path": "tmp/check.txt"}).content


def test_unknown_argument_is_refused(call) -> None:
    call.err("shell", {"command": "true", "root": "/"}, "tool.invalid_arguments")
