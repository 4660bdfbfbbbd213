"""Quiet timings while pages execute side by side: cells share a lock, a measurement holds it alone.

`sphinx-build -j` runs several page kernels at once. Loaded into each kernel as an IPython
extension, this module holds a shared lock on one file while a cell runs; `alone()` turns it
into an exclusive lock for the length of a measurement, which waits for the cells that other
pages are running to end and holds back their next ones. A measurement in waiting goes
first: a gate file lets no new cell start meanwhile.

The lock file is named by the environment variable in LOCK_VARIABLE (the build sets it).
Without it, in a notebook of your own, a test or the claims CLI, nothing is locked.
"""

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

LOCK_VARIABLE = "CHAPTER2_TIMING_LOCK"


class _Lock:
    """This process's handles on the lock file and its gate, and what it holds."""

    def __init__(self, path: str):
        self.path = path
        # held for the life of the kernel, not for a block
        self.main = Path(path).open("a")  # noqa: SIM115
        self.gate = Path(path + ".gate").open("a")  # noqa: SIM115
        self.in_cell = False
        self.alone = False


_lock: _Lock | None = None


def _current() -> _Lock | None:
    global _lock  # noqa: PLW0603 - one lock per kernel process
    path = os.environ.get(LOCK_VARIABLE)
    if _lock is None and path:
        _lock = _Lock(path)
    return _lock


def cell_started(*_) -> None:
    """`pre_run_cell`: hold the lock shared, once no measurement is waiting at the gate."""
    lock = _current()
    if lock is None or lock.in_cell:
        return
    fcntl.flock(lock.gate, fcntl.LOCK_SH)
    fcntl.flock(lock.main, fcntl.LOCK_SH)
    fcntl.flock(lock.gate, fcntl.LOCK_UN)
    lock.in_cell = True


def cell_finished(*_) -> None:
    """`post_run_cell`: let go of the shared lock."""
    lock = _current()
    if lock is not None and lock.in_cell and not lock.alone:
        fcntl.flock(lock.main, fcntl.LOCK_UN)
        lock.in_cell = False


@contextlib.contextmanager
def alone() -> Iterator[None]:
    """Run the block while no other page's cell runs. Re-entrant; a no-op without a lock.

    Processes started inside the block do not see the lock, so a timed child process does
    not wait for the cell that started it.
    """
    lock = _current()
    if lock is None or lock.alone:
        yield
        return
    fcntl.flock(lock.main, fcntl.LOCK_UN)  # this cell's shared hold: a writer needs the gate first
    fcntl.flock(lock.gate, fcntl.LOCK_EX)
    fcntl.flock(lock.main, fcntl.LOCK_EX)
    lock.alone = True
    del os.environ[LOCK_VARIABLE]
    try:
        yield
    finally:
        os.environ[LOCK_VARIABLE] = lock.path
        lock.alone = False
        fcntl.flock(lock.main, fcntl.LOCK_SH if lock.in_cell else fcntl.LOCK_UN)
        fcntl.flock(lock.gate, fcntl.LOCK_UN)


def load_ipython_extension(ipython) -> None:
    ipython.events.register("pre_run_cell", cell_started)
    ipython.events.register("post_run_cell", cell_finished)
