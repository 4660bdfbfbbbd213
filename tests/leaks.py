"""A pytest plugin (`-p leaks`, in pyproject.toml): a resource a test leaves open fails that test.

A file, socket or database connection caught in a reference cycle is closed by the garbage
collector, whenever it next runs, and Python warns then (ResourceWarning; sqlite3 connections
too from Python 3.13). pytest turns that warning into an error of whichever test is running
at the time, not of the test that leaked. Collecting garbage as each test ends makes the
warning, and so the error, land in the teardown of the test that left the resource open.

A full collection walks every object alive (JAX, Sphinx: 0.12 s a test, a third of the
suite's time). So what survives a test's end is frozen (`gc.freeze`), and the next
collection walks only what the next test made: under a millisecond. The freeze is lifted when
the session ends, so pytest's last collection still sees everything.
"""

import gc

import pytest


@pytest.fixture(autouse=True, scope="session")
def _unfrozen_at_the_end():
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _garbage_collected_as_each_test_ends():
    yield
    gc.collect()
    gc.freeze()
