"""The persistent compilation cache in a fresh process; print one JSON line.

    python -m chapter2.probes.persistent_cache CACHE_DIR
    python -m chapter2.probes.persistent_cache --late FIRST_DIR SECOND_DIR

With CACHE_DIR, the folder is set before the first compilation and the thresholds are
lowered so that even a small model is written to disk; the JSON line holds the compile time,
the cache messages JAX logged for `jit_model` (a miss or a hit) and the files in CACHE_DIR.

With --late, the folder is set only after a first compilation (`before`), then changed to
SECOND_DIR after another (`after_setting`) and a third (`after_changing`), and the cache is
reset before a last one (`after_reset`); the JSON line lists the functions each folder holds.
"""

import json
import logging
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
from jax.experimental.compilation_cache import compilation_cache


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


def write_everything() -> None:
    """Lower both thresholds, so that every compilation is written."""
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


def across_processes(cache_dir: Path) -> dict:
    jax.config.update("jax_compilation_cache_dir", str(cache_dir))
    write_everything()
    collect = Collect()
    logger = logging.getLogger("jax")
    logger.setLevel(logging.DEBUG)  # the compiler logs cache hits and misses at DEBUG
    logger.addHandler(collect)
    start = time.perf_counter()
    jax.jit(model).lower(jnp.ones((64, 64))).compile()
    seconds = time.perf_counter() - start
    logger.removeHandler(collect)
    return {
        "compile_seconds": seconds,
        "cache_messages": [
            m for m in collect.messages if "jit_model" in m and "cache" in m.lower()
        ],
        "files": sorted(p.name for p in cache_dir.iterdir()),
    }


def cached_functions(folder: Path) -> list[str]:
    """The functions of this probe a cache folder holds, from its `jit_<name>-<key>` files."""
    names = {p.name.split("-")[0].removeprefix("jit_") for p in folder.iterdir()}
    return sorted(names & {"before", "after_setting", "after_changing", "after_reset"})


def late(first: Path, second: Path) -> dict:
    write_everything()
    x = jnp.ones((8, 8))

    def compiled(name: str) -> None:
        fn = lambda v: jnp.tanh(v) * 2.0  # noqa: E731 - named below, as its cache file is
        fn.__name__ = name
        jax.jit(fn).lower(x).compile()

    compiled("before")
    jax.config.update("jax_compilation_cache_dir", str(first))
    compiled("after_setting")
    jax.config.update("jax_compilation_cache_dir", str(second))
    compiled("after_changing")
    compilation_cache.reset_cache()
    compiled("after_reset")
    return {"first folder": cached_functions(first), "second folder": cached_functions(second)}


def main(argv: list[str]) -> None:
    if argv[1] == "--late":
        record = late(Path(argv[2]), Path(argv[3]))
    else:
        record = across_processes(Path(argv[1]))
    print(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv)
