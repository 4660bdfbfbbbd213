"""Timing a JAX call the right way, and comparing two timings by their numbers.

`bench` warms up first and waits for every run. A timing keeps every run, so it carries its
spread: the middle half of its runs, from the first quartile to the third, which one slow run
(a page fault, a thread waking up) does not stretch. A comparison of two timings says "faster"
or "slower" only when the ranges that hold their medians do not overlap: each range holds
the median of all runs the call could make with 95 % confidence, whatever their distribution
(order statistics), and narrows as runs are added, so more runs settle a close pair. JAX is
imported only by `bench`: the book's Sphinx layer reads COMPARISON_MIME from here without it.
"""

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from chapter2.records import ComparisonRecord, TimingRecord
from chapter2.roofline import percent

COMPARISON_MIME = "application/vnd.chapter2.comparison+json"


def milliseconds(seconds: float) -> str:
    """A duration in milliseconds with three significant digits: 118, 3.46, 0.0214."""
    value = seconds * 1e3
    return f"{value:.0f}" if value >= 99.95 else f"{value:#.3g}"


def times_text(ratio: float) -> str:
    """A ratio as the book prints it: 34, 3.4, 1.04."""
    if round(ratio, 1) >= 10:
        return f"{ratio:.0f}"
    return f"{ratio:.2f}" if ratio < 1.095 else f"{ratio:.1f}"


