"""Claims of the page `memory-layout`: row-major arrays, transposes, donation, NumPy input."""

import jax.numpy as jnp

from chapter2.claims.backends import CPU_COMPILER_TEXT
from chapter2.claims.registry import Observation, claim
from chapter2.compat import major_to_minor
from chapter2.hlo import (
    clean_hlo,
    compiled_text,
    entry_layout,
    fused_body,
    fusion_kinds,
    has_op,
    input_output_alias,
    opcodes,
    root_opcode,
)


def _optimized(fn, *args, **jit_kwargs) -> str:
    return clean_hlo(compiled_text(fn, *args, **jit_kwargs))


@claim("row-major-default")
def _row_major_default() -> Observation:
    x = jnp.ones((6, 4), jnp.float32)
    return Observation(
        expected={
            "major_to_minor": [0, 1],
            "entry_computation_layout": "(f32[6,4]{1,0})->f32[6,4]{1,0}",
        },
        observed={
            "major_to_minor": list(major_to_minor(x)),
            "entry_computation_layout": entry_layout(compiled_text(lambda t: t * 2.0, x)),
        },
    )


@claim("transpose-materialized", only_on=CPU_COMPILER_TEXT)
def _transpose_materialized() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    alone = _optimized(lambda t: t.T, a)
    chained = _optimized(lambda t: t.T * 2 + 1, a)
    chained_body = opcodes(fused_body(chained))
    order = [op for op in chained_body if op in ("multiply", "add", "transpose")]
    return Observation(
        expected={
            "a.T fusions": ["kLoop"],
            "a.T fused body": ["parameter", "transpose", "copy"],
            "a.T * 2 + 1 fusions": ["kLoop"],
            "order inside it": ["multiply", "add", "transpose"],
            "it ends with": ["transpose", "copy"],
        },
        observed={
            "a.T fusions": fusion_kinds(alone),
            "a.T fused body": opcodes(fused_body(alone)),
            "a.T * 2 + 1 fusions": fusion_kinds(chained),
            "order inside it": order,
            "it ends with": chained_body[-2:],
        },
    )


@claim(
    "transpose-absorbed",
    expected_on={
        "gpu": (
            {"dot contracts lhs dimension 0": False},
            "the GPU's optimized HLO shows no lhs_contracting_dims={0}: the product goes to "
            "the GPU's matrix library with operand layouts XLA chooses; no transpose "
            "instruction is left either",
        )
    },
)
def _transpose_absorbed() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    b = jnp.ones((256, 64), jnp.float32)
    matmul = _optimized(lambda s, t: s.T @ t, a, b)
    double = _optimized(lambda t: t.T.T, a)
    return Observation(
        expected={
            "a.T @ b has a transpose": False,
            "dot contracts lhs dimension 0": True,
            "a.T.T has a transpose": False,
            "a.T.T compiles to": "copy",
        },
        observed={
            "a.T @ b has a transpose": has_op(matmul, "transpose"),
            "dot contracts lhs dimension 0": "lhs_contracting_dims={0}" in matmul,
            "a.T.T has a transpose": has_op(double, "transpose"),
            "a.T.T compiles to": root_opcode(double),
        },
    )


@claim("donation-removes-copy")
def _donation() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    kept = compiled_text(lambda t: t.T.T, a)
    donated = compiled_text(lambda t: t.T.T, a, donate_argnums=0)
    return Observation(
        expected={
            "ROOT without donation": "copy",
            "ROOT with donation": "parameter",
            "input_output_alias with donation": "{}: (0, {}, may-alias)",
        },
        observed={
            "ROOT without donation": root_opcode(clean_hlo(kept)),
            "ROOT with donation": root_opcode(clean_hlo(donated)),
            "input_output_alias with donation": input_output_alias(donated),
        },
    )
