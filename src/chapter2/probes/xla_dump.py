"""Dump XLA's HLO before and after optimization for exp(log(x) + y), and print one JSON line.

    python -m chapter2.probes.xla_dump DIR

JAX is imported first; then XLA_FLAGS is set to dump into DIR, before the first computation.
That is early enough: XLA reads the variable once, when JAX starts its backend at the first
computation, not when the process or `import jax` starts. The JSON line lists the dumped
names of the jit_simple_computation module (relative to DIR), the number of files dumped
in all, the fusion count of the HLO before and after optimization, and the ENTRY
computation of each (without source locations).
"""

import json
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

from chapter2.hlo import clean_hlo, count_fusions, entry_computation

MODULE = "jit_simple_computation"


def simple_computation(x, y):
    return jnp.exp(jnp.log(x) + y)


def main(argv: list[str]) -> None:
    folder = Path(argv[1])
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_dump_to={folder} --xla_dump_hlo_as_text".strip()
    x = jnp.ones((1000, 1000))  # the first computation: the backend starts, and reads the flags
    total = float(jax.jit(simple_computation)(x, x).sum())

    mine = list(folder.glob(f"*{MODULE}*"))  # the module's files and its sub-folder
    mine += [p for d in mine if d.is_dir() for p in d.iterdir()]
    names = [p.relative_to(folder).as_posix() + ("/" if p.is_dir() else "") for p in mine]
    before = next(folder.glob(f"*{MODULE}.before_optimizations.txt")).read_text()
    after = next(folder.glob(f"*{MODULE}.cpu_after_optimizations.txt")).read_text()
    record = {
        "jax": jax.__version__,
        "result": total,
        "total_files": sum(1 for p in folder.rglob("*") if p.is_file()),
        "files": sorted(set(names)),
        "fusions_before": count_fusions(before),
        "fusions_after": count_fusions(after),
        "entry_before": entry_computation(clean_hlo(before)),
        "entry_after": entry_computation(clean_hlo(after)),
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv)
