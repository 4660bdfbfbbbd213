"""A resource left open fails the test that left it open, not a later one (tests/leaks.py)."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

LEAKING = """
class Holder:
    pass


def test_leaves_a_file_open():
    holder = Holder()
    holder.me = holder  # a cycle: only the garbage collector frees it, and the file with it
    holder.file = open(__file__)


def test_runs_next():
    pass
"""


def run(tmp_path, *plugins: str) -> str:
    (tmp_path / "test_leak.py").write_text(LEAKING)
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *plugins, "."],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests")},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


@pytest.mark.parametrize("plugins", [("-p", "leaks"), ()], ids=["with leaks", "without"])
def test_the_test_that_leaks_a_file_is_the_one_that_fails(tmp_path, plugins):
    out = run(tmp_path, *plugins)
    if plugins:
        assert "test_leak.py::test_leaves_a_file_open ERROR" in out
        assert "ResourceWarning: unclosed file" in out
        assert "test_leak.py::test_runs_next PASSED" in out
    else:  # the control: without the plugin the leak goes unseen by its own test
        assert "test_leak.py::test_leaves_a_file_open PASSED" in out
