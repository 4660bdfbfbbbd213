"""Compile a small model with the persistent compilation cache on; print one JSON line.

    python -m chapter2.probes.persistent_cache CACHE_DIR

The cache folder is set before the first compilation, and the thresholds are lowered so
that even this small model is written to disk. The JSON line holds the compile time, the
cache messages JAX logged for `jit_model` (a miss or a hit), and the files in CACHE_DIR.
"""

import json
import logging
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp


def model(x):
    for _ in range(20):
        x = jnp.tanh(x @ x) + 0.1
    return x


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main(argv: list[str]) -> None:
    cache_dir = Path(argv[1])
    jax.config.update("jax_compilation_cache_dir", str(cache_dir))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    collect = Collect()
    logger = logging.getLogger("jax._src.compiler")
    logger.setLevel(logging.DEBUG)  # the compiler logs cache hits and misses at DEBUG
    logger.addHandler(collect)
    start = time.perf_counter()
    jax.jit(model).lower(jnp.ones((64, 64))).compile()
    seconds = time.perf_counter() - start
    record = {
        "compile_seconds": seconds,
        "cache_messages": [
            m for m in collect.messages if "jit_model" in m and "cache" in m.lower()
        ],
        "files": sorted(p.name for p in cache_dir.iterdir()),
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv)