@dataclass(frozen=True)
class BenchResult:
    """Seconds per call of every timed run."""

    times: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def low(self) -> float:
        """The first quartile: a quarter of the runs were faster."""
        return statistics.quantiles(self.times, n=4, method="inclusive")[0]

    @property
    def high(self) -> float:
        """The third quartile: a quarter of the runs were slower."""
        return statistics.quantiles(self.times, n=4, method="inclusive")[2]

    @property
    def median_range(self) -> tuple[float, float]:
        """Where the median lies with 95 % confidence, whatever the distribution of the runs:
        the k-th fastest and k-th slowest run, k the largest with P(Binomial(n, 1/2) < k) at
        most 2.5 % (the fastest and slowest of fewer than six runs)."""
        n, runs = self.n, sorted(self.times)
        tail = [sum(math.comb(n, i) for i in range(k)) / 2**n for k in range(1, n // 2 + 1)]
        k = max((k for k, p in enumerate(tail, 1) if p <= 0.025), default=1)
        return runs[k - 1], runs[n - k]

    def __str__(self) -> str:
        return (
            f"{milliseconds(self.median)} ms median ({milliseconds(self.low)} to "
            f"{milliseconds(self.high)} ms for the middle half of {self.n} runs)"
        )


WARM_UP = (3, 0.05)  # calls of each, and seconds in all, at the least, before the timed runs
# Rounds, at the least, and how many more between two looks at the medians' ranges: looking
# after every round would stop at the first chance overlap-free moment of two equal calls.
FIRST_LOOK, LOOK_EVERY = 7, 6
SETTLE_BELOW = 0.05  # seconds: a call shorter than this runs untimed before each timed run,
# again until a run takes no more than SETTLED times its fastest so far, SETTLE_MAX runs at
# most: after a large neighbour, one untimed run of a 16 MiB stream still ran at a third of
# its steady rate (a 2-core EPYC, 2026-12-06)
SETTLED, SETTLE_MAX = 1.1, 4
# Medians this far apart that the rule cannot tell apart: the sentence says the runs spread
# too widely, so a reader sees why a large gap is no verdict.
WIDE = 1.2


def refill_note(edge: int | None, bandwidth: float) -> str:
    """What a call of SETTLE_BELOW pays for the caches a neighbour disturbed, on a machine
    whose caches reach `edge` bytes (as the stream measured them) and whose memory streams
    `bandwidth` bytes/s."""
    if not edge:
        return "the stream measured no cache faster than memory here, so there is none to refill"
    refill = edge / bandwidth
    said = (
        f"refilling the {edge / 2**20:g} MiB of cache the stream measured here, at memory's "
        f"measured bandwidth, takes about {milliseconds(refill)} ms, "
        f"{percent(refill / SETTLE_BELOW)} of a call of {milliseconds(SETTLE_BELOW)} ms"
    )
    if refill < SETTLE_BELOW / 20:
        return f"{said}: a longer call pays little for its neighbour"
    return f"{said}: here a call just over that still pays for its neighbour's misses"


def apart(a: "BenchResult", b: "BenchResult") -> bool:
    """Whether the ranges that hold two timings' medians do not overlap."""
    return a.median_range[1] < b.median_range[0] or b.median_range[1] < a.median_range[0]


def bench_together(
    calls: dict[str, tuple[Callable, tuple]], n: int = 20, budget: float = 2.0
) -> dict[str, BenchResult]:
    """Time several calls `name: (f, args)` in turns, each warmed up (WARM_UP) and waited
    for; a call whose last warm-up call took under SETTLE_BELOW runs untimed before each
    timed run until it is back to its fastest time (SETTLED, SETTLE_MAX). Rounds stop as
    the book's page Helpers says (FIRST_LOOK, LOOK_EVERY, `budget`, `n`)."""
    import jax  # imported when first used

    def run(f: Callable, args: tuple) -> float:
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        return time.perf_counter() - start

    def settle(f: Callable, args: tuple, fastest: float) -> None:
        """Untimed runs until one takes no more than SETTLED times `fastest`."""
        for _ in range(SETTLE_MAX):
            if run(f, args) <= SETTLED * fastest:
                return

    # Each call WARM_UP[0] times at least, the first compiling; until the machine has been busy
    # WARM_UP[1] seconds in all: once warm, it needs no more for the next call.
    settled, started = {}, time.perf_counter()
    for name, (f, args) in calls.items():
        done = 0
        while done < WARM_UP[0] or time.perf_counter() - started < WARM_UP[1]:
            last = run(f, args)  # only the last one, after one of its own, says how long
            done += 1
        if last < SETTLE_BELOW:
            settled[name] = last
    times: dict[str, list[float]] = {name: [] for name in calls}
    started = time.perf_counter()
    for rounds in range(1, n + 1):
        for name, (f, args) in calls.items():
            if name in settled:  # brings back what the previous call disturbed
                settle(f, args, min([settled[name], *times[name]]))
            times[name].append(run(f, args))
        if rounds >= FIRST_LOOK and (rounds - FIRST_LOOK) % LOOK_EVERY == 0:
            timed = [BenchResult(tuple(runs)) for runs in times.values()]
            pairs = [(a, b) for i, a in enumerate(timed) for b in timed[i + 1 :]]
            if all(apart(a, b) for a, b in pairs) or time.perf_counter() - started > budget:
                break
    return {name: BenchResult(tuple(runs)) for name, runs in times.items()}


def bench(f: Callable, *args, n: int = 20, budget: float = 2.0) -> BenchResult:
    """Time `f(*args)` alone: `bench_together` with one call, which has nothing to be told
    apart from, so it stops at its first look: min(n, FIRST_LOOK) runs."""
    return bench_together({"": (f, args)}, n, budget)[""]


FLOOR_ELEMENTS = 4096  # v + 1 over these: past the CPU client's cheap rule, no work to speak of


def call_floor(n: int = 50) -> BenchResult:
    """A call's own cost, as `bench` times it: a jitted `v + 1` on FLOOR_ELEMENTS float32
    values (too much work for XLA's CPU client to run it on the caller), dispatched and
    waited for. A program timed near it was timed mostly as a call."""
    import jax  # imported when first used
    import jax.numpy as jnp

    trivial = jax.jit(lambda v: v + 1)
    return bench(trivial, jnp.ones(FLOOR_ELEMENTS, jnp.float32), n=n, budget=1.0)


@dataclass(frozen=True)
class Comparison:
    """Timing `a` of `a_name` against timing `b` of `b_name`, with the sentence that says it."""

    a_name: str
    a: BenchResult
    b_name: str
    b: BenchResult

    @property
    def verdict(self) -> str:
        """faster or slower when the ranges that hold the medians do not overlap."""
        if not apart(self.a, self.b):
            return "indistinguishable"
        return "faster" if self.a.median < self.b.median else "slower"

    @property
    def ratio(self) -> float:
        """How many times faster `a` ran than `b` (median over median; below 1: slower)."""
        return self.b.median / self.a.median

    @property
    def ratio_range(self) -> tuple[float, float]:
        """The lowest and highest ratio the spreads allow: slow `a` against fast `b`, and back."""
        return self.b.low / self.a.high, self.b.high / self.a.low

    def __str__(self) -> str:
        medians = f"medians {milliseconds(self.a.median)} and {milliseconds(self.b.median)} ms"
        if self.verdict == "faster":
            said = f"{self.a_name} ran {times_text(self.ratio)} × faster than {self.b_name}"
        elif self.verdict == "slower":
            said = f"{self.a_name} took {times_text(1 / self.ratio)} × as long as {self.b_name}"
        else:
            said = f"{self.a_name} and {self.b_name} could not be told apart"
        runs = (
            f"{self.a.n} runs each" if self.a.n == self.b.n else f"{self.a.n} and {self.b.n} runs"
        )
        gap = max(self.ratio, 1 / self.ratio)
        if self.verdict == "indistinguishable" and gap >= WIDE:
            runs += f"; their runs vary too much to settle a {times_text(gap)} × gap"
        return f"{said} ({medians}, {runs})"

    def record(self) -> ComparisonRecord:
        """What a page's output carries of it, and the build's record keeps."""

        def timing(name: str, result: BenchResult) -> TimingRecord:
            low, high = result.median_range
            return TimingRecord(name, result.median, low, high, result.low, result.high, result.n)

        a, b = timing(self.a_name, self.a), timing(self.b_name, self.b)
        return ComparisonRecord(str(self), self.verdict, self.ratio, a, b)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:  # noqa: ARG002
        return {"text/plain": str(self), COMPARISON_MIME: asdict(self.record())}
