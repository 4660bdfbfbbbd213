"""chapter2.roofline: the verdicts a placement gives, the roofs a build shares, and the hand
counts that stand in for a cost analysis the book does not have."""

import dataclasses
import json
import statistics

import jax
import pytest

from chapter2.cases import distances as dist
from chapter2.roofline import (
    CACHED as CACHED_FACTOR,
)
from chapter2.roofline import (
    FAR_UNDER,
    NEAR_RIDGE,
    ROOFS_VARIABLE,
    Bound,
    Level,
    Pattern,
    Placement,
    Roofs,
    access_pattern,
    levels_of,
    machine_roofs,
    percent,
    place,
    placement_table,
    rate_text,
)
from chapter2.timing import BenchResult, refill_note

ROOFS = Roofs(peak=100e9, bandwidth=25e9)  # a ridge of 4 flops per byte


def placed(intensity: float, share: float) -> Placement:
    """A program of `intensity` that reached `share` of what the roofs allow."""
    flops = 1e9
    nbytes = flops / intensity
    allowed = max(flops / ROOFS.peak, nbytes / ROOFS.bandwidth)
    return Placement(flops, nbytes, allowed / share, ROOFS)


@pytest.mark.parametrize(
    ("intensity", "share", "bound"),
    [
        (500, 0.8, Bound.COMPUTE),
        (4 * NEAR_RIDGE * 1.01, 0.5, Bound.COMPUTE),
        (4 * NEAR_RIDGE * 0.99, 0.5, Bound.RIDGE),
        (4 * 1.01, 0.5, Bound.RIDGE),
        (4 * 0.99, 0.5, Bound.RIDGE),
        (4 / NEAR_RIDGE * 1.01, 0.5, Bound.RIDGE),
        (4 / NEAR_RIDGE * 0.99, 0.5, Bound.MEMORY),
        (0.1, 1.0, Bound.MEMORY),
        (0.1, FAR_UNDER * 0.9, Bound.FAR_UNDER),
        (500, FAR_UNDER * 0.9, Bound.FAR_UNDER),
        (500, FAR_UNDER * 1.1, Bound.COMPUTE),
    ],
)
def test_a_placement_is_judged_by_its_intensity_and_its_share(intensity, share, bound):
    found = placed(intensity, share)
    assert found.share == pytest.approx(share)
    assert found.bound is bound
    assert found.verdict == f"{bound} ({percent(share)} of what the roofs allow)"


@pytest.mark.parametrize(
    ("intensity", "share", "position"),
    [
        (0.1, 1.3, "above the memory roof"),
        (500, 1.3, "above the compute roof"),
        (0.1, 0.99, "under the memory roof"),
        (4.0, 1.3, "above the roofs, near the ridge"),
    ],
)
def test_a_program_past_its_roof_keeps_its_bound_and_is_said_to_be_above_it(
    intensity, share, position
):
    found = placed(intensity, share)
    assert found.bound is placed(intensity, 0.5).bound  # the verdict does not move with the time
    assert found.position == position
    assert found.verdict.startswith(f"{position} ({share:.0%}")


def test_what_the_roofs_allow_is_the_slower_of_work_and_traffic():
    program = Placement(flops=2e9, bytes=1e9, seconds=0.1, roofs=ROOFS)
    assert program.allowed == pytest.approx(max(2e9 / 100e9, 1e9 / 25e9))
    assert program.rate == pytest.approx(2e10)
    assert program.traffic == pytest.approx(1e10)
    assert ROOFS.ridge == pytest.approx(4.0)


