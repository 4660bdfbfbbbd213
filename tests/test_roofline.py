"""chapter2.roofline: the verdicts a placement gives, the roofs a build shares, and the hand
counts that stand in for a cost analysis the book does not have."""

import json

import jax
import pytest

from chapter2.cases import distances as dist
from chapter2.roofline import (
    FAR_UNDER,
    NEAR_RIDGE,
    ROOFS_VARIABLE,
    Bound,
    Placement,
    Roofs,
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
    assert placed(0.1, 0.019).verdict == "far under both roofs (1.9% of what the roofs allow)"


def test_rates_read_with_three_digits_and_a_prefix():
    assert rate_text(131.4e9, "FLOP") == "131 GFLOP/s"
    assert rate_text(29.84e9, "B") == "29.8 GB/s"
    assert rate_text(4.8e12, "B") == "4.80 TB/s"
    assert rate_text(825e6, "FLOP") == "825 MFLOP/s"


CACHED = Roofs(100e9, 25e9, cache_bytes=32 * 2**20, cache_bandwidth=50e9, cache_stream_bytes=2**24)


@pytest.mark.parametrize(
    ("nbytes", "bandwidth", "bound"),
    [
        (2**24, 50e9, Bound.CACHE),  # as many bytes as the in-cache stream's arrays
        (2**24 + 1, 25e9, Bound.MEMORY),
    ],
)
def test_a_program_whose_bytes_fit_the_cache_is_placed_under_the_cache_roof(
    nbytes, bandwidth, bound
):
    program = Placement(flops=0.1 * nbytes, bytes=nbytes, seconds=1e-3, roofs=CACHED)
    # its arrays, not its traffic, must fit
    many_passes = Placement(0.1 * nbytes, 10 * nbytes, 1e-3, CACHED, footprint=nbytes)
    assert many_passes.in_cache == (bound is Bound.CACHE)
    assert program.bandwidth == bandwidth
    assert program.ridge == pytest.approx(100e9 / bandwidth)
    assert program.allowed == pytest.approx(nbytes / bandwidth)
    assert program.bound is bound


def test_the_cache_roof_is_never_below_memory_and_absent_without_a_cache_stream():
    slow = Roofs(100e9, 25e9, cache_bandwidth=20e9, cache_stream_bytes=2**24)
    assert Placement(1e6, 1e6, 1.0, slow).bandwidth == 25e9
    assert not Roofs(100e9, 25e9, cache_stream_bytes=2**24).fits_cache(1e6)
    assert CACHED.fits_cache(1e6)
    # a program of 2 flops per byte in the cache sits on the cache's ridge, half memory's
    assert Placement(2e6, 1e6, 1.0, CACHED).bound is Bound.FAR_UNDER
    assert Placement(2e6, 1e6, 2e6 / 100e9, CACHED).bound is Bound.RIDGE


def test_the_stream_is_past_the_cache_only_at_twice_its_size():
    mib = 2**20
    assert Roofs(1, 1, stream_bytes=128 * mib, cache_bytes=32 * mib).past_cache
    assert not Roofs(1, 1, stream_bytes=1024 * mib, cache_bytes=480 * mib * 2).past_cache
    assert Roofs(1, 1, stream_bytes=1024 * mib, cache_bytes=None).past_cache


def test_pages_read_the_roofs_the_build_measured(tmp_path, monkeypatch):
    shared = tmp_path / "roofs.json"
    shared.write_text(Roofs(1.5e11, 3e10, 2**27, 2**25, 2, 6e10, 2**24).as_json())
    monkeypatch.setenv(ROOFS_VARIABLE, str(shared))
    assert machine_roofs() == Roofs(1.5e11, 3e10, 2**27, 2**25, 2, 6e10, 2**24)
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
    ("cache_mib", "said"),
    [
        (32, "a longer call pays little for its neighbour"),
        (480, "here a call just over that still pays for its neighbour's misses"),
    ],
)
def test_the_settle_rule_says_what_it_costs_for_the_cache_this_machine_has(cache_mib, said):
    note = refill_note(cache_mib * 2**20, 30e9)
    assert note.startswith(f"refilling this machine's {cache_mib} MiB last-level cache")
    assert note.endswith(said)


def test_without_a_cache_size_the_settle_rule_estimates_nothing():
    assert "not estimated" in refill_note(None, 30e9)
