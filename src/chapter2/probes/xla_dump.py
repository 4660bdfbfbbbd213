"""Dump XLA's HLO before and after optimization for exp(log(x) + y), and print one JSON line.

    XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text" python -m chapter2.probes.xla_dump
    python -m chapter2.probes.xla_dump DIR   # sets that XLA_FLAGS itself, before importing jax

XLA reads XLA_FLAGS once, when the process starts, so the flags must be in place before the
first computation. The JSON line lists the dumped names of the jit_simple_computation module
(relative to DIR), the number of files dumped in all, the fusion count of the HLO before and
after optimization, and the ENTRY computation of each (without source locations).
"""

import json
import os
import re
import sys
import tempfile
from pathlib import Path

MODULE = "jit_simple_computation"


def dump_folder(argv: list[str]) -> Path:
    """The folder XLA_FLAGS dumps into; set the flags first if they ask for no dump."""
    flags = os.environ.get("XLA_FLAGS", "")
    found = re.search(r"--xla_dump_to=(\S+)", flags)
    if found:
        return Path(found.group(1))
    folder = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp(prefix="xla_dump_"))
    os.environ["XLA_FLAGS"] = f"{flags} --xla_dump_to={folder} --xla_dump_hlo_as_text".strip()
    return folder


def main(argv: list[str]) -> None:
    folder = dump_folder(argv)

    # imported only now: XLA must see the flags at start-up
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415

    from chapter2.hlo import clean_hlo, count_fusions, entry_computation  # noqa: PLC0415

    def simple_computation(x, y):
        return jnp.exp(jnp.log(x) + y)

    x = jnp.ones((1000, 1000))
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
