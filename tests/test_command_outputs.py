"""Moving code does not change numbers: a fixed set of commands prints, byte for byte,
what it printed before the package was restructured (files recorded by
``benchmarks/command_outputs.py`` in ``tests/data/command_outputs/``)."""

import importlib.util
import sys
from pathlib import Path

import pytest

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
        assert (tmp_path / file).read_bytes() == (RECORDED / file).read_bytes(), file