def test_a_table_gives_each_program_the_rate_of_the_roof_that_applies():
    """Past the ridge a program is judged by its flops, short of it by its bytes."""
    programs = {"product": placed(40, 0.5), "copy": Placement(0, 1e9, 0.08, ROOFS)}
    timings = {"product": BenchResult((0.02,) * 3), "copy": BenchResult((0.08,) * 3)}
    product, copy = placement_table(programs, timings).splitlines()[2:]
    assert product == "| product | 20.0 | 40 | 50.0 GFLOP/s | under the compute roof, 50% |"
    assert copy == "| copy | 80.0 | 0 | 12.5 GB/s | under the memory roof, 50% |"
    assert str(ROOFS) == "peak 100 GFLOP/s, bandwidth 25.0 GB/s, ridge 4 flops per byte"


def test_a_table_shows_the_share_of_the_median_time():
    copy = Placement(0, 1e9, 0.08, ROOFS)  # the roofs allow 40 ms
    spread = {"copy": BenchResult((0.04, 0.08, 0.16))}
    head, _, row = placement_table({"copy": copy}, spread).splitlines()
    assert row.endswith("| 80.0 | 0 | 12.5 GB/s | under the memory roof, 50% |")
    assert head.endswith("| against the roofs (share of what they allow) |")


def test_a_table_names_the_stream_a_program_is_held_to_where_not_memorys():
    read = Placement(0, 100 * MIB, 0.02, FAST_READS, footprint=100 * MIB, pattern=Pattern.READ)
    in_place = Placement(0, 100 * MIB, 0.02, PATTERNED, footprint=100 * MIB)
    faulting = Placement(0, 100 * MIB, 0.1, PATTERNED, footprint=100 * MIB, fresh=50e6)
    timed = {name: BenchResult((s,) * 3) for name, s in [("r", 0.02), ("i", 0.02), ("f", 0.1)]}
    table = placement_table({"r": read, "i": in_place, "f": faulting}, timed)
    r, i, f = table.splitlines()[2:]
    assert r.endswith(f"| under the memory roof (read-only stream, {rate_text(25e9, 'B')}), 21% |")
    assert i.endswith("| under the memory roof, 26% |")  # main memory's own roof: unnamed
    assert f.endswith(
        f"| under the fresh-page roof (50 MB of fresh pages a call), {percent(faulting.share)} |"
    )


def test_a_program_of_more_transcendentals_than_flops_keeps_its_roof_and_says_so():
    def program(transcendentals: float) -> Placement:
        return Placement(1e6, 12e6, 1e-3, ROOFS, transcendentals)

    assert program(2e6).bound is Bound.MEMORY
    assert program(2e6).verdict.endswith("outnumber its flops and may set its time")
    assert "transcendentals" not in program(1e6).verdict  # as many as its flops
    timings = {"exp(log)": BenchResult([1e-3] * 5), "x*y+x": BenchResult([1e-3] * 5)}
    rows = placement_table({"exp(log)": program(2e6), "x*y+x": program(0)}, timings)
    said = "| under the memory roof, 48%; more transcendentals than flops, which may set its time |"
    assert rows.splitlines()[2].endswith(said)
    assert rows.splitlines()[3].endswith("| under the memory roof, 48% |")


def test_place_reads_the_transcendentals_from_the_cost_analysis():
    compiled = (
        jax.jit(lambda x: jax.numpy.exp(jax.numpy.log(x) + 1)).lower(jax.numpy.ones(1000)).compile()
    )
    assert place(compiled, 1e-3, ROOFS).transcendental


def test_shares_under_ten_percent_keep_two_digits():
    assert [percent(s) for s in (0.48, 0.1, 0.029, 0.0123)] == ["48%", "10%", "2.9%", "1.2%"]
    assert [percent(s) for s in (0.029996, 0.0086, 0.03)] == ["2.9%", "0.86%", "3.0%"]
    # to the nearest, as a reader's arithmetic gives it, but never up to a new leading digit
    nearest = [percent(s) for s in (0.012995, 0.0259, 0.0125, 0.01996, 0.00996)]
    assert nearest == ["1.3%", "2.6%", "1.3%", "1.9%", "0.99%"]
    bounds = [percent(s, up=True) for s in (0.000357, 0.029, 0.0291, 0.121)]
    assert bounds == ["0.036%", "2.9%", "3.0%", "13%"]
    assert placed(0.1, 0.019).verdict == "far under both roofs (1.9% of what the roofs allow)"


