"""Case study of the page cpu-case-study: products followed by sums that XLA's CPU backend
hands to the YNNPACK library (a fusion of kind=kCustom, "__ynn_fusion").

The program of jax-ml/jax#39103 (a vmapped matrix-vector product, squared and summed, over
32,769 rows), which `jit` got wrong under one jaxlib release while eager execution got it
right.
"""

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.hlo import (
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
