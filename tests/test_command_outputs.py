"""Moving code does not change numbers: a fixed set of commands prints what it printed
before the package was restructured (files recorded by ``benchmarks/command_outputs.py``
in ``tests/data/command_outputs/``): the same text, and every number in it the same to
`RELATIVE` (another numpy may sum in another order: 0.030161382938637318 printed as
0.03016138293863731 by numpy 2.4).

A guard against change, not a check of correctness: the recorded files are the code's
own earlier output, re-recorded (with the reason in the commit) when a change is meant
to move a number. That each number is right is tested elsewhere, against closed forms,
confidence intervals and published values."""

import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest

#: How far apart (relative) a recorded number and the one printed now may be: the last
#: digits of a float, not a change in what the code computes.
RELATIVE = 1e-9
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _same(made: str, recorded: str) -> bool:
    """Whether two outputs have the same text between their numbers and the same
    numbers to `RELATIVE`."""
    if NUMBER.split(made) != NUMBER.split(recorded):
        return False
    ours, theirs = NUMBER.findall(made), NUMBER.findall(recorded)
    # whole numbers (counts, seeds) exactly; only floats to `RELATIVE`
    return len(ours) == len(theirs) and all(
        a == b or (any(c in a + b for c in ".eE")
                   and math.isclose(float(a), float(b), rel_tol=RELATIVE, abs_tol=1e-300))
        for a, b in zip(ours, theirs))

HERE = Path(__file__).parent
RECORDED = HERE / "data" / "command_outputs"
_spec = importlib.util.spec_from_file_location(
    "command_outputs", HERE.parent / "benchmarks" / "command_outputs.py")
command_outputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(command_outputs)


@pytest.mark.parametrize("name", sorted(command_outputs.COMMANDS))
def test_same_output_as_recorded(name, tmp_path):
    executable = str(Path(sys.executable).with_name("forkjoin-sim"))
    command_outputs.run(name, tmp_path, executable)
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in RECORDED.glob(f"{name}.*"))
    for file in made:
        made_text = (tmp_path / file).read_text()
        assert _same(made_text, (RECORDED / file).read_text()), file


def test_outputs_differing_beyond_the_last_digits_are_not_the_same():
    """The comparison lets a float's last digits go, nothing else."""
    recorded = '{"lag": 0.030161382938637318, "jobs": 2000000, "p50": 6.921875}'
    assert not _same('{"jobs": 2000000001}', '{"jobs": 2000000000}')
    assert not _same("seed 12345678901234", "seed 12345678901235")
    assert _same('{"lag": 0.03016138293863731, "jobs": 2000000, "p50": 6.921875}',
                 recorded)
    for other in ('{"lag": 0.03016138, "jobs": 2000000, "p50": 6.921875}',
                  '{"lag": 0.030161382938637318, "jobs": 2000001, "p50": 6.921875}',
                  '{"lag": 0.030161382938637318, "jobs": 2000000, "p90": 6.921875}',
                  '{"lag": 0.030161382938637318, "jobs": 2000000}',
                  '{"lag": 0.030161382938637318, "jobs": 2000000, "p50": 6.921875} '
                  'seed 12345678901235'):
        assert not _same(other, recorded)
