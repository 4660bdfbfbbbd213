"""This machine's roofs, and where a program stands under them (the roofline model).

A program that does F flops and moves B bytes can finish no sooner than F at the machine's
peak rate, nor sooner than B at its memory bandwidth: the larger of the two times is what the
roofs allow. Its arithmetic intensity F / B, set against the ridge (peak / bandwidth), says
which roof binds; its measured time, set against what the roofs allow, says how close it
came. Both roofs are measured here, in float32, on the cores XLA uses: the bandwidth as a
stream over working sets from 32 KiB to 512 MiB, which finds the levels of memory a program
meets and how far each reaches; a read-only stream over the larger sizes; and a stream into a
new array each call, past glibc's threshold, for what fresh pages cost. A program is placed
under the level its arrays fit in (`memory_analysis`), judged from those measured extents,
never from the cache the CPU reports, and held to the stream of its pattern (`Pattern`), its
fresh pages, where measured, at the rate the machine maps them.
F and B come from XLA's cost analysis, an estimate read from the optimized HLO, or from a
count by hand.
"""

import json
import math
import os
import statistics
import time
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

# The n x n float32 product whose fastest run is the peak: as large as the pages' own products
# need for XLA:CPU to keep every core busy (a 768 x 768 product ran on fewer at times).
PRODUCT_N = 1024
# Runs of the product, half before the stream's sweep and half after it, seconds apart: the
# fastest is the peak, so that a neighbour's load in one moment does not set it.
ROUNDS = 30
# The stream's working sets, x and y together: 32 KiB to 512 MiB, doubling, past the largest
# arrays a page times (2.8's 384 MB intermediate). Each size runs the stream in a loop inside
# one call, so that a small working set is timed at its level, not at the cost of a call.
SWEEP = tuple(2**k for k in range(15, 30))
SWEEP_BYTES = 64 * 2**20  # at least this much traffic a call, looped over the working set
SWEEP_RUNS = 7  # timed calls a size, after one untimed: the fastest is its rate
FAULTING_RUNS = 3  # of the stream into a new array: each call's page faults set its time
# Below this size a stream's arrays are copied in from NumPy; from it on, made by `jnp.ones`:
# one compiles a program a shape, the other touches every page twice.
MADE_BY_JAX = 32 * 2**20
# The read-only stream, one pass a call, starts at this size: below it, a program that only
# reads is held to the in-place stream, and the smaller sizes would only lengthen the sweep,
# their rate set in part by a call's own cost (about 10 us here).
PATTERNS_FROM = 16 * 2**20
# A working set is in a cache where the stream runs this much faster than over the largest
# sizes (main memory): a margin past the noise of a shared machine, so that a level's extent
# does not move with a neighbour's load.
CACHED = 1.5
# Of the in-place stream's bytes, those it reads: x and y, of x, y and x written back. Memory
# gave reads at least this share of its rate, while it also took the writes.
IN_PLACE_READS = 2 / 3
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


def percent(share: float, up: bool = False) -> str:
    """A share in percent: whole percents from 10 % up; below, two digits, rounded to the
    nearest but never up to a new leading digit, so that a share under a threshold never
    reads as the threshold (1.2995 % is 1.3%, but 2.99 % is 2.9%, not 3%). With `up`, both
    are rounded up, for a bound the share stays under (0.0357 % is 0.036%)."""
    value = 100 * share
    if share >= 0.095:
        return f"{math.ceil(value - 1e-9)}%" if up else f"{share:.0%}"
    lead = 10 ** math.floor(math.log10(value)) if value > 0 else 10
    step = lead / 10
    steps = math.ceil(value / step - 1e-9) if up else math.floor(value / step + 0.5)
    if not up and math.floor(steps / 10 + 1e-9) != math.floor(value / lead + 1e-9):
        steps = math.floor(value / step + 1e-9)  # rounding would reach the next digit
    return f"{steps * step:.{max(0, -round(math.log10(step)))}f}%"


