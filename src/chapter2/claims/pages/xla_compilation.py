"""Claims of the page `xla-compilation`: lowering, XLA's optimizations, dumps and the YNN case."""

import json
import os
import re
import tempfile
from collections import Counter
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.cases.ynn import uses_ynn
from chapter2.claims.backends import CPU_COMPILER_TEXT, YNN
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.compat import cost_analysis
from chapter2.fresh import run_probe
from chapter2.hlo import (
    clean_hlo,
    compiled_text,
    custom_call_targets,
    fused_body,
    fusion_kinds,
    has_op,
    opcodes,
    root_opcode,
    source_lines,
    stablehlo_ops,
)


def _holds(first: bool, second: bool, names: tuple[str, str] = ("sine", "reduce")) -> str:
    """Which of two ops a program holds, in words: "holds a sine but no reduce"."""
    a, b = names
    if first and second:
        return f"holds both {a} and {b}"
    if first or second:
        return f"holds {a if first else b} but no {b if first else a}"
    return f"holds neither {a} nor {b}"


def simple_computation(x, a, b):
    return a * jnp.sin(x) + b


def _times_of(ratio: float, quantity: str) -> str:
    """A measured ratio to a formula in words: "exactly 2n³" or "1.5 times 2n³"."""
    return f"exactly {quantity}" if ratio == 1 else f"{ratio:g} times {quantity}"


@claim(
    "stablehlo-then-hlo",
    warning=True,
    checks="That `a * sin(x) + b`, traced, lowers to text that starts with `module` (MLIR) and "
    "never mentions `HloModule`, adding two `broadcast_in_dim` to the jaxpr's operations, and "
    "compiles to text that starts with `HloModule`.",
    unchecked="What is often said is quoted, not tested.",
)
def _stablehlo_then_hlo() -> Observation:
    traced = jax.jit(simple_computation).trace(jnp.ones((8, 8)), 2.0, 1.0)
    low, opt = traced.lower().as_text(), traced.lower().compile().as_text()
    eqns = [e.primitive.name for e in traced.jaxpr.eqns]
    added = Counter(stablehlo_ops(low)) - Counter(
        {"sine": 1, "multiply": 1, "add": 1, "convert": 2}
    )
    lowering_added = listed([f"{n} {op}" for op, n in added.items()], "nothing")
    return Observation(
        expected={
            "lowered text starts": "module",
            "HloModule in the lowered text": False,
            "jaxpr equations": 5,
            "ops added by lowering": {"broadcast_in_dim": 2},
            "compiled text starts": "HloModule",
        },
        observed={
            "lowered text starts": low.split()[0],
            "HloModule in the lowered text": "HloModule" in low,
            "jaxpr equations": len(eqns),
            "ops added by lowering": dict(added),
            "compiled text starts": opt.split()[0],
            "StableHLO ops": stablehlo_ops(low),
        },
        said=f"Traced a * sin(x) + b for an 8 × 8 x and the scalars 2.0 and 1.0: its jaxpr has "
        f"{counted(len(eqns), 'equation')}; the lowered text starts with `{low.split()[0]}`, "
        f"{'mentions' if 'HloModule' in low else 'never mentions'} `HloModule` and adds "
        f"{lowering_added}, and the compiled text starts with `{opt.split()[0]}`.",
    )


@claim(
    "elementwise-chain-one-fusion",
    checks="That `a * sin(x) + b` for a 100 × 100 `x` compiles to one fusion, of kind `kLoop`, "
    "which computes the sine, the multiplication and the addition.",
)
def _elementwise_fusion() -> Observation:
    chain = clean_hlo(compiled_text(simple_computation, jnp.ones((100, 100)), 2.0, 1.0))
    kinds = fusion_kinds(chain)
    body = opcodes(fused_body(chain)) if kinds else []
    holds = {"sine", "multiply", "add"} <= set(body)
    return Observation(
        expected={"a * sin(x) + b fusions": ["kLoop"], "it computes sine, multiply, add": True},
        observed={"a * sin(x) + b fusions": kinds, "it computes sine, multiply, add": holds},
        said=f"Checked again, smaller: a * sin(x) + b for a 100 × 100 x compiled to "
        f"{counted(len(kinds), 'fusion')}"
        f"{', of kind ' + listed(kinds) if kinds else ''}, whose body computes "
        f"{listed([op for op in body if op != 'parameter'], 'nothing')}.",
    )


