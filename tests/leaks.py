"""A pytest plugin (`-p leaks`, in pyproject.toml): a resource a test leaves open fails that test.

A file, socket or database connection caught in a reference cycle is closed by the garbage
collector, whenever it next runs, and Python warns then (ResourceWarning; sqlite3 connections
too from Python 3.13). pytest turns that warning into an error of whichever test is running
at the time, not of the test that leaked. Collecting garbage as each test ends makes the
warning, and so the error, land in the teardown of the test that left the resource open.
"""

import gc

import pytest


@pytest.fixture(autouse=True)
def _garbage_collected_as_each_test_ends():
    yield
    gc.collect()
