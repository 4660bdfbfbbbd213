"""Compile exp(log(x) + y) on two 1000 x 1000 arrays and print one JSON line about it.

    python -m chapter2.examples.fusion_probe
    XLA_FLAGS=--xla_disable_hlo_passes=fusion python -m chapter2.examples.fusion_probe

The JSON line holds the fusion and kernel counts and the ENTRY instructions of the optimized
HLO (a kernel: an ENTRY instruction that computes, fused or not), XLA's
`bytes accessed` and temporary buffer size, and the seconds each of 30 timed calls took. XLA reads
XLA_FLAGS once, when this process starts, so the unfused run needs a process of its own.
"""

import json
import os

import jax
import jax.numpy as jnp

from chapter2.hlo import clean_hlo, count_fusions, entry_computation, kernels
from chapter2.timing import bench


def simple_computation(x, y):
    return jnp.exp(jnp.log(x) + y)


def main() -> None:
    kx, ky = jax.random.split(jax.random.key(0))
    x = jax.random.uniform(kx, (1000, 1000))
    y = jax.random.uniform(ky, (1000, 1000))
    compiled = jax.jit(simple_computation).lower(x, y).compile()
    costs = compiled.cost_analysis()
    costs = costs[0] if isinstance(costs, list) else costs  # a list of one dict in older JAX
    hlo = compiled.as_text()
    entry = entry_computation(clean_hlo(hlo)).splitlines()[1:-1]
    record = {
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "fusions": count_fusions(hlo),
        "kernels": len(kernels(hlo)),
        "entry": [line.strip() for line in entry],
        "bytes_accessed": costs["bytes accessed"],
        "temp_bytes": compiled.memory_analysis().temp_size_in_bytes,
        "times": bench(jax.jit(simple_computation), x, y, n=30).times,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