@claim(
    "matmul-sum-ynn-fusion",
    only_on=YNN,
    checks="That `jnp.sum(a @ b)` for two 100 × 100 matrices compiles to one fusion, of kind "
    "`kCustom`, tagged `__ynn_fusion`.",
)
def _matmul_sum_ynn() -> Observation:
    x = jnp.ones((100, 100))
    matmul_sum = compiled_text(lambda a, b: jnp.sum(a @ b), x, x)
    kinds = fusion_kinds(matmul_sum)
    ynn = uses_ynn(matmul_sum)
    return Observation(
        expected={"sum(a @ b) fusions": ["kCustom"], "sum(a @ b) is a __ynn_fusion": True},
        observed={
            "sum(a @ b) fusions": kinds,
            "sum(a @ b) is a __ynn_fusion": ynn,
        },
        said=f"Compiled jnp.sum(a @ b) for two 100 × 100 matrices: "
        f"{counted(len(kinds), 'fusion')}{', of kind ' + listed(kinds) if kinds else ''}, "
        f"and the HLO {'tags' if ynn else 'tags none as'} a __ynn_fusion.",
    )


@claim(
    "cost-analysis-dict",
    checks="That `cost_analysis()` of `a * sin(x) + b` on 1000 × 1000 values returns a dict "
    "with 2N flops, N transcendentals and 2 × 4N + 8 bytes accessed; that "
    "`memory_analysis()` gives 4N output and 0 temporary bytes; and that a 64 × 32 by 32 × 16 "
    "`dot` counts 2MNK flops.",
    unchecked="What older releases returned, and the per-operand keys, are not tested.",
    expected_on={
        "tpu": (
            {
                "flops, transcendentals, bytes accessed": [2000000, 1000000, 8195072],
                "output and temp bytes": [4096000, 0],
            },
            (
                "XLA's TPU backend stores float32 arrays in tiles of 8 × 128 elements, so each "
                "1000-element row is padded to 1024 and the bytes count the padding"
            ),
        )
    },
)
def _cost_analysis() -> Observation:
    n = 1000 * 1000
    compiled = jax.jit(simple_computation).lower(jnp.ones((1000, 1000)), 2.0, 1.0).compile()
    ca, ma = cost_analysis(compiled), compiled.memory_analysis()
    dot = jax.jit(jnp.matmul).lower(jnp.ones((64, 32)), jnp.ones((32, 16))).compile()
    dot_flops = cost_analysis(dot)["flops"]
    return Observation(
        expected={
            "cost_analysis() returns": "dict",
            "flops, transcendentals, bytes accessed": [2 * n, n, 2 * 4 * n + 8],
            "output and temp bytes": [4 * n, 0],
            "dot flops": 2 * 64 * 32 * 16,
        },
        observed={
            "cost_analysis() returns": type(compiled.cost_analysis()).__name__,
            "flops, transcendentals, bytes accessed": [
                ca["flops"],
                ca["transcendentals"],
                ca["bytes accessed"],
            ],
            "output and temp bytes": [ma.output_size_in_bytes, ma.temp_size_in_bytes],
            "dot flops": dot_flops,
        },
        repeats="the cells above",
        said=f"The cells above, run again: cost_analysis() returns a "
        f"{type(compiled.cost_analysis()).__name__}, with {ca['flops']:,.0f} flops, "
        f"{ca['transcendentals']:,.0f} transcendentals and {ca['bytes accessed']:,.0f} bytes "
        f"accessed; memory_analysis() gives {ma.output_size_in_bytes:,} output and "
        f"{ma.temp_size_in_bytes:,} temporary bytes; the 64 × 32 by 32 × 16 dot counts "
        f"{dot_flops:,.0f} flops.",
    )


FITS = 20_480  # n of a product whose three float32 arrays fit a 16 GB device, in whole tiles


