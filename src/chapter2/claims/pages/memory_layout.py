"""Claims of the page `memory-layout`: row-major arrays, transposes, donation, NumPy input."""

import jax
import jax.numpy as jnp

from chapter2.claims.backends import CPU_COMPILER_TEXT
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.compat import cost_analysis, major_to_minor
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


def _fusions(kinds: list[str]) -> str:
    """Fusions in words: "1 fusion, of kind kLoop"."""
    return counted(len(kinds), "fusion") + (
        f", of kind {listed(kinds, 'nothing')}" if kinds else ""
    )


def _with(yes: bool) -> str:
    return "with" if yes else "without"


@claim(
    "row-major-default",
    checks="That a 6 × 4 float32 array's `format.layout.major_to_minor` is (0, 1), and that a "
    "jitted `t * 2.0` on it has the entry layout `(f32[6,4]{1,0})->f32[6,4]{1,0}`.",
    unchecked="That NumPy's default is row-major too is NumPy's; the 2000 × 2000 example's "
    "layout is the cell's printout above.",
    expected_on={
        "tpu": (
            {
                "major_to_minor": [1, 0],
                "entry_computation_layout": "(f32[6,4]{0,1:T(4,128)})->f32[6,4]{0,1:T(4,128)}",
            },
            (
                "XLA's TPU backend chooses each array's layout from its shape, in tiles: a 6 × "
                "4 array gets its first dimension minor, in tiles of 4 × 128, while a 1024 × "
                "1024 one is row-major in tiles of 8 × 128"
            ),
        )
    },
)
def _row_major_default() -> Observation:
    x = jnp.ones((6, 4), jnp.float32)
    order = list(major_to_minor(x))
    layout = entry_layout(compiled_text(lambda t: t * 2.0, x))
    return Observation(
        expected={
            "major_to_minor": [0, 1],
            "entry_computation_layout": "(f32[6,4]{1,0})->f32[6,4]{1,0}",
        },
        observed={"major_to_minor": order, "entry_computation_layout": layout},
        said=f"For a 6 × 4 float32 array of ones: major_to_minor is {tuple(order)}, and the "
        f"jitted t * 2.0 has the entry_computation_layout {layout}.",
    )


@claim(
    "transpose-materialized",
    only_on=CPU_COMPILER_TEXT,
    checks="That for a 256 × 128 float32 matrix `a.T` compiles to one loop fusion, of a "
    "transpose and a copy, that reads and writes the matrix once by XLA's count; and that "
    "`a.T * 2 + 1` compiles to one loop fusion that multiplies and adds, then transposes, "
    "ending in the same transpose and copy.",
)
def _transpose_materialized() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    alone = _optimized(lambda t: t.T, a)
    traffic = cost_analysis(jax.jit(lambda t: t.T).lower(a).compile())["bytes accessed"]
    chained = _optimized(lambda t: t.T * 2 + 1, a)
    chained_body = opcodes(fused_body(chained))
    order = [op for op in chained_body if op in ("multiply", "add", "transpose")]
    alone_body = opcodes(fused_body(alone))
    return Observation(
        expected={
            "a.T fusions": ["kLoop"],
            "a.T fused body": ["parameter", "transpose", "copy"],
            "a.T * 2 + 1 fusions": ["kLoop"],
            "order inside it": ["multiply", "add", "transpose"],
            "it ends with": ["transpose", "copy"],
            "a.T bytes accessed: the matrix read and written once": True,
        },
        observed={
            "a.T fusions": fusion_kinds(alone),
            "a.T bytes accessed: the matrix read and written once": traffic == 2 * a.nbytes,
            "a.T fused body": alone_body,
            "a.T * 2 + 1 fusions": fusion_kinds(chained),
            "order inside it": order,
            "it ends with": chained_body[-2:],
        },
        said=f"For a 256 × 128 float32 matrix, a.T compiled to {_fusions(fusion_kinds(alone))}, "
        f"whose body is {listed(alone_body, 'nothing')}, accessing {traffic:,.0f} bytes by "
        f"XLA's count (the matrix is {a.nbytes:,}); "
        f"a.T * 2 + 1 to {_fusions(fusion_kinds(chained))}, "
        f"its body holding {listed(order, 'nothing')} in that order and ending with "
        f"{listed(chained_body[-2:], 'nothing')}.",
    )


