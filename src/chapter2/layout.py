"""Memory layout: aligned NumPy buffers, whether JAX shares them, and what fresh memory
costs."""

import math
import mmap
import resource
import time
from dataclasses import dataclass

import jax
import numpy as np


def aligned_empty(shape: tuple[int, ...], dtype=np.float32, align: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous array whose data pointer is a multiple of `align` bytes."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip : skip + nbytes].view(dtype).reshape(shape)


def misaligned_empty(
    shape: tuple[int, ...], dtype=np.float32, align: int = 64, by: int = 16
) -> np.ndarray:
    """An uninitialised C-contiguous array whose data pointer is `by` bytes past an `align`
    boundary (so it is not `align`-aligned when 0 < by < align)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + 2 * align, dtype=np.uint8)
    skip = -raw.ctypes.data % align + by
    return raw[skip : skip + nbytes].view(dtype).reshape(shape)


def misalignment(a: np.ndarray, align: int = 64) -> int:
    """How many bytes the data pointer of `a` lies past the previous `align`-byte boundary."""
    return a.ctypes.data % align


def shares_buffer(x: jax.Array, a: np.ndarray) -> bool:
    """Whether the single-device jax.Array `x` points at the very bytes of NumPy array `a`."""
    return x.unsafe_buffer_pointer() == a.ctypes.data


def fault_in_seconds(nbytes: int) -> float:
    """What one thread's first write of `nbytes` of freshly mapped memory costs over its second
    write of the same bytes: the page faults that map the memory in. The memory is mapped as
    glibc's malloc maps a large block (private and anonymous)."""
    fresh = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    view = np.frombuffer(fresh, np.uint8)
    start = time.perf_counter()
    view.fill(1)
    first = time.perf_counter() - start
    start = time.perf_counter()
    view.fill(2)
    second = time.perf_counter() - start
    del view  # the map closes only once no array views it
    fresh.close()
    return first - second


def side_past_cache(edge: int | None, memory_from: int = 0, limit: int = 512 * 2**20) -> int | None:
    """The side, a multiple of 1000, of the smallest square float32 matrix at least eight times
    the caches' edge as the stream measured it (`chapter2.roofline`) and at least
    `memory_from` bytes, the smallest size whose rate the roofs take for main memory's: a pass
    over it streams from memory even where a cache holds more than the stream's edge (which
    moves between builds on a shared machine, by a factor of eight here); None when that
    matrix would pass `limit` bytes, or where the stream found no cache: the caches cannot be
    left, or a small matrix already does."""
    if not edge:
        return None
    side = 1000 * math.ceil(math.sqrt(max(8 * edge, memory_from) / 4) / 1000)
    return side if 4 * side * side <= limit else None


def past_cache_words(edge: int | None, side: int | None, copy: "CallCost | None" = None) -> str:
    """How a page says where it times a matrix past the caches (`side_past_cache`), or why it
    does not; `copy`, what one copy of that matrix cost, says why the copies are not timed."""
    if side is None:
        return (
            f"The stream measured caches up to {edge / 2**20:g} MiB here, too large for a "
            "matrix this page times to leave them: the sums are not timed past them."
            if edge
            else "The stream measured no cache faster than memory here: the sums above "
            "already stream from memory."
        )
    said = (
        f"Past the caches, the sums run again at {side:,} × {side:,}, "
        f"{4 * side * side / 1e6:.0f} MB, {4 * side * side / edge:.2g} times their edge."
    )
    if copy is None:
        return said
    if copy.fresh_bytes <= 2 * side * side:  # fresh pages for under half of a copy's output
        return said + (
            " The copies are not timed at that size; one that large touched only "
            f"{copy.fresh_bytes / 1e6:.0f} MB of fresh pages a call."
        )
    return said + (
        " The copies are not timed at that size: one that large touched "
        f"{copy.fresh_bytes / 1e6:.0f} MB of fresh pages a call (glibc's malloc maps such a "
        "block anew each time), and its threads spent "
        f"{copy.system * 1e3:.3g} ms in the operating system, {copy.own * 1e3:.3g} ms in their "
        "own code: "
        + (
            "page faults, not the order, would set its time."
            if copy.system > copy.own
            else "its faults would be timed with the order."
        )
    )


def fresh_in_turns(calls: dict, rounds: int = 3) -> dict[str, float]:
    """The fresh pages, in bytes (minor page faults), that each of `calls` (`name: (f, args)`,
    as `bench_together` takes them) touched a call, called in turns after one untimed round.
    With glibc's malloc an output gets fresh pages or memory a call before freed, by what
    the process allocated and freed before it, not by its size alone."""
    for f, args in calls.values():
        jax.block_until_ready(f(*args))
    faults = dict.fromkeys(calls, 0)
    for _ in range(rounds):
        for name, (f, args) in calls.items():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            jax.block_until_ready(f(*args))
            faults[name] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    return {name: n * resource.getpagesize() / rounds for name, n in faults.items()}


@dataclass(frozen=True)
class CallCost:
    """What one call cost on average, as the operating system counts it."""

    seconds: float  # wall time
    fresh_bytes: float  # memory new to the process it touched (minor page faults)
    system: float  # CPU seconds in the operating system, summed over the process's threads
    own: float  # CPU seconds in the process's own code, summed over its threads


def call_cost(call, calls: int = 3) -> CallCost:
    """Run `call` (which waits for its result) once, then `calls` times under `getrusage`."""
    call()
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(calls):
        call()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    faults = after.ru_minflt - before.ru_minflt
    return CallCost(
        seconds / calls,
        faults * resource.getpagesize() / calls,
        (after.ru_stime - before.ru_stime) / calls,
        (after.ru_utime - before.ru_utime) / calls,
    )
