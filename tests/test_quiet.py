"""The timing lock of parallel builds: a measurement runs while no other page's cell runs."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from chapter2 import quiet

CELL = """
import sys, time
from chapter2 import quiet
quiet.cell_started()
print(time.time(), flush=True)  # the cell runs
time.sleep({seconds})
print(time.time(), flush=True)  # the cell ends
quiet.cell_finished()
"""

MEASUREMENT = """
import time
from chapter2 import quiet
quiet.cell_started()
with quiet.alone():
    print(time.time(), flush=True)
    time.sleep({seconds})
    print(time.time(), flush=True)
quiet.cell_finished()
"""


@pytest.fixture
def lock(tmp_path, monkeypatch):
    """A fresh lock file named in the environment, as a build names it for its kernels."""
    path = tmp_path / "timing.lock"
    monkeypatch.setenv(quiet.LOCK_VARIABLE, str(path))
    monkeypatch.setattr(quiet, "_lock", None)
    yield path
    if quiet._lock is not None:  # a kernel holds its lock files for its life; a test does not
        quiet._lock.main.close()
        quiet._lock.gate.close()


def start(code: str, seconds: float) -> subprocess.Popen:
    """Another page's kernel, on the same lock: a process running `code`, printing times."""
    script = textwrap.dedent(code.format(seconds=seconds))
    env = {**os.environ, quiet.LOCK_VARIABLE: quiet._current().path}
    return subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )


def times(process: subprocess.Popen) -> list[float]:
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    return [float(line) for line in out.split()]


def started(process: subprocess.Popen) -> float:
    return float(process.stdout.readline())


def test_a_measurement_waits_for_the_cell_another_page_is_running(lock):
    other = start(CELL, seconds=1.0)
    started(other)
    quiet.cell_started()
    with quiet.alone():
        measured = time.time()
    quiet.cell_finished()
    (other_ended,) = times(other)
    assert measured >= other_ended


def test_a_measurement_holds_back_the_next_cell_of_another_page(lock):
    quiet.cell_started()
    with quiet.alone():
        other = start(CELL, seconds=0)
        time.sleep(1.0)
        released = time.time()
    quiet.cell_finished()
    other_started, _ = times(other)
    assert other_started >= released


def test_cells_of_two_pages_run_side_by_side(lock):
    other = start(CELL, seconds=1.0)
    started(other)
    quiet.cell_started()
    ours = time.time()
    quiet.cell_finished()
    (other_ended,) = times(other)
    assert ours < other_ended  # a shared lock: no waiting


def test_two_pages_measuring_at_once_take_turns(lock):
    first, second = start(MEASUREMENT, seconds=0.5), start(MEASUREMENT, seconds=0.5)
    spans = sorted([times(first), times(second)])
    assert spans[0][1] <= spans[1][0]  # one measurement ended before the other began


def test_a_measurement_keeps_its_cell_and_hides_the_lock_from_children(lock):
    quiet.cell_started()
    with quiet.alone(), quiet.alone():  # re-entrant
        assert quiet.LOCK_VARIABLE not in os.environ
    assert os.environ[quiet.LOCK_VARIABLE] == str(lock)
    other = start(MEASUREMENT, seconds=0)  # must wait: our cell still holds the lock shared
    time.sleep(0.5)
    released = time.time()
    quiet.cell_finished()
    other_measured, _ = times(other)
    assert other_measured >= released


def test_without_a_lock_file_nothing_is_locked(tmp_path, monkeypatch):
    monkeypatch.delenv(quiet.LOCK_VARIABLE, raising=False)
    monkeypatch.setattr(quiet, "_lock", None)
    quiet.cell_started()
    with quiet.alone():
        pass
    quiet.cell_finished()
    assert quiet._lock is None
    assert not list(tmp_path.iterdir())