@claim(
    "cost-analysis-is-an-estimate",
    checks="That a product of two 100,000 × 100,000 float32 matrices compiles from shapes "
    "alone, and that its cost analysis counts exactly 2n³ flops and 3 × 4n² bytes accessed "
    f"(where it cannot compile, the lowered program's cost analysis, or, where JAX gives none, "
    f"the same product compiled at n = {FITS:,}).",
    expected_on={
        "tpu": (
            {"compiles from shapes alone": False},
            (
                "XLA's TPU compiler holds a program's buffers to the chip's memory as it "
                "compiles, and these 40 GB arrays do not fit: it refuses, and the counts "
                "come from the lowered program's cost analysis, where JAX gives one, or from "
                "a product that fits"
            ),
        )
    },
)
def _an_estimate() -> Observation:
    n = 100_000
    big = jax.ShapeDtypeStruct((n, n), jnp.float32)  # 40 GB, never allocated
    lowered = jax.jit(jnp.matmul).lower(big, big)
    how = f"Compiled again for n = {n:,}"
    try:
        estimate, compiles = cost_analysis(lowered.compile()), True
    except Exception as err:  # an accelerator's compiler refuses what its memory cannot hold
        if "RESOURCE_EXHAUSTED" not in str(err):
            raise
        estimate, compiles = cost_analysis(lowered), False
        how = f"Lowered again for n = {n:,}, its compilation refused"
        if estimate is None:  # JAX 0.10.2's lowered program on a TPU: count one that fits
            n = FITS
            fits = jax.ShapeDtypeStruct((n, n), jnp.float32)
            estimate = cost_analysis(jax.jit(jnp.matmul).lower(fits, fits).compile())
            how = (
                f"Its compilation refused at n = 100,000 and its lowered program given no cost "
                f"analysis, compiled again for n = {n:,}"
            )
    flops = round(estimate["flops"] / (2 * n**3), 6)
    traffic = round(estimate["bytes accessed"] / (3 * 4 * n**2), 6)
    return Observation(
        expected={
            "compiles from shapes alone": True,
            "flops / 2n³": 1.0,
            "bytes accessed / 3 arrays of 4n² bytes": 1.0,
        },
        observed={
            "compiles from shapes alone": compiles,
            "flops / 2n³": flops,
            "bytes accessed / 3 arrays of 4n² bytes": traffic,
        },
        said=f"{how}, nothing allocated: the flops counted "
        f"are {_times_of(flops, '2n³')} and the bytes accessed "
        f"{_times_of(traffic, '3 × 4n² (three n × n float32 arrays)')}.",
    )


@claim(
    "cost-analysis-blind-to-custom-calls",
    checks="That `jnp.linalg.cholesky` of a 500 × 500 matrix calls a library routine (a "
    "custom call), and that the cost analysis counts under a thirtieth of n³/3 flops.",
    unchecked="That the routine is LAPACK's, and that the flops counted are the elementwise "
    "operations around it, are read from the printout above.",
    expected_on={
        "tpu": (
            {"counts under a thirtieth of n³/3": False},
            (
                "XLA's TPU backend factorizes in blocks: the custom calls handle the diagonal "
                "blocks, and the products between blocks are HLO that the cost analysis "
                "counts, more than a thirtieth of n³/3"
            ),
        )
    },
)
def _custom_call_costs() -> Observation:
    n = 500
    compiled = jax.jit(jnp.linalg.cholesky).lower(jnp.eye(n) + 0.1).compile()
    targets = custom_call_targets(compiled.as_text())
    counted_flops = cost_analysis(compiled)["flops"]
    by_hand = n**3 / 3  # the factorization's multiply-adds, as a numerical text counts them
    return Observation(
        expected={"calls a library routine": True, "counts under a thirtieth of n³/3": True},
        observed={
            "calls a library routine": bool(targets),
            "counts under a thirtieth of n³/3": counted_flops < by_hand / 30,
            "custom call targets": targets,
            "flops counted": counted_flops,
        },
        repeats="the cell above",
        said=f"Compiled jnp.linalg.cholesky for a {n} x {n} matrix: it calls "
        f"{listed(targets, 'no library routine')}, and the cost analysis counts "
        f"{counted_flops:,.0f} flops, against {by_hand:,.0f} for the factorization.",
    )


@claim(
    "cost-analysis-counts-loop-body-once",
    checks="That a `fori_loop` of 100 steps of a 64 × 64 product reports fewer flops than two "
    "steps'.",
)
def _loop_costs() -> Observation:
    def power_steps(v):
        return jax.lax.fori_loop(0, 100, lambda _, v: jnp.tanh(v @ v), v)

    counted_flops = cost_analysis(jax.jit(power_steps).lower(jnp.ones((64, 64))).compile())["flops"]
    one_step = 2 * 64**3
    return Observation(
        expected={"counts under two steps' flops": True},
        observed={
            "counts under two steps' flops": counted_flops < 2 * one_step,
            "flops counted, in steps": round(counted_flops / one_step, 2),
        },
        repeats="the cell above",
        said=f"The cell above, run again: a fori_loop of 100 steps of a 64 x 64 product reports "
        f"{counted_flops:,.0f} flops, {counted_flops / one_step:.2f} times one step's.",
    )