@claim(
    "transpose-absorbed",
    checks="That for a 256 × 128 `a` and a 256 × 64 `b`, `a.T @ b` compiles with no "
    "transpose, to a `dot` with `lhs_contracting_dims={0}`; and that `a.T.T` compiles with no "
    "transpose, to a ROOT `copy`.",
    expected_on={
        "tpu": (
            {"dot contracts lhs dimension 0": False},
            (
                "XLA's TPU compiler turns each product into a `convolution` inside a fusion, so"
                " its optimized HLO holds no `dot` whose contracting dimensions could be read; "
                "no transpose instruction is left either"
            ),
        ),
        "gpu": (
            {"dot contracts lhs dimension 0": False},
            "the GPU's optimized HLO shows no lhs_contracting_dims={0}: the product goes to "
            "the GPU's matrix library with operand layouts XLA chooses; no transpose "
            "instruction is left either",
        ),
    },
)
def _transpose_absorbed() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    b = jnp.ones((256, 64), jnp.float32)
    matmul = _optimized(lambda s, t: s.T @ t, a, b)
    double = _optimized(lambda t: t.T.T, a)
    contracts_0 = "lhs_contracting_dims={0}" in matmul
    return Observation(
        expected={
            "a.T @ b has a transpose": False,
            "dot contracts lhs dimension 0": True,
            "a.T.T has a transpose": False,
            "a.T.T compiles to": "copy",
        },
        observed={
            "a.T @ b has a transpose": has_op(matmul, "transpose"),
            "dot contracts lhs dimension 0": contracts_0,
            "a.T.T has a transpose": has_op(double, "transpose"),
            "a.T.T compiles to": root_opcode(double),
        },
        said="For a 256 × 128 a and a 256 × 64 b, a.T @ b compiled "
        f"{_with(has_op(matmul, 'transpose'))} a transpose instruction and "
        f"{_with(contracts_0)} a dot that says lhs_contracting_dims={{0}}; a.T.T compiled "
        f"{_with(has_op(double, 'transpose'))} a transpose, to a ROOT {root_opcode(double)}.",
    )


@claim(
    "donation-removes-copy",
    checks="That `a.T.T` of a 256 × 128 float32 matrix compiles to a ROOT `copy` without "
    "donation, and with `donate_argnums=0` to the ROOT parameter itself, with "
    "`input_output_alias` putting the output in the input's buffer; and that a call deletes "
    "the donated array.",
)
def _donation() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    kept = compiled_text(lambda t: t.T.T, a)
    donated = compiled_text(lambda t: t.T.T, a, donate_argnums=0)
    alias = input_output_alias(donated)
    given = jnp.ones((256, 128), jnp.float32)
    jax.jit(lambda t: t.T.T, donate_argnums=0)(given).block_until_ready()
    return Observation(
        expected={
            "ROOT without donation": "copy",
            "ROOT with donation": "parameter",
            "input_output_alias with donation": "{}: (0, {}, may-alias)",
            "the donated array deleted": True,
        },
        observed={
            "ROOT without donation": root_opcode(clean_hlo(kept)),
            "ROOT with donation": root_opcode(clean_hlo(donated)),
            "input_output_alias with donation": alias,
            "the donated array deleted": given.is_deleted(),
        },
        said=f"a.T.T of a 256 × 128 float32 matrix, compiled as in the cell above: the ROOT is a "
        f"{root_opcode(clean_hlo(kept))} without donation and a "
        f"{root_opcode(clean_hlo(donated))} with donate_argnums=0, "
        + (
            f"whose header says input_output_alias={{ {alias} }}"
            if alias
            else "whose header has no input_output_alias"
        )
        + f"; a call {'deleted' if given.is_deleted() else 'kept'} the donated array.",
    )
