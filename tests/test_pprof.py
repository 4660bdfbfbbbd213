"""Reading a device memory profile: live buffers, their bytes and who allocated them."""

import gzip

import jax
import jax.numpy as jnp

from chapter2.pprof import buffer_bytes, read_profile


def allocate_a_block():
    return jnp.ones((500, 1000), jnp.float32)


def test_a_new_buffer_adds_its_bytes_under_the_function_that_made_it():
    before = read_profile(jax.profiler.device_memory_profile())
    block = allocate_a_block().block_until_ready()
    after = read_profile(jax.profiler.device_memory_profile())
    assert buffer_bytes(after) - buffer_bytes(before) == 2_000_000
    mine = [a for a in after if "allocate_a_block" in a.stack]
    assert [(a.kind, a.bytes) for a in mine if a.kind == "buffer"] == [("buffer", 2_000_000)]
    assert all(a.kind in {"buffer", "executable"} for a in after)
    del block


def test_an_empty_profile_has_no_samples():
    assert read_profile(gzip.compress(b"")) == []
