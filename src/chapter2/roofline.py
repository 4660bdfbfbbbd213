"""This machine's roofs, and where a program stands under them (the roofline model).

A program that does F flops and moves B bytes can finish no sooner than F at the machine's
peak rate, nor sooner than B at its memory bandwidth: the larger of the two times is what the
roofs allow. Its arithmetic intensity F / B, set against the ridge (peak / bandwidth), says
which roof binds; its measured time, set against what the roofs allow, says how close it
came. Both roofs are measured here, in float32, on the cores XLA uses. A program whose arrays
fit where the cache's bandwidth was measured (the same stream, over half the last-level
cache) is placed under that bandwidth instead of main memory's. F and B come from XLA's cost
analysis, an estimate read from the optimized HLO, or from a count by hand.
"""

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

PRODUCT_N = 768  # the n x n float32 product whose fastest run is the peak
ROUNDS = 30  # rounds of one product and one stream each: their fastest runs are the roofs
# Bytes of each of the stream's two arrays: twice the last-level cache where that fits
# between these bounds, so the stream's traffic comes from memory, not the cache.
STREAM_MIN, STREAM_MAX = 64 * 2**20, 512 * 2**20
# Bytes of the in-cache stream's two arrays together: half the last-level cache, at most this
# (smaller streams' times are mostly the call's own cost, not the traffic).
CACHE_STREAM_MAX = 16 * 2**20
# A build measures the roofs once and names their file here, so that every page places its
# programs under the same roofs; without it `machine_roofs` measures them.
ROOFS_VARIABLE = "CHAPTER2_ROOFS"

# Under this share of what the roofs allow, neither roof explains the time. The shares of the
# book's programs spread by up to a factor of two between builds on a shared machine; this
# threshold sits in a gap between the CPU programs' shares (the lowest near 1 %, the next
# near 4 %); the recorded H200 points, fixed data, fall on either side of it.
FAR_UNDER = 0.02
# Within this factor of the ridge, either roof may bind: the ridges move by up to half
# between builds on a shared machine (a peak of 123 to 183 GFLOP/s, a cache ridge of 1.6 to
# 3.1 on a 2-core VM in twelve measurements), and XLA's bytes are an estimate.
NEAR_RIDGE = 3.0


def rate_text(per_second: float, unit: str) -> str:
    """A rate per second in three significant digits and a decimal prefix, of `unit` (FLOP, B)."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0)):
        if per_second >= scale or not prefix:
            return f"{per_second / scale:#.3g}".rstrip(".") + f" {prefix}{unit}/s"
    raise AssertionError  # unreachable: the last scale takes every rate


def percent(share: float) -> str:
    """A share in percent: whole percents from 10 % up; below, two digits rounded down, so
    that a share under a threshold never reads as the threshold (2.99 % is 2.9%, not 3%)."""
    if share >= 0.095:
        return f"{share:.0%}"
    value = 100 * share
    step = 10 ** (math.floor(math.log10(value)) - 1) if value > 0 else 1
    return f"{math.floor(value / step + 1e-9) * step:.{max(0, -round(math.log10(step)))}f}%"


@dataclass(frozen=True)
class Roofs:
    """A machine's peak rate and memory bandwidth: measured here (`measure_roofs`, which
    also says how), or a vendor's figures."""

    peak: float  # flop/s: the fastest run of a PRODUCT_N x PRODUCT_N product under jit
    bandwidth: float  # bytes/s: the fastest run of the stream (2 x + y into x's buffer)
    stream_bytes: int = 0  # bytes of the stream's two arrays together
    cache_bytes: int | None = None  # the last-level cache the machine reports (None: unknown)
    cores: int = 0  # the cores XLA used
    cache_bandwidth: float | None = None  # bytes/s: the same stream over arrays in the cache
    cache_stream_bytes: int = 0  # bytes of the in-cache stream's two arrays together

    @property
    def ridge(self) -> float:
        """The intensity, in flops per byte, at which the peak meets the memory roof."""
        return self.peak / self.bandwidth

    def fits_cache(self, footprint: float) -> bool:
        """Whether a program whose arrays take `footprint` bytes fits where the in-cache stream
        was measured, so that the cache, not main memory, can serve its traffic."""
        return self.cache_bandwidth is not None and footprint <= self.cache_stream_bytes

    def bandwidth_for(self, footprint: float) -> float:
        """The bandwidth roof of work whose arrays take `footprint` bytes: the cache's if they
        fit there, else memory's."""
        return self.cache_roof if self.fits_cache(footprint) else self.bandwidth

    @property
    def cache_roof(self) -> float:
        """The bandwidth roof of a program that fits in the cache: the cache's, never below
        memory's (the cache serves at least as fast; a slower measure of it is noise)."""
        return max(self.cache_bandwidth or 0.0, self.bandwidth)

    @property
    def past_cache(self) -> bool:
        """Whether the stream's arrays were at least twice the reported last-level cache (or
        the cache size is unknown): only then is the bandwidth main memory's."""
        return self.cache_bytes is None or self.stream_bytes >= 2 * self.cache_bytes

    def __str__(self) -> str:
        cache = (
            f"; in the cache, bandwidth {rate_text(self.cache_bandwidth, 'B')}, ridge "
            f"{self.peak / self.cache_roof:.3g}"
            if self.cache_bandwidth
            else ""
        )
        return (
            f"peak {rate_text(self.peak, 'FLOP')}, bandwidth {rate_text(self.bandwidth, 'B')}, "
            f"ridge {self.ridge:.3g} flops per byte{cache}"
        )

    def as_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Roofs":
        return cls(**json.loads(text))


