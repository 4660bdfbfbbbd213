"""Timing programs by the accelerator's own clock: the profiler's record of each program it ran.

On an accelerator the host only queues a program; the device runs it later. A call timed from
Python pays the host's dispatch and wait as well, which on a short program is most of the
time: on the TPU v5e this book recorded, a 2000 x 2000 product that the device runs in about
0.1 ms was ready about 0.66 ms after its call (async-dispatch's "On the TPU").
The profiler's trace holds, per device, a lane of the programs it ran ("XLA Modules"), each
with its start and length on the device. `bench_device` runs calls in turns inside one trace
and reads each call's program from that lane, in the order the calls were made.
"""

import gzip
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from chapter2.timing import BenchResult

MODULES_LANE = "XLA Modules"  # the thread of a device's process that holds its programs


class NoDeviceLane(RuntimeError):
    """The trace holds no device's programs: the CPU's trace has none, for one."""


def device_programs(log_dir: str | Path) -> list[dict]:
    """The programs the first device ran while the trace under `log_dir` was taken, in order
    of their start: each `{"name", "start", "seconds"}` (start in microseconds)."""
    found = sorted(Path(log_dir).rglob("*.trace.json.gz"))
    if len(found) != 1:
        msg = f"expected one *.trace.json.gz under {log_dir}, found {len(found)}"
        raise FileNotFoundError(msg)
    with gzip.open(found[0]) as fh:
        events = json.load(fh)["traceEvents"]
    return programs_in(events)


def programs_in(events: list[dict]) -> list[dict]:
    """The programs of the first device lane among Chrome-trace `events`."""
    processes = {
        e["pid"]: e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    lanes = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["args"]["name"] == MODULES_LANE
        and processes.get(e["pid"], "").startswith("/device:")
    }
    if not lanes:
        msg = "the trace holds no device lane of programs (XLA Modules): no accelerator ran them"
        raise NoDeviceLane(msg)
    lane = min(lanes, key=lambda pid_tid: processes[pid_tid[0]])
    ran = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) == lane]
    return [
        {"name": e["name"], "start": e["ts"], "seconds": e["dur"] * 1e-6}
        for e in sorted(ran, key=lambda e: e["ts"])
    ]


def bench_device(calls: dict[str, Callable[[], object]], n: int = 7) -> dict[str, BenchResult]:
    """Each call's device time over `n` runs, the calls in turns: every call is run and waited
    for once before the trace (it compiles), then `n` rounds of all calls inside one trace.
    A call must run exactly one program; the device lane must hold one per call made, each
    call's programs under one name, or this raises."""
    import jax  # noqa: PLC0415 - imported when used

    for call in calls.values():
        jax.block_until_ready(call())
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder):
            for _ in range(n):
                for call in calls.values():
                    jax.block_until_ready(call())
        ran = device_programs(folder)
    if len(ran) != n * len(calls):
        msg = f"{len(calls)} calls in {n} rounds, but the device ran {len(ran)} programs"
        raise RuntimeError(msg)
    timed = {}
    for i, name in enumerate(calls):
        mine = ran[i :: len(calls)]
        if len({p["name"] for p in mine}) != 1:
            msg = f"the call {name!r} ran different programs: {sorted({p['name'] for p in mine})}"
            raise RuntimeError(msg)
        timed[name] = BenchResult(tuple(p["seconds"] for p in mine))
    return timed
