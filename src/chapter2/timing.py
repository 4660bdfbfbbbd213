"""Timing a JAX call the right way: warm up first, block on every run."""

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import jax


@dataclass(frozen=True)
class BenchResult:
    """Seconds per call over `n` timed runs, after one warm-up call."""

    mean: float
    median: float
    min: float
    n: int

    def __str__(self) -> str:
        ms = {k: getattr(self, k) * 1e3 for k in ("median", "mean", "min")}
        return (
            "{median:.3f} ms median (mean {mean:.3f}, min {min:.3f}, ".format(**ms) + f"n={self.n})"
        )


def bench(f: Callable, *args, n: int = 20) -> BenchResult:
    """Time `f(*args)`: one warm-up call (compiles), then `n` runs, each waited for."""
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(n):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - start)
    return BenchResult(statistics.fmean(times), statistics.median(times), min(times), n)