def size_text(nbytes: float) -> str:
    """A size in binary units: 32 KiB, 16 MiB, 1 GiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


class Pattern(StrEnum):
    """How a program meets memory, read from its memory analysis (`access_pattern`): reading
    only, it is held to the read-only stream; writing, in place or not, to the in-place one."""

    IN_PLACE = "in place"  # x = 2 * x + y, x donated: each write lands on a line just read
    READ = "read only"  # x.sum() + y.sum(), or max: reads its arrays, writes a number
    NEW_OUTPUT = "into a new array"  # held to the in-place stream: a CPU may read each line
    # of it before writing it, and glibc maps it afresh a call past its threshold (`fresh`)

    @property
    def stream(self) -> str:
        """Its stream, named in a few words: "read-only stream"."""
        return STREAM_NAMES[self]


STREAM_NAMES = {
    Pattern.IN_PLACE: "in-place stream",
    Pattern.READ: "read-only stream",
    Pattern.NEW_OUTPUT: "new-array stream",
}


@dataclass(frozen=True)
class BandwidthRoof:
    """A bandwidth roof: its rate and the stream that measured it, or, for reading held past
    the caches to the in-place stream's reads, that stream."""

    rate: float
    stream: Pattern = Pattern.READ
    its_reads: bool = False

    @property
    def name(self) -> str:
        """The roof in a few words: "read-only stream", "in-place stream's reads"."""
        return f"{self.stream.stream}'s reads" if self.its_reads else self.stream.stream


@dataclass(frozen=True)
class Level:
    """A level of the memory hierarchy as a program meets it: the stream's bandwidth there,
    and the largest working set measured at that level (None: the last, past every cache)."""

    name: str
    bandwidth: float  # bytes/s
    extent: int | None = None


