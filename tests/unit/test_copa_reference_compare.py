"""experiments/copa_reference/compare_decisions.py: a NaN or infinity on either side is a difference, never agreement."""

import math
import subprocess
import sys
from pathlib import Path

import pytest

COMPARE = Path(__file__).resolve().parents[2] / "experiments" / "copa_reference" / "compare_decisions.py"


def _run(tmp_path, ref_row, ours_row):
    (tmp_path / "script.txt").write_text("ack 1\n")
    (tmp_path / "ref.txt").write_text("1 ack " + " ".join(map(repr, ref_row)) + "\n")
    (tmp_path / "ours.txt").write_text("1 ack " + " ".join(map(repr, ours_row)) + "\n")
    return subprocess.run([sys.executable, str(COMPARE), str(tmp_path / "script.txt"), str(tmp_path / "ref.txt"),
                           str(tmp_path / "ours.txt")], capture_output=True, text=True)


def test_identical_decisions_agree(tmp_path):
    res = _run(tmp_path, [10.0, 0.5, 0.0, 1.0, 1.0, 2.5], [10.0, 0.5, 0.0, 1.0, 1.0, 2.5])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 agree on every field" in res.stdout


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_nan_or_infinite_field_counts_as_a_difference(tmp_path, bad):
    for ref, ours in (([10.0, bad, 0, 1, 1, 2.5], [10.0, 0.5, 0, 1, 1, 2.5]),
                      ([10.0, bad, 0, 1, 1, 2.5], [10.0, bad, 0, 1, 1, 2.5])):
        res = _run(tmp_path, ref, ours)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "0 agree on every field" in res.stdout