def test_rates_read_with_three_digits_and_a_prefix():
    assert rate_text(131.4e9, "FLOP") == "131 GFLOP/s"
    assert rate_text(29.84e9, "B") == "29.8 GB/s"
    assert rate_text(4.8e12, "B") == "4.80 TB/s"
    assert rate_text(825e6, "FLOP") == "825 MFLOP/s"


MIB = 2**20
# A sweep like a 2-core EPYC's: caches up to 16 MiB, then main memory.
SWEEP_HERE = ((MIB, 80e9), (16 * MIB, 50e9), (32 * MIB, 26e9), (64 * MIB, 25e9), (128 * MIB, 24e9))
CACHED = Roofs(100e9, 25e9, (Level("the caches", 60e9, 16 * MIB),), SWEEP_HERE)


@pytest.mark.parametrize(
    ("footprint", "bandwidth", "bound"),
    [
        (MIB // 2, 80e9, Bound.CACHE),  # the rate of the smallest working set that holds it
        (16 * MIB, 50e9, Bound.CACHE),  # the cache's edge, as measured
        (16 * MIB + 1, 25e9, Bound.MEMORY),
    ],
)
def test_a_program_is_placed_under_the_level_its_arrays_fit_in(footprint, bandwidth, bound):
    seconds = 2 * footprint / bandwidth  # half of what the roofs allow
    program = Placement(0.1 * footprint, footprint, seconds, CACHED)
    # its arrays, not its traffic, must fit
    many_passes = Placement(0.1 * footprint, 10 * footprint, seconds, CACHED, footprint=footprint)
    assert many_passes.in_cache == (bound is Bound.CACHE)
    assert program.bandwidth == bandwidth
    assert program.ridge == pytest.approx(100e9 / bandwidth)
    assert program.allowed == pytest.approx(footprint / bandwidth)
    assert program.bound is bound


def test_a_cache_roof_is_never_below_memory_and_absent_without_a_sweep():
    slow = Roofs(100e9, 25e9, (Level("the caches", 20e9, 16 * MIB),), ((16 * MIB, 20e9),))
    assert Placement(1e6, 1e6, 1.0, slow).bandwidth == 25e9
    assert not Roofs(100e9, 25e9).fits_cache(1e6)
    assert CACHED.fits_cache(1e6)
    assert CACHED.level_for(1e9) == Level("main memory", 25e9)


@pytest.mark.parametrize(
    ("rates", "memory", "edge"),
    [  # GB/s over 1, 2, ... MiB working sets; memory is the median of the three largest
        ([150, 140, 135, 130, 100, 58, 45, 40, 38, 41], 40e9, 16 * MIB),  # EPYC-like
        ([60, 45, 43, 42, 42, 41, 42, 25, 20, 19], 20e9, 64 * MIB),  # a VM keeping 64 MiB
        ([40, 39, 41, 40, 38, 39, 40, 41, 39, 40], 40e9, None),  # no cache faster than memory
        ([150, 140, 50, 130, 40, 41, 40, 39, 40, 41], 40e9, 2 * MIB),  # the first drop ends it
    ],
)
def test_the_levels_come_from_the_stream_over_working_sets(rates, memory, edge):
    sweep = [(MIB * 2**i, r * 1e9) for i, r in enumerate(rates)]
    found_memory, caches = levels_of(sweep)
    assert found_memory == pytest.approx(memory)
    assert (caches[0].extent if caches else None) == edge
    if caches:  # every working set in the cache ran CACHED times as fast as memory, or more
        inside = [r for size, r in sweep if size <= edge]
        assert min(inside) >= CACHED_FACTOR * memory
        assert caches[0].bandwidth == pytest.approx(statistics.median(inside))


def test_pages_read_the_roofs_the_build_measured(tmp_path, monkeypatch):
    shared = tmp_path / "roofs.json"
    streams = ((MIB, 70e9),), (256 * MIB, 8e9, 85 * MIB)  # read only; into a new array
    roofs = Roofs(1.5e11, 3e10, CACHED.caches, SWEEP_HERE, 2, 32 * MIB, *streams)
    shared.write_text(roofs.as_json())
    monkeypatch.setenv(ROOFS_VARIABLE, str(shared))
    assert machine_roofs() == roofs
    assert json.loads(machine_roofs().as_json())["peak"] == 1.5e11


def test_a_copy_is_placed_with_no_flops():
    copy = jax.jit(lambda a: a * 1.0 + 0.0).lower(jax.numpy.ones(1000)).compile()
    found = place(copy, 1e-6, ROOFS)
    assert (found.flops, found.intensity) == (0.0, 0.0)
    assert found.bytes >= 8000
    assert found.footprint == 8000  # its argument and its result


@pytest.mark.parametrize("d", [64, 3])
def test_the_hand_counts_are_the_cpu_cost_analysis_of_each_version(d):
    """The flops the recorded GPU run is placed with are what XLA counts on the CPU (v3's
    centring aside: its hand count is an estimate), and the bytes no more than it counts."""
    kx, ky = jax.random.split(jax.random.key(0))
    x, y = jax.random.normal(kx, (100, d)), jax.random.normal(ky, (150, d))
    programs = {**dist.VERSIONS, "bare X @ Y.T": lambda a, b: a @ b.T}
    for name, fn in programs.items():
        flops, nbytes = dist.hand_count(name, 100, 150, d)
        counted = dist.evidence(fn, x, y)
        assert flops == pytest.approx(counted.flops, rel=0.01 if name == "v3" else 0), name
        assert nbytes <= counted.bytes_accessed, name


@pytest.mark.parametrize(
    ("edge_mib", "said"),
    [
        (16, "a longer call pays little for its neighbour"),
        (480, "here a call just over that still pays for its neighbour's misses"),
    ],
)
def test_the_settle_rule_says_what_it_costs_for_the_cache_measured(edge_mib, said):
    note = refill_note(edge_mib * 2**20, 30e9)
    assert note.startswith(f"refilling the {edge_mib} MiB of cache the stream measured here")
    assert note.endswith(said)
    share = edge_mib * 2**20 / 30e9 / 0.05  # the refill's time, over a call of 50 ms
    assert f", {percent(share)} of a call of 50.0 ms" in note  # 1.1%, not "1%"


def test_without_a_measured_cache_the_settle_rule_refills_nothing():
    assert "no cache faster than memory" in refill_note(None, 30e9)


def test_the_roofline_figure_draws_the_cache_roof_its_programs_are_held_to():
    from chapter2.figures import roofline_figure
    from chapter2.roofline import Level, Placement, Roofs, rate_text

    mib = 2**20
    sweep = ((mib, 90e9), (8 * mib, 70e9), (64 * mib, 20e9), (128 * mib, 20e9), (256 * mib, 20e9))
    roofs = Roofs(100e9, 20e9, (Level("the caches", 80e9, 8 * mib),), sweep)
    small = Placement(1e6, 4 * mib, 1e-4, roofs, footprint=4 * mib)  # in the caches
    large = Placement(1e6, 100 * mib, 1e-2, roofs, footprint=100 * mib)  # past them
    assert small.bandwidth == 70e9  # the stream's rate at its size: the level it meets
    alt = roofline_figure({"one": {"small": small, "large": large}}).alt
    assert f"{rate_text(70e9, 'B')} in the caches at their size" in alt
    alone = roofline_figure({"one": {"large": large}}).alt
    assert "in the caches" not in alone  # no program there: no such roof


PATTERNED = Roofs(
    100e9, 20e9, (Level("the caches", 80e9, 8 * MIB),),
    ((MIB, 90e9), (8 * MIB, 70e9), (64 * MIB, 20e9), (128 * MIB, 20e9), (256 * MIB, 20e9)),
    read_sweep=((MIB, 60e9), (8 * MIB, 95e9), (64 * MIB, 15e9), (256 * MIB, 14e9)),
    fresh_output=(256 * MIB, 5e9, 85 * MIB),  # 53.7 ms a call, 13.4 ms of it the traffic
)  # fmt: skip


# The same machine, its read-only stream faster than the in-place one past the caches
FAST_READS = dataclasses.replace(
    PATTERNED, read_sweep=((8 * MIB, 95e9), (64 * MIB, 25e9), (256 * MIB, 24e9))
)


def test_a_reading_program_past_the_caches_is_held_to_the_faster_way_reads_met_memory():
    """The read-only stream, or the in-place stream's reads (two thirds of its bytes): never
    the in-place stream's whole rate, which counts its writes too."""
    slow = dataclasses.replace(
        PATTERNED, read_sweep=((8 * MIB, 95e9), (64 * MIB, 10e9), (256 * MIB, 11e9))
    )
    for roofs, rate, name in [
        (PATTERNED, 15e9, "read-only stream"),
        (FAST_READS, 25e9, "read-only stream"),
        (slow, 20e9 * 2 / 3, "in-place stream's reads"),  # 11 read alone
    ]:
        read = Placement(0, 100 * MIB, 1.0, roofs, footprint=100 * MIB, pattern=Pattern.READ)
        assert read.bandwidth == roofs.memory_rate(Pattern.READ) == pytest.approx(rate)
        assert roofs.roof_name(100 * MIB, Pattern.READ) == name
    assert PATTERNED.roof_name(100 * MIB, Pattern.IN_PLACE) == "in-place stream"
    # in a cache, reads are held to the in-place stream's whole rate where it was faster:
    # reading from a cache was measured as fast as that (2.4's 16 MB sums)
    in_cache = Placement(0, 3 * MIB // 4, 1.0, slow, footprint=3 * MIB // 4, pattern=Pattern.READ)
    assert in_cache.bandwidth == 90e9
    assert slow.roof_name(3 * MIB // 4, Pattern.READ) == "in-place stream"
    assert PATTERNED.read_rate == 15e9  # its own median, whichever stream holds a program
    assert Roofs(100e9, 20e9).read_rate is None  # not measured
    assert Roofs(100e9, 20e9).memory_rate(Pattern.READ) == 20e9


@pytest.mark.parametrize(
    ("footprint", "pattern", "bandwidth"),
    [
        (4 * MIB, Pattern.IN_PLACE, 70e9),  # in the caches: the in-place stream at its size,
        (4 * MIB, Pattern.READ, 70e9),  # reading too, where no read-only size holds it (<2x)
        (8 * MIB, Pattern.READ, 95e9),  # the read-only stream, where it ran faster there
        (5 * MIB, Pattern.READ, 95e9),
        (MIB * 3 // 4, Pattern.READ, 90e9),  # in a cache, the faster stream: not 60 at 1 MiB
        (4 * MIB, Pattern.NEW_OUTPUT, 70e9),
        (100 * MIB, Pattern.IN_PLACE, 20e9),  # past the caches: memory's median
        (100 * MIB, Pattern.NEW_OUTPUT, 20e9),
        (100 * MIB, Pattern.READ, 15e9),  # past the caches: the read-only stream's median of
        # its three largest (15), faster than the in-place stream's reads (2/3 of 20)
        (MIB // 4, Pattern.READ, 90e9),
    ],
)
def test_a_program_is_held_to_its_level_and_past_the_caches_to_its_pattern(
    footprint, pattern, bandwidth
):
    program = Placement(0, footprint, 1.0, PATTERNED, footprint=footprint, pattern=pattern)
    assert program.bandwidth == bandwidth


def test_fresh_pages_are_held_to_the_rate_the_machine_maps_them():
    size, rate, fresh = PATTERNED.fresh_output
    mapping = fresh / (size / rate - size / 20e9)  # the time beyond the traffic's, a byte
    assert PATTERNED.fault_rate == pytest.approx(mapping)
    faulting = Placement(0, 100 * MIB, 1.0, PATTERNED, footprint=100 * MIB, fresh=50 * MIB)
    assert faulting.allowed == pytest.approx(100 * MIB / 20e9 + 50 * MIB / mapping)
    assert Roofs(100e9, 20e9).fault_rate == 0  # not measured: no fresh pages in the roof
    assert Roofs(100e9, 20e9, fresh_output=(MIB, 30e9, 0.0)).fault_rate == 0  # none touched


@pytest.mark.parametrize(
    ("arguments", "output", "temp", "alias", "pattern"),
    [
        (16 * MIB, 8 * 1024, 0, 0, Pattern.READ),  # a sum over rows: a vector out
        (16 * MIB, 16 * MIB, 0, 0, Pattern.NEW_OUTPUT),  # a copy
        (32 * MIB, 16 * MIB, 0, 16 * MIB, Pattern.IN_PLACE),  # donated 2 * x + y
        (16 * MIB, 4, 400 * MIB, 0, Pattern.NEW_OUTPUT),  # a scalar out of a large temporary
    ],
)
def test_the_pattern_is_read_from_the_memory_analysis(arguments, output, temp, alias, pattern):
    from types import SimpleNamespace

    memory = SimpleNamespace(argument_size_in_bytes=arguments, output_size_in_bytes=output,
                             temp_size_in_bytes=temp, alias_size_in_bytes=alias)  # fmt: skip
    assert access_pattern(memory) is pattern


def test_the_roofs_keep_their_streams_through_json():
    again = Roofs.from_json(PATTERNED.as_json())
    assert again == PATTERNED
    assert again.fresh_output == (256 * MIB, 5e9, 85 * MIB)


def test_a_program_near_the_caches_edge_is_held_to_its_size_and_its_row_says_rough():
    """Past half of the caches' extent the stream falls steeply: a program there is held to
    the stream's rate at its size, as any program in a cache, and its row says that rate is
    one rough measurement."""
    near = Placement(0, 6 * MIB, 1e-4, PATTERNED, footprint=6 * MIB)
    inside = Placement(0, 4 * MIB, 1e-4, PATTERNED, footprint=4 * MIB)  # half the extent
    past = Placement(0, 9 * MIB, 1e-4, PATTERNED, footprint=9 * MIB)
    assert (near.near_edge, inside.near_edge, past.near_edge) == (True, False, False)
    assert near.bandwidth == inside.bandwidth == 70e9  # the stream at 8 MiB holds both
    assert PATTERNED.rate_at(MIB // 2) == 90e9
    assert PATTERNED.rate_at(2**40) == PATTERNED.bandwidth  # past the sweep: memory's
    timed = {name: BenchResult((1e-4,) * 3) for name in ("n", "i")}
    n, i = placement_table({"n": near, "i": inside}, timed).splitlines()[2:]
    at_size = f"under the cache roof (at its size, {rate_text(70e9, 'B')}"
    assert f"{at_size}; near their edge: one measurement on a steep fall)" in n
    assert f"{at_size})" in i
    summed = Placement(0, 8 * MIB, 1e-4, PATTERNED, footprint=8 * MIB, pattern=Pattern.READ)
    [row] = placement_table({"s": summed}, {"s": timed["n"]}).splitlines()[2:]
    assert f"(read-only stream at its size, {rate_text(95e9, 'B')}; near their edge" in row


def test_a_program_whose_fresh_pages_take_longer_than_its_traffic_is_under_their_roof():
    """XLA's v1 on 2.8's page maps 396 MB of temporaries a call: its faults, not its bytes,
    set what the roofs allow, and its verdict names that roof, above it or under it."""
    rate = PATTERNED.fault_rate
    traffic = 100 * MIB / PATTERNED.bandwidth  # 5.2 ms at 20 GB/s
    fresh = rate * traffic * 2
    faulting = Placement(0, 100 * MIB, 4 * traffic, PATTERNED, footprint=100 * MIB, fresh=fresh)
    assert faulting.faulting == pytest.approx(2 * traffic)
    assert faulting.allowed == pytest.approx(3 * traffic)
    assert faulting.bound is Bound.FRESH_PAGES
    fast = dataclasses.replace(faulting, seconds=2 * traffic)  # beat the rate of mapping pages
    assert fast.position == "above the fresh-page roof"
    few = dataclasses.replace(faulting, fresh=rate * traffic / 2)  # the traffic takes longer
    assert few.bound is Bound.MEMORY


def test_a_reading_program_in_a_cache_only_the_read_only_stream_found_is_held_there():
    """2.4's 16 MB sums on a build whose in-place stream fell at 8 MiB while the read-only
    stream still ran 2.3 times its memory rate at 16 MiB: a cache held them."""
    roofs = Roofs(
        100e9, 46e9, (Level("the caches", 110e9, 8 * MIB),),
        ((8 * MIB, 100e9), (16 * MIB, 48e9), (128 * MIB, 46e9), (256 * MIB, 46e9),
         (512 * MIB, 45e9)),
        read_sweep=((16 * MIB, 69e9), (128 * MIB, 30e9), (256 * MIB, 28e9), (512 * MIB, 30e9)),
    )  # fmt: skip
    summed = Placement(0, 16e6, 16e6 / 47.8e9, roofs, footprint=16e6, pattern=Pattern.READ)
    assert roofs.read_cached(16e6)
    assert not roofs.fits_cache(16e6)  # the in-place stream found no cache that large
    assert (summed.in_cache, summed.stream, summed.bandwidth) == (True, Pattern.READ, 69e9)
    assert summed.bound is Bound.CACHE
    [row] = placement_table({"s": summed}, {"s": BenchResult((summed.seconds,) * 3)}).splitlines()[
        2:
    ]
    assert (
        f"under the cache roof (read-only stream at its size, {rate_text(69e9, 'B')}), 69%" in row
    )
    large = Placement(0, 144e6, 144e6 / 25e9, roofs, footprint=144e6, pattern=Pattern.READ)
    reads = 46e9 * 2 / 3  # the in-place stream's reads, faster than the reductions' 30
    assert (large.in_cache, large.bandwidth) == (False, pytest.approx(reads))
    [row] = placement_table({"l": large}, {"l": BenchResult((1.0,) * 3)}).splitlines()[2:]
    held = f"in-place stream's reads, {rate_text(reads, 'B')}"
    assert f"({held}; the read-only stream reached {rate_text(30e9, 'B')}), 82%" in row
    # a cache is found from the smallest size up, against memory's roof for reading
    slow_start = dataclasses.replace(roofs, read_sweep=((16 * MIB, 40e9), *roofs.read_sweep[1:]))
    assert not slow_start.read_cached(16e6)  # 40 is under 1.5 times 30.7
    reading = Placement(0, 16e6, 1.0, slow_start, footprint=16e6, pattern=Pattern.READ)
    # not in a cache: main memory's rate of reading, not the one rough point at its size
    assert (reading.in_cache, reading.bandwidth) == (False, pytest.approx(reads))
    assert slow_start.roof_name(16e6, Pattern.READ) == "in-place stream's reads"
    gap = dataclasses.replace(
        roofs, read_sweep=((16 * MIB, 40e9), (32 * MIB, 90e9), *roofs.read_sweep[1:])
    )
    assert not gap.read_cached(30e6)  # past a size that found no cache
    copy = Placement(0, 16e6, 1.0, roofs, footprint=16e6)  # it writes: the in-place stream's
    assert (copy.in_cache, copy.bandwidth) == (False, 46e9)
