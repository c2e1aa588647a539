"""`toolbench eval CASES.py`: a file's cases against its models, the exit status for CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench import CODES, evals
from toolbench.cli import main

CASES = '''
from toolbench import evals
from toolbench.testing import ScriptedModel

CASES = [evals.Case("rolls", "Roll 2d6", expect=[evals.called("dice_roll", formula="2d6")]),
         evals.Case("chats", "Hi", expect=[evals.no_calls()])]
MODELS = {"good": lambda: ScriptedModel([[("dice_roll", {"formula": "2d6"})], "done"]),
          "talker": lambda: ScriptedModel(["hello"])}
'''


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.py"
    path.write_text(CASES, encoding="utf-8")
    return path


def test_eval_prints_the_pass_rates_and_saves_the_report(capsys, cases: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "run.parquet"
    code, out, err = run(capsys, "eval", str(cases), "--repeat", "2", "--concurrency", "4", "--out", str(out_file))
    assert "saved" in err
    assert code == 0 and "Report(4/8 attempts passed)" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:4]}
    assert rows == {"rolls": ["100%", "0%"], "chats": ["0%", "100%"]}  # columns good, talker
    saved = evals.Report.load(out_file)
    assert len(saved.attempts) == 8 and {a.model for a in saved.attempts} == {"good", "talker"}


def test_eval_exits_1_under_the_pass_rate_and_2_for_a_file_that_says_nothing(capsys, cases: Path,
                                                                            tmp_path: Path) -> None:
    code, out, err = run(capsys, "eval", str(cases), "--model", "good", "--min-pass-rate", "1")
    assert code == 1 and "Report(1/2 attempts passed)" in out
    assert err.startswith("toolbench: cli.eval_below_pass_rate:") and "chats / good: 0% passed" in err
    assert "cli.eval_below_pass_rate" in CODES
    assert run(capsys, "eval", str(cases), "--model", "good", "--min-pass-rate", "0")[0] == 0  # each case counts alone
    code, _out, err = run(capsys, "eval", str(cases), "--model", "nobody")
    assert code == 2 and "no model 'nobody' in MODELS" in err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n", encoding="utf-8")
    code, _out, err = run(capsys, "eval", str(empty))
    assert code == 2 and "defines no CASES" in err
    code, _out, err = run(capsys, "eval", str(tmp_path / "missing.py"))
    assert code == 2 and "is not a file" in err
    with pytest.raises(SystemExit) as bad:
        main(["eval", str(cases), "--min-pass-rate", "2"])
    assert bad.value.code == 2