def measure_roofs() -> Roofs:
    """Measure this machine's roofs, in about a second: the product and the stream run in
    turns, so that a busy spell of the machine slows both, and the fastest run of each is a
    roof."""
    import jax  # noqa: PLC0415 - imported when measured
    import jax.numpy as jnp  # noqa: PLC0415

    from chapter2.environment import last_level_cache, xla_cores  # noqa: PLC0415 - imports JAX

    n = PRODUCT_N
    a = jnp.ones((n, n), jnp.float32)
    product = jax.jit(jnp.matmul)
    cache = last_level_cache()
    length = min(max(2 * (cache or 0), STREAM_MIN), STREAM_MAX) // 4  # float32 elements
    cache_length = min((cache or 0) // 2, CACHE_STREAM_MAX) // 8  # of each array
    # Donated, x's buffer takes the result: every call streams over the same two arrays
    # and writes no fresh memory (whose page faults would be timed too).
    stream = jax.jit(lambda x, y: 2.0 * x + y, donate_argnums=0)

    def streaming(n):
        arrays = {"x": jnp.ones(n, jnp.float32), "y": jnp.ones(n, jnp.float32)}

        def streamed():
            arrays["x"] = stream(arrays["x"], arrays["y"])
            return arrays["x"]

        return streamed

    calls = {"product": lambda: product(a, a), "stream": streaming(length)}
    if cache_length:
        calls["in-cache stream"] = streaming(cache_length)
    fastest = dict.fromkeys(calls, math.inf)
    for call in calls.values():
        jax.block_until_ready(call())  # compiles
    for _ in range(ROUNDS):
        for name, call in calls.items():
            if name == "in-cache stream":
                jax.block_until_ready(call())  # brings its arrays back into the cache
            start = time.perf_counter()
            jax.block_until_ready(call())
            fastest[name] = min(fastest[name], time.perf_counter() - start)
    peak = 2 * n**3 / fastest["product"]
    bandwidth = 3 * 4 * length / fastest["stream"]  # read x and y, write x
    in_cache = 3 * 4 * cache_length / fastest["in-cache stream"] if cache_length else None
    return Roofs(peak, bandwidth, 2 * 4 * length, cache, xla_cores(), in_cache, 8 * cache_length)


def machine_roofs() -> Roofs:
    """The roofs a build measured for its pages (the file ROOFS_VARIABLE names), or, without
    one, roofs measured now."""
    shared = os.environ.get(ROOFS_VARIABLE)
    if shared and Path(shared).is_file():
        return Roofs.from_json(Path(shared).read_text())
    return measure_roofs()


class Bound(StrEnum):
    """What a program's time says against the roofs."""

    COMPUTE = "under the compute roof"
    MEMORY = "under the memory roof"
    CACHE = "under the cache roof"
    RIDGE = "near the ridge"
    FAR_UNDER = "far under both roofs"

    @property
    def meaning(self) -> str:
        """The verdict in a clause a sentence can end with."""
        return MEANINGS[self]


MEANINGS = {
    Bound.COMPUTE: "its intensity is past the ridge, so the peak rate is its roof",
    Bound.MEMORY: "its intensity is short of the ridge, so the memory bandwidth is its roof",
    Bound.CACHE: "its arrays fit in the cache and its intensity is short of the ridge the "
    "cache's bandwidth sets, so that bandwidth is its roof",
    Bound.RIDGE: f"its intensity is within a factor of {NEAR_RIDGE:g} of the ridge, which moves "
    "between measurements, so either roof may bind",
    Bound.FAR_UNDER: f"it reached under {percent(FAR_UNDER)} of what the roofs allow: the time "
    "went to overhead or to a kernel that uses the machine poorly, not to the work or the traffic",
}
TRANSCENDENTAL = (
    "its transcendentals (exp, log, ...), which the roofs leave out, outnumber its flops and "
    "may set its time"
)

ABOVE = {
    bound: bound.replace("under", "above") for bound in (Bound.COMPUTE, Bound.MEMORY, Bound.CACHE)
}
ABOVE[Bound.RIDGE] = "above the roofs, near the ridge"


@dataclass(frozen=True)
class Placement:
    """A program of `flops`, `bytes` and `transcendentals` that took `seconds`, under `roofs`;
    its arrays (arguments, results, temporaries) take `footprint` bytes, or, where that is not
    known, no fewer than its bytes are taken to."""

    flops: float
    bytes: float
    seconds: float
    roofs: Roofs
    transcendentals: float = 0.0
    footprint: float | None = None

    @property
    def in_cache(self) -> bool:
        """Whether its arrays fit in the cache, whose bandwidth is then its roof."""
        return self.roofs.fits_cache(self.bytes if self.footprint is None else self.footprint)

    @property
    def intensity(self) -> float:
        """Flops per byte."""
        return self.flops / self.bytes

    @property
    def rate(self) -> float:
        """Flops per second achieved."""
        return self.flops / self.seconds

    @property
    def traffic(self) -> float:
        """Bytes per second achieved."""
        return self.bytes / self.seconds

    @property
    def bandwidth(self) -> float:
        """Its bandwidth roof: the cache's if its arrays fit there, else memory's."""
        return self.roofs.bandwidth_for(self.bytes if self.footprint is None else self.footprint)

    @property
    def ridge(self) -> float:
        """The intensity at which its bandwidth roof meets the peak."""
        return self.roofs.peak / self.bandwidth

    @property
    def allowed(self) -> float:
        """The shortest time the roofs allow: the work at the peak, or the traffic at the
        bandwidth, whichever takes longer."""
        return max(self.flops / self.roofs.peak, self.bytes / self.bandwidth)

    @property
    def share(self) -> float:
        """The share of what the roofs allow that the program reached (1: on the roof)."""
        return self.allowed / self.seconds

    @property
    def bound(self) -> Bound:
        if self.share < FAR_UNDER:
            return Bound.FAR_UNDER
        if 1 / NEAR_RIDGE < self.intensity / self.ridge < NEAR_RIDGE:
            return Bound.RIDGE
        if self.intensity > self.ridge:
            return Bound.COMPUTE
        return Bound.CACHE if self.in_cache else Bound.MEMORY

    @property
    def position(self) -> str:
        """Its bound in words, or, past the roof that bounds it (a share over 1: the cache served
        its bytes, or the peak was measured on a smaller product), "above" that roof."""
        return ABOVE[self.bound] if self.share > 1 and self.bound in ABOVE else str(self.bound)

    @property
    def verdict(self) -> str:
        """Where it stands, in words: "under the memory roof (48% of what the roofs allow)"."""
        said = f"{self.position} ({percent(self.share)} of what the roofs allow)"
        return f"{said}, but {TRANSCENDENTAL}" if self.transcendental else said

    @property
    def transcendental(self) -> bool:
        """Whether it computes more transcendental functions than flops."""
        return self.transcendentals > self.flops

    def __str__(self) -> str:
        return (
            f"{self.intensity:.3g} flops per byte, {rate_text(self.rate, 'FLOP')} and "
            f"{rate_text(self.traffic, 'B')}: {self.verdict}"
        )


def placement_table(placed: dict[str, Placement], timings: dict) -> str:
    """A Markdown table: each program's median time (`timings`: BenchResults by name), its
    intensity, the rate it reached against the roof that applies (flops past the ridge, bytes
    short of it), and its verdict with its share of what the roofs allow (`placed`:
    Placements by name)."""
    from chapter2.timing import milliseconds  # noqa: PLC0415 - imported by the pages anyway

    def achieved(p: Placement) -> str:
        if p.intensity > p.ridge:
            return rate_text(p.rate, "FLOP")
        return rate_text(p.traffic, "B")

    def standing(p: Placement) -> str:
        return f"{p.position}, {percent(p.share)}" + (
            "; more transcendentals than flops, which may set its time" if p.transcendental else ""
        )

    rows = [
        f"| {name} | {milliseconds(timings[name].median)} | {p.intensity:.3g} | {achieved(p)} "
        f"| {standing(p)} |"
        for name, p in placed.items()
    ]
    head = (
        "| program | median ms | flops per byte | reached "
        "| against the roofs (share of what they allow) |\n"
        "|---|---|---|---|---|\n"
    )
    return head + "\n".join(rows)


def footprint(memory) -> int:
    """What one call of a compiled program holds at once, from its `memory_analysis()`:
    arguments, results and temporaries, less what its results alias (donated inputs)."""
    return (
        memory.argument_size_in_bytes
        + memory.output_size_in_bytes
        + memory.temp_size_in_bytes
        - memory.alias_size_in_bytes
    )


def place(compiled, seconds: float, roofs: Roofs) -> Placement:
    """A compiled program that took `seconds` (a median, say), its flops and bytes read from
    XLA's cost analysis, its footprint from its memory analysis."""
    from chapter2.compat import cost_analysis  # noqa: PLC0415 - imports JAX

    costs = cost_analysis(compiled)
    flops = costs.get("flops", 0.0)  # a copy has none
    transcendentals = costs.get("transcendentals", 0.0)
    held = footprint(compiled.memory_analysis())
    return Placement(flops, costs["bytes accessed"], seconds, roofs, transcendentals, held)
