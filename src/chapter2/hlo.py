"""Reading what XLA compiles: lowered and optimized HLO text, fusions and their bodies."""

import re
from collections.abc import Callable

import jax

_LOCATION_TABLES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_TABLE_ROW = re.compile(r"^\d+ ")
_METADATA = re.compile(r", metadata=\{[^}]*\}")


def lowered_text(f: Callable, *args, **jit_kwargs) -> str:
    """StableHLO of `jit(f)` for `args`: what JAX hands to XLA."""
    return jax.jit(f, **jit_kwargs).lower(*args).as_text()


def compiled_text(f: Callable, *args, **jit_kwargs) -> str:
    """Optimized HLO of `jit(f)` for `args`: what XLA made of it."""
    return jax.jit(f, **jit_kwargs).lower(*args).compile().as_text()


def clean_hlo(text: str) -> str:
    """HLO without its source-location tables, metadata and blank lines."""
    kept = []
    in_table = False
    for line in text.splitlines():
        if _LOCATION_TABLES.match(line):
            in_table = True
            continue
        if not line.strip() or (in_table and _TABLE_ROW.match(line)):
            continue
        in_table = False
        kept.append(_METADATA.sub("", line))
    return "\n".join(kept)


def count_fusions(text: str) -> int:
    """How many fusion instructions (fused kernels) the HLO text holds."""
    return len(re.findall(r" fusion\(", text))


def fusion_kinds(text: str) -> list[str]:
    """The kind of every fusion instruction, in order (kLoop, kInput, kOutput, kCustom)."""
    return re.findall(r" fusion\(.*?kind=(\w+)", text)


def entry_computation(text: str) -> str:
    """The ENTRY computation of (cleaned) HLO text, from its header to its closing brace."""
    start = text.index("\nENTRY") + 1
    return text[start : text.index("\n}", start) + 2]


def entry_root(text: str) -> str:
    """The ROOT instruction of the ENTRY computation, stripped."""
    return next(line.strip() for line in entry_computation(text).splitlines() if "ROOT " in line)


def fused_body(text: str, name: str = "fused_computation") -> str:
    """The body of the fused computation called `name` (the first one by default)."""
    start = text.index(f"%{name} ")
    return text[start : text.index("\n}", start) + 2]
