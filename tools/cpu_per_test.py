"""A pytest plugin: the CPU seconds each test function costs the whole machine.

    PYTHONPATH=tools nox -R -s tests -- -n 0 -p cpu_per_test

Wall time hides what a test costs when it waits on a browser or a kernel in another process,
so this reads how long all cores were busy (Linux's /proc/stat) around each test, set-up
included, and prints the totals of the 25 most costly test functions. Run it with `-n 0`:
with several workers, each test would be charged for the others' work as well.
"""

import time
from collections import defaultdict

import pytest
from build_benchmark import busy_cpu_seconds

TOP = 25  # functions listed one by one
COST: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # noqa: ARG001 - pytest's hook
    busy, start = busy_cpu_seconds(), time.perf_counter()
    yield
    cost = COST[f"{item.path.name}::{item.originalname}"]
    cost[0] += busy_cpu_seconds() - busy
    cost[1] += time.perf_counter() - start
    cost[2] += 1


def pytest_terminal_summary(terminalreporter):
    rows = sorted(COST.items(), key=lambda row: -row[1][0])
    total = sum(cpu for cpu, _, _ in COST.values())
    terminalreporter.section(f"CPU seconds per test function ({total:.0f} in all)")
    terminalreporter.line(f"{'CPU s':>7} {'wall s':>7} {'tests':>5}  function")
    for name, (cpu, wall, count) in rows[:TOP]:
        terminalreporter.line(f"{cpu:7.1f} {wall:7.1f} {count:5d}  {name}")
    rest = sum(cpu for _, (cpu, _, _) in rows[TOP:])
    terminalreporter.line(f"{rest:7.1f} {'':7} {'':5}  the other {len(rows[TOP:])} functions")
