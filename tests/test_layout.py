"""Tests of chapter2.layout: aligned buffers, shared buffers, fresh pages."""

import mmap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from chapter2 import layout


def test_the_cost_of_fresh_pages_is_the_first_write_less_the_second(monkeypatch):
    """A clock that moves 3 s over the first fill (faults and writes) and 1 s over the
    second (writes alone): the faults cost the 2 s between."""
    ticks = iter([0.0, 3.0, 3.0, 4.0])
    monkeypatch.setattr(layout.time, "perf_counter", lambda: next(ticks))
    assert layout.fault_in_seconds(4096) == pytest.approx(2.0)


@pytest.mark.parametrize("align", [16, 64, 128, 4096])
def test_aligned_and_misaligned_buffers(align):
    a = layout.aligned_empty((7, 5), np.float32, align)
    assert a.shape == (7, 5)
    assert a.dtype == np.float32
    assert a.flags.c_contiguous
    assert layout.misalignment(a, align) == 0
    b = layout.misaligned_empty((7, 5), np.float32, align, by=8)
    assert b.shape == (7, 5)
    assert b.flags.c_contiguous
    assert layout.misalignment(b, align) == 8


def test_shares_buffer():
    a = layout.aligned_empty((64, 64))
    a[...] = 1.0
    copied = jnp.array(a)  # jnp.array copies by default
    assert not layout.shares_buffer(copied, a)
    assert layout.shares_buffer(copied, np.asarray(copied))  # NumPy view of a CPU jax.Array
    assert np.array_equal(np.asarray(jax.device_put(a)), a)


@pytest.mark.parametrize(
    ("cache_mib", "side", "said"),
    [
        (
            16,
            6000,
            "Past the caches, the sums run again at 6,000 × 6,000, 144 MB, 8.6 times their edge.",
        ),
        (
            32,
            9000,
            "Past the caches, the sums run again at 9,000 × 9,000, 324 MB, 9.7 times their edge.",
        ),
        (64, None, "The stream measured caches up to 64 MiB here, too large"),
        (480, None, "The stream measured caches up to 480 MiB here, too large"),
        (None, None, "The stream measured no cache faster than memory here"),
    ],
)
def test_a_page_times_past_the_caches_only_where_they_can_be_left(cache_mib, side, said):
    from chapter2.layout import past_cache_words, side_past_cache

    cache = cache_mib and cache_mib * 2**20
    found = side_past_cache(cache)
    assert found == side
    assert past_cache_words(cache, found).startswith(said)
    if found:
        assert 4 * found**2 >= 8 * cache
        # where the roofs take main memory's rate from larger sizes, the matrix is as large
        memory_from = 128 * 2**20
        assert 4 * side_past_cache(cache, memory_from) ** 2 >= max(8 * cache, memory_from)


def test_a_matrix_past_the_caches_is_as_large_as_the_sizes_memorys_roof_comes_from():
    from chapter2.layout import side_past_cache

    assert side_past_cache(4 * 2**20) == 3000  # eight times a 4 MiB edge: 36 MB
    assert side_past_cache(4 * 2**20, 128 * 2**20) == 6000  # 144 MB, past the 128 MiB size


def touch_fresh_pages(nbytes: int = 16 * 2**20) -> None:
    """Map `nbytes` anew and write every page of it, then unmap it."""
    block = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for offset in range(0, nbytes, mmap.PAGESIZE):
        block[offset] = 1
    block.close()


def test_a_call_that_maps_fresh_memory_is_charged_its_pages():
    fresh = layout.call_cost(touch_fresh_pages, calls=2)
    reused = layout.call_cost(lambda: np.ones(1024), calls=2)
    assert fresh.fresh_bytes >= 0.9 * 16 * 2**20
    assert reused.fresh_bytes < 2**20
    assert fresh.seconds > 0


def test_calls_in_turns_are_charged_their_own_fresh_pages():
    found = layout.fresh_in_turns(
        {"maps": (touch_fresh_pages, ()), "reuses": (lambda: np.ones(1024), ())}, rounds=2
    )
    assert found["maps"] >= 0.9 * 16 * 2**20
    assert found["reuses"] < 2**20


@pytest.mark.parametrize(
    ("system", "own", "said"),
    [(0.05, 0.01, "page faults, not the order"), (0.01, 0.05, "timed with the order")],
)
def test_the_untimed_copies_are_explained_by_their_own_faults(system, own, said):
    copy = layout.CallCost(0.06, 100e6, system, own)
    words = layout.past_cache_words(16 * 2**20, 5000, copy)
    assert "touched 100 MB of fresh pages a call" in words
    assert said in words
    assert "glibc" not in layout.past_cache_words(16 * 2**20, 5000, layout.CallCost(0, 0, 0, 0))
