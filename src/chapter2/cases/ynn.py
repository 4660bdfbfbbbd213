"""Case study of the page cpu-case-study: products followed by sums that XLA's CPU backend
hands to the YNNPACK library (a fusion of kind=kCustom, "__ynn_fusion").

Two programs: the one of jax-ml/jax#39103 (a vmapped matrix-vector product, squared and
summed, over 32,769 rows), which `jit` got wrong under one jaxlib release while eager
execution got it right; and a neighbour under suspicion, `jnp.sum(W_const @ x)` with a
captured n x n matrix, whose result and compiled form this module reads.
"""

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.hlo import (
    called_computation,
    clean_hlo,
    dot_operands,
    entry_computation,
    fused_body,
    fusion_kinds,
    kernels,
)

# Compiler options that hand no fusion to YNNPACK, for one compilation (XLA_FLAGS takes the
# same option, --xla_cpu_experimental_ynn_fusion_type=, for every compilation of a process).
YNN_OFF = {"xla_cpu_experimental_ynn_fusion_type": ""}
REPORTED_ROWS = 32_769  # the float32 size of jax-ml/jax#39103


def reported_input(rows: int = REPORTED_ROWS) -> jax.Array:
    """The report's input: float32 rows (i, 0, 0) for i = 0 ... rows - 1."""
    i = jnp.arange(rows, dtype=jnp.float32)
    return jnp.stack([i, jnp.zeros_like(i), jnp.zeros_like(i)], axis=1)


def squared_norms(x, matrix):
    """The report's program: ||matrix @ row||^2 for every row of x, under vmap."""
    return jax.vmap(lambda row: jnp.sum((matrix @ row) ** 2))(x)


def uses_ynn(hlo: str) -> bool:
    """Whether optimized HLO hands a fusion to YNNPACK."""
    return '"kind":"__ynn_fusion"' in hlo


def rows_that_differ(a, b) -> list[int]:
    """The indices of the rows where two results differ."""
    return [int(i) for i in np.flatnonzero(np.asarray(a) != np.asarray(b))]


def jit_against_eager(rows: int = REPORTED_ROWS) -> dict:
    """The report's program run eager and under jit, with the identity captured as a
    constant, passed as an argument, and compiled with YNNPACK fusion off."""
    x, matrix = reported_input(rows), jnp.eye(3, dtype=jnp.float32)
    closure = jax.jit(lambda x: squared_norms(x, matrix))
    eager = squared_norms(x, matrix)
    compiled = closure.lower(x).compile()
    jitted = compiled(x)
    differ = rows_that_differ(jitted, eager)
    found = {
        "rows where jit and eager differ": len(differ),
        "first row that differs": differ[0] if differ else None,
        "last row, eager": float(eager[-1]),
        "last row, jit": float(jitted[-1]),
        "rows that differ with the matrix as an argument": len(
            rows_that_differ(jax.jit(squared_norms)(x, matrix), eager)
        ),
        "jit's program is a __ynn_fusion": uses_ynn(compiled.as_text()),
    }
    if found["jit's program is a __ynn_fusion"]:  # older XLA has none, and rejects the option
        off = closure.lower(x).compile(compiler_options=YNN_OFF)
        found["rows that differ with YNNPACK fusion off"] = len(rows_that_differ(off(x), eager))
        found["fusions with YNNPACK fusion off"] = fusion_kinds(off.as_text())
        found["__ynn_fusion with YNNPACK fusion off"] = uses_ynn(off.as_text())
        found["kernels with YNNPACK fusion off"] = list(kernels(off.as_text()).values())
    return found


# --- the neighbour under suspicion: jnp.sum(W_const @ x) with a captured n x n matrix -----

SIZES = (32, 48, 63, 64, 96, 128)


def tolerance(n: int) -> float:
    """How far a right float32 sum(W @ X) may be from float64 for n x n standard normals:
    0.01 at n = 128 (the rounding seen there is ~1e-4), growing with the n*n terms."""
    return 1e-2 * max(1.0, (n / 128) ** 2)


def operands(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The weight W and the input X: two n x n float32 matrices of standard normals."""
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((n, n)).astype(np.float32),
        rng.standard_normal((n, n)).astype(np.float32),
    )


def ynn_fusion_body(hlo: str) -> str | None:
    """The body of the ENTRY's __ynn_fusion in cleaned optimized HLO, or None if there is none."""
    for line in entry_computation(hlo).splitlines():
        if uses_ynn(line):
            return fused_body(hlo, called_computation(line))
    return None


@dataclass(frozen=True)
class Probe:
    """sum(W @ X) at one size: the closure's result, the float64 one, and its compiled form."""

    n: int
    closure: float  # W captured by the jitted closure
    reference: float  # NumPy in float64
    fusion_kinds: tuple[str, ...]  # the kind of every fusion (kCustom for a __ynn_fusion)
    dot_operands: tuple[str, str]  # what feeds the dot inside the YNN fusion (or the ENTRY)

    @property
    def wrong(self) -> bool:
        return not abs(self.closure - self.reference) <= tolerance(self.n)  # NaN is wrong


def probe(n: int) -> Probe:
    """Run the closure version at size n, compare with float64, and read its optimized HLO."""
    w, x = operands(n)
    w_const, xj = jnp.asarray(w), jnp.asarray(x)
    closure = jax.jit(lambda x: jnp.sum(w_const @ x))
    hlo = clean_hlo(closure.lower(xj).compile().as_text())
    body = ynn_fusion_body(hlo)
    return Probe(
        n=n,
        closure=float(closure(xj)),
        reference=float(np.sum(w.astype(np.float64) @ x.astype(np.float64))),
        fusion_kinds=tuple(fusion_kinds(hlo)),
        dot_operands=dot_operands(body if body is not None else entry_computation(hlo)),
    )