@dataclass(frozen=True)
class Roofs:
    """A machine's peak rate and the bandwidth of each level of its memory: measured here
    (`measure_roofs`, which also says how), or a vendor's figures (memory alone)."""

    peak: float  # flop/s: the fastest run of a PRODUCT_N x PRODUCT_N product under jit
    bandwidth: float  # bytes/s: the stream over the largest working sets (main memory, HBM)
    caches: tuple[Level, ...] = ()  # the nearer levels the sweep found, nearest first
    sweep: tuple[tuple[int, float], ...] = ()  # the stream's rate at each working set's size
    cores: int = 0  # the cores XLA used
    reported_cache: int | None = None  # the last-level cache the CPU reports, not measured
    read_sweep: tuple[tuple[int, float], ...] = ()  # the read-only stream, size by size
    fresh_output: tuple[int, float, float] | None = None  # the stream into a new array each
    # call over the largest working set: (size, bytes/s, bytes of fresh pages a call)

    def __post_init__(self):  # JSON gives lists: keep the record hashable
        object.__setattr__(self, "caches", tuple(Level(**c) if isinstance(c, dict) else c
                                                 for c in self.caches))  # fmt: skip
        for name in ("sweep", "read_sweep"):
            object.__setattr__(self, name, tuple(map(tuple, getattr(self, name))))
        if self.fresh_output is not None:
            object.__setattr__(self, "fresh_output", tuple(self.fresh_output))

    def sweep_of(self, pattern: "Pattern") -> tuple[tuple[int, float], ...]:
        """The stream's (size, bytes/s) a program of `pattern` is held to."""
        return self.read_sweep if pattern is Pattern.READ else self.sweep

    @property
    def fault_rate(self) -> float:
        """Bytes of fresh pages a second the machine maps: the stream into a new array's fresh
        bytes a call over the time it took beyond moving its bytes at the memory bandwidth
        (0 where not measured, or where it took no longer)."""
        if not self.fresh_output:
            return 0.0
        size, rate, fresh = self.fresh_output
        beyond = size / rate - size / self.bandwidth
        return fresh / beyond if fresh and beyond > 0 else 0.0

    @property
    def memory(self) -> Level:
        """The last level: main memory, past every cache."""
        return Level("main memory", self.bandwidth)

    @property
    def levels(self) -> tuple[Level, ...]:
        return (*self.caches, self.memory)

    @property
    def ridge(self) -> float:
        """The intensity, in flops per byte, at which the peak meets the memory roof."""
        return self.peak / self.bandwidth

    def level_for(self, footprint: float) -> Level:
        """The nearest level whose measured extent holds arrays of `footprint` bytes."""
        return next(
            (c for c in self.caches if c.extent is not None and footprint <= c.extent),
            self.memory,
        )

    def fits_cache(self, footprint: float) -> bool:
        """Whether arrays of `footprint` bytes fit in a cache, as the sweep measured them."""
        return any(c.extent is not None and footprint <= c.extent for c in self.caches)

    def roof_for(self, footprint: float, pattern: Pattern = Pattern.IN_PLACE) -> BandwidthRoof:
        """The bandwidth roof of work whose arrays take `footprint` bytes: where they fit in a
        cache, the in-place stream's rate at the smallest working set that holds them (the
        level they meet: L2's rate for a small program, L3's for a larger one), near the
        caches' edge one measurement on a steep fall (`near_edge`), never below main memory's
        (a slower measure of a cache is noise); past the caches, main memory's. Reading
        alone, where the read-only stream was measured for their size (`read_rate_for`): in a
        cache, the faster of the two streams there; in one only the read-only stream found
        (`read_cached`), that stream's rate; past the caches, main memory's rate of reading
        (`memory_read_rate`), which may be the in-place stream's reads."""
        read = self.read_rate_for(footprint) if pattern is Pattern.READ else None
        cached = self.fits_cache(footprint)
        in_place = max(self.rate_at(footprint), self.bandwidth) if cached else self.bandwidth
        if read is None or (cached and read < in_place):
            return BandwidthRoof(in_place, Pattern.IN_PLACE)
        if cached:
            return BandwidthRoof(read)
        if self.read_cached(footprint):
            return BandwidthRoof(read)
        if self.read_rate == self.memory_read_rate:
            return BandwidthRoof(self.read_rate)
        return BandwidthRoof(self.memory_read_rate, Pattern.IN_PLACE, its_reads=True)

    def bandwidth_for(self, footprint: float, pattern: Pattern = Pattern.IN_PLACE) -> float:
        """The rate of `roof_for`."""
        return self.roof_for(footprint, pattern).rate

    def roof_name(self, footprint: float, pattern: Pattern) -> str:
        """The roof of `roof_for` in a few words: "read-only stream", "in-place stream", or,
        for reading held past the caches to the in-place stream's reads, "in-place stream's
        reads"."""
        return self.roof_for(footprint, pattern).name

    @property
    def memory_read_rate(self) -> float:
        """Main memory's rate of reading: the faster of the read-only stream over its largest
        sizes (`read_rate`) and the in-place stream's reads (`IN_PLACE_READS` of its rate:
        reading from memory was never measured faster, while the in-place stream's writes may
        reach memory beside its reads). The bandwidth where the read-only stream was not
        measured."""
        if self.read_rate is None:
            return self.bandwidth
        return max(self.read_rate, IN_PLACE_READS * self.bandwidth)

    def read_rate_for(self, footprint: float) -> float | None:
        """The read-only stream's rate for arrays of `footprint` bytes: at their size
        (`read_rate_at`), or, past the smallest of the three largest sizes, their median
        (`read_rate`). None where not measured."""
        if self.read_sweep and footprint > self.read_sweep[-3:][0][0]:
            return self.read_rate
        return self.read_rate_at(footprint)

    def read_cached(self, footprint: float) -> bool:
        """Whether the read-only stream found a cache holding arrays of `footprint` bytes (it
        may find one the in-place stream, which also writes, did not): from its smallest size
        up to theirs (under twice theirs), short of the three largest, it ran CACHED times
        main memory's roof for reading or more, as `levels_of` finds the in-place caches."""
        memory = self.memory_read_rate
        for size, rate in self.read_sweep[:-3]:
            if rate < CACHED * memory:
                return False
            if footprint <= size:
                return size < 2 * footprint
        return False

    def read_rate_at(self, footprint: float) -> float | None:
        """The read-only stream's rate at the smallest working set that holds `footprint`
        bytes, where the sweep measured one less than twice as large (None elsewhere)."""
        return next(
            (rate for size, rate in self.read_sweep if footprint <= size < 2 * footprint), None
        )

    def near_edge(self, footprint: float) -> bool:
        """Whether arrays of `footprint` bytes fit in a cache, but past half its extent, where
        the stream itself slows toward memory's rate."""
        level = self.level_for(footprint)
        return level.extent is not None and footprint > level.extent / 2

    def rate_at(self, footprint: float) -> float:
        """The in-place stream's rate at the smallest working set that holds `footprint`
        bytes (memory's past the sweep)."""
        return next((rate for size, rate in self.sweep if size >= footprint), self.bandwidth)

    @property
    def read_rate(self) -> float | None:
        """The read-only stream's median over its three largest working sets (None where it
        was not measured)."""
        swept = self.read_sweep[-3:]
        return statistics.median(rate for _, rate in swept) if swept else None

    def memory_rate(self, pattern: Pattern = Pattern.IN_PLACE) -> float:
        """Main memory's rate for a program of one pattern, past the caches (`bandwidth_for`)."""
        return self.bandwidth_for(math.inf, pattern)

    def __str__(self) -> str:
        caches = "".join(
            f"; {c.name} up to {size_text(c.extent)}, {rate_text(c.bandwidth, 'B')} by the median "
            "of their sizes (a program there is held to the rate at its size)"
            for c in self.caches
        )
        return (
            f"peak {rate_text(self.peak, 'FLOP')}, bandwidth {rate_text(self.bandwidth, 'B')}, "
            f"ridge {self.ridge:.3g} flops per byte{caches}"
        )

    def as_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Roofs":
        return cls(**json.loads(text))


