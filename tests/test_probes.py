"""The probes of chapter2.probes, run in a fresh interpreter as the pages run them."""

import json

from chapter2.fresh import run_probe


def test_xla_dump_sets_the_flags_after_importing_jax_and_still_dumps(tmp_path):
    record = json.loads(run_probe("xla_dump", str(tmp_path)))
    files = record["files"]
    assert any(f.endswith("jit_simple_computation.before_optimizations.txt") for f in files)
    assert any(f.endswith("jit_simple_computation.cpu_after_optimizations.txt") for f in files)
    assert all(not f.startswith("/") and str(tmp_path) not in f for f in files)  # relative names
    assert (record["fusions_before"], record["fusions_after"]) == (0, 1)
    assert record["entry_after"].startswith("ENTRY")
    assert "kind=kLoop" in record["entry_after"]
    assert record["total_files"] >= len([f for f in files if not f.endswith("/")])


def test_persistent_cache_misses_then_hits_in_a_second_process(tmp_path):
    first = json.loads(run_probe("persistent_cache", str(tmp_path)))
    second = json.loads(run_probe("persistent_cache", str(tmp_path)))
    assert any("CACHE MISS for 'jit_model'" in m for m in first["cache_messages"])
    assert any("cache hit for 'jit_model'" in m for m in second["cache_messages"])
    assert any(f.startswith("jit_model-") for f in second["files"])
    assert first["compile_seconds"] > 0
    assert second["compile_seconds"] > 0


def test_roofs_are_measured_on_the_cpu_by_a_stream_over_working_sets():
    from chapter2.environment import last_level_cache
    from chapter2.roofline import PATTERNS_FROM, SWEEP, Roofs, levels_of

    roofs = Roofs.from_json(run_probe("roofs", env={"JAX_PLATFORMS": "cpu"}))
    assert [size for size, _ in roofs.sweep] == list(SWEEP)
    assert (roofs.bandwidth, roofs.caches) == levels_of(list(roofs.sweep))
    assert roofs.reported_cache == last_level_cache()  # printed beside, never placed under
    assert 1e9 < roofs.peak < 1e14  # between a GFLOP/s and a hundred TFLOP/s
    assert 1e8 < roofs.bandwidth < 1e13
    patterned = [size for size in SWEEP if size >= PATTERNS_FROM]
    assert [size for size, _ in roofs.read_sweep] == patterned  # x and y, read
    assert all(1e8 < rate < 1e13 for _, rate in roofs.read_sweep)
    # into a new array over the largest x and y: glibc maps so large an output afresh each call
    moved, rate, fresh = roofs.fresh_output
    assert moved == 3 * SWEEP[-1] // 2  # read x and y, write the output
    assert 1e8 < rate < 1e13
    assert fresh >= 0.9 * SWEEP[-1] / 2  # every page of its output
    assert roofs.fault_rate > 0
