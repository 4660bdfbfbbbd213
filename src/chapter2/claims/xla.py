"""Claims of section 2.3 (the role of XLA compilation)."""

import json
import re
import tempfile

import jax
import jax.numpy as jnp

from chapter2 import ynn
from chapter2.claims.registry import Observation, claim
from chapter2.fresh import run_example
from chapter2.hlo import clean_hlo, entry_root


def _opcode(instruction: str) -> str:
    """The opcode of one HLO instruction line: 'copy' for '%copy = f32[4]{0} copy(%x)'."""
    return re.search(r"= \S+ ([\w\-]+)\(", instruction).group(1)


def _simple_computation(x, a, b):
    return a * jnp.sin(x) + b


@claim(
    "stablehlo-then-hlo",
    "2.3",
    "note-stablehlo-vs-hlo",
    "jit(f).lower(...).as_text() is StableHLO (MLIR text of stablehlo.* ops, no HloModule); "
    "XLA turns it into HLO (High Level Operations) and .compile().as_text() is the optimized "
    "HLO, which starts with HloModule.",
)
def _stablehlo_then_hlo() -> Observation:
    lowered = jax.jit(_simple_computation).lower(jnp.ones((8, 8)), 2.0, 1.0)
    low, opt = lowered.as_text(), lowered.compile().as_text()
    low_ok = "stablehlo.sine" in low and "HloModule" not in low
    opt_ok = opt.startswith("HloModule") and "stablehlo." not in opt
    return Observation(
        low_ok and opt_ok,
        f"lower().as_text() starts {low.split()[0]!r}, has stablehlo.sine: "
        f"{'stablehlo.sine' in low}, has HloModule: {'HloModule' in low}; "
        f"compile().as_text() starts {opt.split()[0]!r}",
    )


@claim(
    "cost-analysis-dict",
    "2.3",
    "note-cost-analysis",
    "compiled.cost_analysis() returns a dict (older JAX: a list holding one dict); for "
    "a*sin(x)+b on N = 1000*1000 float32 it reports flops = 2N, transcendentals = N and "
    "bytes accessed = 2*4N + 8, and memory_analysis() an output of 4N bytes and 0 temp bytes.",
)
def _cost_analysis() -> Observation:
    n = 1000 * 1000
    compiled = jax.jit(_simple_computation).lower(jnp.ones((1000, 1000)), 2.0, 1.0).compile()
    ca, ma = compiled.cost_analysis(), compiled.memory_analysis()
    if not isinstance(ca, dict):
        return Observation(False, f"cost_analysis() returned a {type(ca).__name__}")
    got = (ca["flops"], ca["transcendentals"], ca["bytes accessed"])
    mem = (ma.output_size_in_bytes, ma.temp_size_in_bytes)
    return Observation(
        got == (2 * n, n, 2 * 4 * n + 8) and mem == (4 * n, 0),
        f"dict with flops={got[0]:,.0f}, transcendentals={got[1]:,.0f}, "
        f"bytes accessed={got[2]:,.0f}; output={mem[0]:,} B, temp={mem[1]:,} B",
    )


@claim(
    "no-value-changing-simplification",
    "2.3",
    "note-algebraic-simplification",
    "XLA simplifies x*1.0 + 0.0 to a copy of x, but keeps the add and the subtract of (x+y)-x: "
    "rewriting it to y would change IEEE float results.",
)
def _simplification() -> Observation:
    v = jnp.ones((16, 16))
    identity = clean_hlo(jax.jit(lambda x: x * 1.0 + 0.0).lower(v).compile().as_text())
    cancel = clean_hlo(jax.jit(lambda x, y: (x + y) - x).lower(v, v).compile().as_text())
    simplified = " multiply(" not in identity and " add(" not in identity
    kept = " add(" in cancel and " subtract(" in cancel
    return Observation(
        simplified and kept,
        f"x*1.0+0.0 compiles to a ROOT {_opcode(entry_root(identity))!r}; "
        f"(x+y)-x keeps add: {' add(' in cancel}, subtract: {' subtract(' in cancel}",
    )


@claim(
    "xla-dump-before-after",
    "2.3",
    "note-xla-dump",
    "XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text', set when the process starts, dumps "
    "<module>.before_optimizations.txt (exp(log(x)+y): 0 fusions) and "
    "<module>.cpu_after_optimizations.txt (1 fusion) for each compiled module.",
)
def _xla_dump() -> Observation:
    with tempfile.TemporaryDirectory() as folder:
        flags = f"--xla_dump_to={folder} --xla_dump_hlo_as_text"
        record = json.loads(run_example("xla_dump", env={"XLA_FLAGS": flags}))
    suffixes = {f.split("jit_simple_computation", 1)[1] for f in record["files"]}
    has_files = {".before_optimizations.txt", ".cpu_after_optimizations.txt"} <= suffixes
    counts = (record["fusions_before"], record["fusions_after"])
    return Observation(
        has_files and counts == (0, 1),
        f"{len(record['files'])} names for jit_simple_computation, before/after files present: "
        f"{has_files}; fusions before: {counts[0]}, after: {counts[1]}",
    )


@claim(
    "cpu-ynn-fusion-closure-constant",
    "2.3",
    "note-ynn-fusion",
    "The CPU backend compiles sum(W @ x) into one kind=kCustom __ynn_fusion (YNNPACK); a "
    "128x128 W captured by a closure is embedded in it as constant({...}) and is the dot's "
    "left operand, while a W passed as an argument stays a parameter.",
)
def _ynn_fusion() -> Observation:
    w, x = ynn.operands()
    xj, wj = jnp.asarray(x), jnp.asarray(w)
    closure = clean_hlo(ynn.closure_version(w).lower(xj).compile().as_text())
    argument = clean_hlo(ynn.argument_version().lower(xj, wj).compile().as_text())
    bodies = ynn.ynn_fusion_body(closure), ynn.ynn_fusion_body(argument)
    if None in bodies:
        return Observation(
            False, f"__ynn_fusion in closure / argument HLO: {[b is not None for b in bodies]}"
        )
    ops = ynn.dot_operands(bodies[0]), ynn.dot_operands(bodies[1])
    embedded = "f32[128,128]{1,0} constant({...})" in bodies[0]
    return Observation(
        ops == (("constant", "parameter"), ("parameter", "parameter")) and embedded,
        f"both compile to a __ynn_fusion; dot operands: closure {ops[0]}, argument {ops[1]}; "
        f"128x128 constant inside the closure's fusion: {embedded}",
    )


@claim(
    "ynn-closure-constant-wrong-result",
    "2.3",
    "note-ynn-wrong-result",
    "With jaxlib 0.12.0.1's YNN fusion, jnp.sum(W_const @ x) with a 128x128 closure constant "
    "W_const can silently return a wrong result (on the specification's CPU, from n = 64 on); "
    "whether it does depends on the machine.",
    kind="observed",
)
def _ynn_wrong_result() -> Observation:
    result = ynn.probe()
    outcome = ynn.verdict(result.closure, result.reference)
    return Observation(outcome.wrong, f"{outcome.label}: {outcome.sentence}")