def levels_of(sweep: list[tuple[int, float]]) -> tuple[float, tuple[Level, ...]]:
    """Main memory's bandwidth (the median over the three largest working sets) and the
    cache the stream found: every working set, from the smallest, that ran CACHED times
    faster than memory, its bandwidth the median of their rates (none if the smallest did
    not)."""
    memory = statistics.median(rate for _, rate in sweep[-3:])
    cached = []
    for size, rate in sweep:
        if rate < CACHED * memory:
            break
        cached.append((size, rate))
    if not cached or len(cached) == len(sweep):
        return memory, ()
    cache = Level("the caches", statistics.median(r for _, r in cached), cached[-1][0])
    return memory, (cache,)


def _ones(n: int):
    """n float32 ones on the device, made the cheaper way for their size (MADE_BY_JAX)."""
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    if 4 * n >= MADE_BY_JAX:
        return jnp.ones(n, jnp.float32)
    return jax.device_put(np.ones(n, np.float32))


def waited_rate(stream, args: tuple, moved: int, runs: int = SWEEP_RUNS,
                least: int = SWEEP_BYTES) -> tuple[float, float]:  # fmt: skip
    """Calls of `stream` (one pass, `moved` bytes each), each waited for, as the pages time a
    program, so that one call's output is freed before the next is made: `runs` calls, or as
    many as move `least` bytes, after an untimed one. Bytes/s of the fastest, and the bytes of
    fresh pages a call touched (its minor page faults, over the timed calls)."""
    import resource  # noqa: PLC0415

    import jax  # noqa: PLC0415 - imported when measured

    calls = max(runs, least // moved)
    jax.block_until_ready(stream(*args))
    faults, fastest = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, math.inf
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(stream(*args))
        fastest = min(fastest, time.perf_counter() - start)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return moved / fastest, faults * resource.getpagesize() / calls


def stream_rates(sizes=SWEEP, runs: int = SWEEP_RUNS, least: int = SWEEP_BYTES) -> dict:
    """The in-place and read-only streams over `x` and `y` (float32, `size` bytes together)
    at each of `sizes`, by `Pattern`: (size, bytes/s); and, over the largest, the stream into a
    new array each call: `Pattern.NEW_OUTPUT` gives its (size, bytes/s, fresh bytes a call).

    In place, `x = 2 * x + y` with `x` donated is looped inside one call until `least` bytes
    moved, so that a small working set is timed at its level, not at the cost of a call: the
    fastest of `runs` calls after an untimed one. Read only, the faster of `x.sum() + y.sum()`
    and `x.max() + y.max()`, each timed as the pages time programs: one pass a call, each call
    waited for (`waited_rate`), from PATTERNS_FROM up. Into a new array, `2 * x + y` without
    donation, over the largest size, FAULTING_RUNS calls: its output is past glibc's threshold
    for mapping a block afresh at each allocation, so each call faults on every page of it
    (its minor page faults say so)."""
    import jax  # noqa: PLC0415 - imported when measured

    # Two reductions that XLA compiles to different kernels: the faster at each size is the
    # read-only stream, so that one kernel's own limit does not pass for memory's.
    reads = (jax.jit(lambda x, y: x.sum() + y.sum()), jax.jit(lambda x, y: x.max() + y.max()))
    found: dict = {Pattern.IN_PLACE: [], Pattern.READ: []}
    for size in sizes:
        n = size // 8  # float32 elements of each of x and y
        moved = 3 * 4 * n  # read x and y, write x
        loops = max(1, least // moved)
        # Donated, x's buffer takes the result: every call streams over the same two arrays
        # and writes no fresh memory (whose page faults would be timed too).
        stream = jax.jit(
            lambda x, y, loops=loops: jax.lax.fori_loop(0, loops, lambda _, x: 2.0 * x + y, x),
            donate_argnums=0,
        )
        x, y = _ones(n), _ones(n)
        x = jax.block_until_ready(stream(x, y))
        fastest = math.inf
        for _ in range(runs):
            start = time.perf_counter()
            x = jax.block_until_ready(stream(x, y))
            fastest = min(fastest, time.perf_counter() - start)
        found[Pattern.IN_PLACE].append((size, moved * loops / fastest))
        if size >= PATTERNS_FROM:
            rate = max(waited_rate(read, (x, y), size, runs, least)[0] for read in reads)
            found[Pattern.READ].append((size, rate))
        if size == max(sizes):
            new_output = jax.jit(lambda x, y: 2.0 * x + y)
            found[Pattern.NEW_OUTPUT] = (
                moved,
                *waited_rate(new_output, (x, y), moved, FAULTING_RUNS, 0),
            )
        del x, y
    return found


def measure_roofs() -> Roofs:
    """Measure this machine's roofs, in a few seconds: the product's fastest run, then the
    stream over working sets from 32 KiB to 512 MiB (the levels of memory it meets), with the
    read-only stream over the larger sizes and the stream into a new array over the largest."""
    import jax  # noqa: PLC0415 - imported when measured
    import jax.numpy as jnp  # noqa: PLC0415

    from chapter2.environment import last_level_cache, xla_cores  # noqa: PLC0415 - imports JAX

    n = PRODUCT_N
    a = jnp.ones((n, n), jnp.float32)
    product = jax.jit(jnp.matmul)
    jax.block_until_ready(product(a, a))  # compiles

    def fastest_product() -> float:
        fastest = math.inf
        for _ in range(ROUNDS // 2):
            start = time.perf_counter()
            jax.block_until_ready(product(a, a))
            fastest = min(fastest, time.perf_counter() - start)
        return fastest

    before = fastest_product()
    streams = stream_rates()
    sweep = streams[Pattern.IN_PLACE]
    memory, caches = levels_of(sweep)
    return Roofs(
        2 * n**3 / min(before, fastest_product()),
        memory,
        caches,
        tuple(sweep),
        xla_cores(),
        last_level_cache(),
        tuple(streams[Pattern.READ]),
        streams[Pattern.NEW_OUTPUT],
    )


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
    FRESH_PAGES = "under the fresh-page roof"

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
    Bound.FRESH_PAGES: "mapping its fresh pages, at the rate the machine maps them, takes longer "
    "than its work and its traffic, so that rate is its roof",
}
TRANSCENDENTAL = (
    "its transcendentals (exp, log, ...), which the roofs leave out, outnumber its flops and "
    "may set its time"
)

ABOVE = {
    bound: bound.replace("under", "above")
    for bound in (Bound.COMPUTE, Bound.MEMORY, Bound.CACHE, Bound.FRESH_PAGES)
}
ABOVE[Bound.RIDGE] = "above the roofs, near the ridge"


@dataclass(frozen=True)
class Placement:
    """A program of `flops`, `bytes` and `transcendentals` that took `seconds`, under `roofs`;
    its arrays (arguments, results, temporaries) take `footprint` bytes, or, where that is not
    known, no fewer than its bytes are taken to; it meets memory as `pattern` says; a call
    touches `fresh` bytes of fresh pages, where a page measured them (`layout.call_cost`)."""

    flops: float
    bytes: float
    seconds: float
    roofs: Roofs
    transcendentals: float = 0.0
    footprint: float | None = None
    pattern: Pattern = Pattern.IN_PLACE
    fresh: float = 0.0

    @property
    def in_cache(self) -> bool:
        """Whether its arrays fit in a cache, whose bandwidth is then its roof: one the
        in-place stream found or, if it only reads and is held to the read-only stream, one
        that stream found (`Roofs.read_cached`)."""
        if self.roofs.fits_cache(self.held):
            return True
        return self.stream is Pattern.READ and self.roofs.read_cached(self.held)

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
    def stream(self) -> Pattern:
        """The pattern whose stream is its bandwidth roof (`Roofs.roof_for`)."""
        return self.roofs.roof_for(self.held, self.pattern).stream

    @property
    def held(self) -> float:
        """The bytes its arrays take, or, where not known, its bytes."""
        return self.bytes if self.footprint is None else self.footprint

    @property
    def bandwidth(self) -> float:
        """Its bandwidth roof: its level's, for its pattern (`Roofs.bandwidth_for`)."""
        return self.roofs.bandwidth_for(self.held, self.pattern)

    @property
    def near_edge(self) -> bool:
        """Whether its arrays fit in a cache, past half of it (`Roofs.near_edge`)."""
        return self.roofs.near_edge(self.held)

    @property
    def ridge(self) -> float:
        """The intensity at which its bandwidth roof meets the peak."""
        return self.roofs.peak / self.bandwidth

    @property
    def allowed(self) -> float:
        """The shortest time the roofs allow: the work at the peak, or the traffic at the
        bandwidth and its fresh pages at the rate the machine maps them (`Roofs.fault_rate`),
        whichever takes longer."""
        return max(self.flops / self.roofs.peak, self.bytes / self.bandwidth + self.faulting)

    @property
    def faulting(self) -> float:
        """Seconds its fresh pages take at the rate the machine maps them (0 if not known)."""
        return self.fresh / self.roofs.fault_rate if self.roofs.fault_rate else 0.0

    @property
    def share(self) -> float:
        """The share of what the roofs allow that the program reached (1: on the roof)."""
        return self.allowed / self.seconds

    @property
    def bound(self) -> Bound:
        if self.share < FAR_UNDER:
            return Bound.FAR_UNDER
        if self.faulting > max(self.flops / self.roofs.peak, self.bytes / self.bandwidth):
            return Bound.FRESH_PAGES
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
    Placements by name); where a bandwidth-bound program's roof is not main memory's in-place
    rate, the verdict gives it: the in-place stream's rate at its size in a cache (near the
    caches' edge, said to be one measurement on a steep fall), the read-only stream's or the
    in-place stream's reads for a program that only reads, and the fresh pages a call, where
    measured; one held to the in-place stream's reads also gives the slower rate the
    read-only stream reached."""
    from chapter2.timing import milliseconds  # noqa: PLC0415 - imported by the pages anyway

    def achieved(p: Placement) -> str:
        if p.intensity > p.ridge:
            return rate_text(p.rate, "FLOP")
        return rate_text(p.traffic, "B")

    def standing(p: Placement) -> str:
        other = p.bandwidth != p.roofs.bandwidth and p.bound in (Bound.MEMORY, Bound.CACHE)
        name = p.roofs.roof_name(p.held, p.pattern)
        where = name if not p.in_cache else "at its size"
        where = f"{name} {where}" if p.in_cache and name != Pattern.IN_PLACE.stream else where
        notes = [f"{where}, {rate_text(p.bandwidth, 'B')}"] if other else []
        notes += (
            ["near their edge: one measurement on a steep fall"] if other and p.near_edge else []
        )
        slower_reads = p.pattern is Pattern.READ and p.stream is Pattern.IN_PLACE
        if slower_reads and other and not p.in_cache and p.roofs.read_rate:  # held above it
            notes += [f"the read-only stream reached {rate_text(p.roofs.read_rate, 'B')}"]
        notes += [f"{p.fresh / 1e6:.0f} MB of fresh pages a call"] if p.fresh >= 1e6 else []
        held = f" ({'; '.join(notes)})" if notes else ""
        return f"{p.position}{held}, {percent(p.share)}" + (
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


def access_pattern(memory) -> Pattern:
    """How a compiled program meets memory, from its `memory_analysis()`: writing (results
    and temporaries its inputs do not hold) under a hundredth of what it reads, it reads only,
    or, where its results alias donated inputs, works in place; else it writes new arrays."""
    written = memory.output_size_in_bytes + memory.temp_size_in_bytes - memory.alias_size_in_bytes
    if 100 * written >= memory.argument_size_in_bytes:
        return Pattern.NEW_OUTPUT
    return Pattern.IN_PLACE if memory.alias_size_in_bytes else Pattern.READ


def place(compiled, seconds: float, roofs: Roofs, fresh: float = 0.0) -> Placement:
    """A compiled program that took `seconds` (a median, say), its flops and bytes read from
    XLA's cost analysis, its footprint and its pattern from its memory analysis; a call of it
    touched `fresh` bytes of fresh pages, where measured."""
    from chapter2.compat import cost_analysis  # noqa: PLC0415 - imports JAX

    costs = cost_analysis(compiled)
    flops = costs.get("flops", 0.0)  # a copy has none
    transcendentals = costs.get("transcendentals", 0.0)
    memory = compiled.memory_analysis()
    return Placement(flops, costs["bytes accessed"], seconds, roofs, transcendentals,
                     footprint(memory), access_pattern(memory), fresh)  # fmt: skip
