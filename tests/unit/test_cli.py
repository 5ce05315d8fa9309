"""The ``myc`` command: ir and run on example arguments, and its error messages."""

from __future__ import annotations

import pytest

from myc.cli import main

SRC = '''
import numpy as np

def settle(x):
    while np.max(np.abs(x)) > 1.0:
        x = x * 0.5
    return np.sum(x)
'''


def test_run_and_ir_take_literals_and_numpy_expressions(tmp_path, capsys):
    src = tmp_path / "prog.py"
    src.write_text(SRC)
    assert main(["run", f"{src}:settle", "--args", "np.ones(8, np.float32) * 5"]) == 0
    assert capsys.readouterr().out.strip() == "5.0"
    assert main(["ir", f"{src}:settle", "--args", "3.0", "--stage", "typed"]) == 0
    assert main(["ir", f"{src}:settle", "--args", "np.ones(4) * 3", "--stage",
                 "kernels"]) == 0
    assert "loop" in capsys.readouterr().out


def test_unreadable_arguments_are_a_clear_message(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text(SRC)
    with pytest.raises(SystemExit, match="cannot read --args"):
        main(["run", f"{src}:settle", "--args", "np.bogus(3)"])