@claim(
    "constant-folding",
    checks="That `v * sin(2.0) + arange(4.0).sum()` has a sine and a reduce in its StableHLO "
    "and neither in its optimized HLO, whose scalar constants include sin 2 (in float32) and "
    "6.",
)
def _constant_folding() -> Observation:

    def fold(v):
        return v * jnp.sin(2.0) + jnp.arange(4.0).sum()

    lowered = jax.jit(fold).lower(jnp.ones(4))
    low, opt = lowered.as_text(), clean_hlo(lowered.compile().as_text())
    scalars = re.findall(r"f32\[\](?:\{[^}]*\})? constant\(([-\d.e]+)\)", opt)  # a layout, on a TPU
    before = ["sine" in stablehlo_ops(low), "reduce" in low]
    after = [has_op(opt, "sine"), has_op(opt, "reduce")]
    return Observation(
        expected={
            "sine, reduce in StableHLO": [True, True],
            "sine, reduce in the optimized HLO": [False, False],
            "6 among its constants": True,
            "sin 2 among its constants": True,
        },
        observed={
            "sine, reduce in StableHLO": before,
            "sine, reduce in the optimized HLO": after,
            "6 among its constants": "6" in scalars,
            "sin 2 among its constants": f"{np.float32(np.sin(2.0)):.9g}" in scalars,
            "scalar constants": scalars,
        },
        repeats="the cell above",
        said=f"The cell above, run again: the StableHLO {_holds(*before)}, the optimized HLO "
        f"{_holds(*after)}, and its scalar constants are {listed(scalars, 'none')}.",
    )


@claim(
    "simplifier-keeps-negative-zero",
    warning=True,
    checks="That for x = -0.0 in float32 the jitted `x * 1.0 + 0.0` compiles to a copy of x "
    "and returns -0.0, while it returns +0.0 eagerly and in NumPy.",
)
def _negative_zero() -> Observation:
    zero = jnp.array([-0.0], jnp.float32)

    def f(x):
        return x * 1.0 + 0.0

    root = root_opcode(clean_hlo(compiled_text(f, zero)))
    negative = [
        bool(np.signbit(jax.jit(f)(zero))[0]),
        bool(np.signbit(f(zero))[0]),
        bool(np.signbit(f(np.asarray(zero)))[0]),
    ]
    signed = ["-0.0" if n else "+0.0" for n in negative]
    return Observation(
        expected={
            "x*1.0+0.0 compiles to": "copy",
            "negative sign under jit, eagerly, in NumPy": [True, False, False],
        },
        observed={
            "x*1.0+0.0 compiles to": root,
            "negative sign under jit, eagerly, in NumPy": negative,
        },
        said=f"For x = -0.0 in float32, jitted x * 1.0 + 0.0 compiles to a {root} of x and "
        f"returns {signed[0]}; eagerly it returns {signed[1]}, and NumPy {signed[2]}.",
    )


@claim(
    "cancellation-rewrite-integers-only",
    warning=True,
    checks="That `(x + y) - x` on 16 × 16 arrays keeps its add and subtract in float32 with the "
    "default options, and compiles to a copy of y in int32 and in float32 with "
    "`xla_cpu_enable_fast_math`; and that, jitted on float32 scalars, (1e8 + 1) - 1e8 gives 0.",
    expected_on={
        "tpu": (
            {"int32, float32 with fast math compile to": ["bitcast", "fusion"]},
            (
                "`xla_cpu_enable_fast_math` is an option of XLA's CPU backend, so on the TPU "
                "the float32 program keeps its arithmetic (a fusion); the int32 one ends in a "
                "bitcast, not a copy"
            ),
        )
    },
)
def _cancellation() -> Observation:

    def cancel(x, y):
        return (x + y) - x

    v = jnp.ones((16, 16))
    floats = clean_hlo(compiled_text(cancel, v, v))
    fast = jax.jit(cancel).lower(v, v).compile({"xla_cpu_enable_fast_math": True})
    ints = jnp.ones((16, 16), jnp.int32)
    integers = clean_hlo(compiled_text(cancel, ints, ints))
    big = jax.jit(cancel)(jnp.float32(1e8), jnp.float32(1.0))
    kept = [has_op(floats, "add"), has_op(floats, "subtract")]
    roots = [root_opcode(integers), root_opcode(clean_hlo(fast.as_text()))]
    return Observation(
        expected={
            "float32 keeps add, subtract": [True, True],
            "int32, float32 with fast math compile to": ["copy", "copy"],
            "(1e8 + 1) - 1e8": 0.0,
        },
        observed={
            "float32 keeps add, subtract": kept,
            "int32, float32 with fast math compile to": roots,
            "(1e8 + 1) - 1e8": float(big),
        },
        said=f"Compiled (x + y) - x for 16 × 16 arrays: in float32 the optimized HLO "
        f"{_holds(*kept, names=('add', 'subtract'))}; in int32 it ends in a {roots[0]}, and in "
        f"float32 with xla_cpu_enable_fast_math in a {roots[1]}. Jitted on float32 scalars, "
        f"(1e8 + 1) - 1e8 gave {float(big):g}.",
    )


@claim(
    "hlo-metadata-source-lines",
    only_on=CPU_COMPILER_TEXT,
    checks="That the optimized HLO's metadata leads the sine, multiplication and addition of "
    "`a * sin(x) + b`, written on one line, back to that line.",
    unchecked="The page's function spreads them over three lines; the cell above shows each "
    "leading to its own.",
)
def _source_lines() -> Observation:
    lowered = jax.jit(simple_computation).lower(jnp.ones(4), 2.0, 1.0)
    sources = source_lines(lowered.compile().as_text())
    line = simple_computation.__code__.co_firstlineno + 1
    here = {op.rsplit("/", 1)[1] for op, file, at in sources.values() if at == line}
    traced = listed(sorted(here), "no operation")
    return Observation(
        expected={"sin, mul, add traced to their line": True},
        observed={
            "sin, mul, add traced to their line": {"sin", "mul", "add"} <= here,
            "op names on that line": sorted(here),
        },
        said=f"Compiled a * sin(x) + b, written on one line, for 4 values: the optimized HLO's "
        f"metadata leads {traced} back to that line.",
    )


@claim(
    "xla-dump-before-after",
    only_on=CPU_COMPILER_TEXT,
    checks="That `XLA_FLAGS` with a dump folder, set in a process that has already computed, "
    "dumps no file; that in a fresh process that sets it after `import jax` and before "
    "computing, `exp(log(x) + y)` leaves its `before_optimizations` and "
    "`cpu_after_optimizations` texts, with no fusion before and one after; and that one "
    "`compile()` given the dump options dumps its module.",
    unchecked="That every compiled module leaves its texts is tested for one; the cell below "
    "lists the others.",
)
def _xla_dump() -> Observation:

    def exp_log(x):
        return jnp.exp(jnp.log(x) + x)

    with (
        tempfile.TemporaryDirectory() as late,
        tempfile.TemporaryDirectory() as fresh,
        tempfile.TemporaryDirectory() as one,
    ):
        jax.jit(exp_log)(jnp.ones(3)).block_until_ready()  # XLA has started in this process
        saved = os.environ.get("XLA_FLAGS")
        os.environ["XLA_FLAGS"] = f"--xla_dump_to={late} --xla_dump_hlo_as_text"
        try:
            jax.jit(exp_log)(jnp.ones(7)).block_until_ready()
        finally:  # leave this process's environment as it was
            del os.environ["XLA_FLAGS"]
            if saved is not None:
                os.environ["XLA_FLAGS"] = saved
        dumped_late = sum(1 for _ in Path(late).rglob("*"))
        record = json.loads(run_probe("xla_dump", fresh))  # set after import jax, before use
        options = {"xla_dump_to": one, "xla_dump_hlo_as_text": True}
        jax.jit(exp_log).lower(jnp.ones(9)).compile(options)
        one_compile = sorted(f.name.split(".", 1)[1] for f in Path(one).glob("*jit_exp_log*"))
    suffixes = {f.split("jit_simple_computation", 1)[1] for f in record["files"]}
    wanted = {".before_optimizations.txt", ".cpu_after_optimizations.txt"}
    texts = listed([w.split(".")[1] for w in sorted(wanted & suffixes)], "neither")
    one_dumped = any(name.endswith("before_optimizations.txt") for name in one_compile)
    return Observation(
        expected={
            "files dumped when set late": 0,
            "set after import jax, before the first computation: before and after files": True,
            "fusions before, after": [0, 1],
            "one compile() with the options dumps its module": True,
        },
        observed={
            "files dumped when set late": dumped_late,
            "set after import jax, before the first computation: before and after files": (
                wanted <= suffixes
            ),
            "fusions before, after": [record["fusions_before"], record["fusions_after"]],
            "one compile() with the options dumps its module": one_dumped,
        },
        said=f"Set in this process after it had computed, XLA_FLAGS dumped "
        f"{counted(dumped_late, 'file')}. A fresh process that set it after import jax, before "
        f"computing, dumped {texts} for exp(log(x) + y), with "
        f"{counted(record['fusions_before'], 'fusion')} before and {record['fusions_after']} "
        f"after, and one compile() given the options {'dumped' if one_dumped else 'did not dump'} "
        f"its module.",
    )
