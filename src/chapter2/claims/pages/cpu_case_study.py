"""Claims of the page `cpu-case-study`: a closure constant in the CPU's YNN fusion."""

import json

import jax.numpy as jnp

from chapter2.cases import ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Kind, Observation, claim
from chapter2.fresh import run_probe
from chapter2.hlo import clean_hlo, fusion_kinds


@claim("cpu-ynn-fusion-closure-constant", only_on=YNN)
def _ynn_fusion() -> Observation:
    """The CPU backend compiles sum(W @ x) into one kind=kCustom __ynn_fusion (YNNPACK). From n
    = 64 on, an n x n W captured by a closure is embedded in it as constant({...}), the dot's
    left operand, while a W passed as an argument stays a parameter; below 64 the constant
    stays outside. XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type= turns the YNN fusion off."""
    w, x = ynn.operands()
    xj, wj = jnp.asarray(x), jnp.asarray(w)
    closure = clean_hlo(ynn.closure_version(w).lower(xj).compile().as_text())
    argument = clean_hlo(ynn.argument_version().lower(xj, wj).compile().as_text())
    bodies = ynn.ynn_fusion_body(closure), ynn.ynn_fusion_body(argument)
    sizes = [32, 48, 63, 64, 96, 128]
    embedded = [n for n in sizes if ynn.probe(n).dot_operands[0] == "constant"]
    off = (  # without a YNN fusion there is no flag to turn it off (older XLA rejects it)
        json.loads(run_probe("ynn_probe", env=ynn.YNN_OFF))
        if bodies[0]
        else {"uses_ynn": "not run: there is no YNN fusion to turn off"}
    )
    return Observation(
        expected={
            "closure fusions": ["kCustom"],
            "dot operands, closure": ["constant", "parameter"],
            "dot operands, argument": ["parameter", "parameter"],
            f"sizes among {sizes} with the constant embedded": [64, 96, 128],
            "__ynn_fusion with the flag": False,
        },
        observed={
            "closure fusions": fusion_kinds(closure),
            "dot operands, closure": bodies[0] and ynn.dot_operands(bodies[0]),
            "dot operands, argument": bodies[1] and ynn.dot_operands(bodies[1]),
            f"sizes among {sizes} with the constant embedded": embedded,
            "__ynn_fusion with the flag": off["uses_ynn"],
        },
    )


@claim("ynn-closure-constant-wrong-result", kind=Kind.OBSERVED, warning=True, only_on=YNN)
def _ynn_wrong_result() -> Observation:
    """On the CPU where this chapter was first written, jnp.sum(W_const @ x) with a 128x128
    closure constant W_const silently returned a wrong result, while the argument version and
    the closure version with YNN fusion off were right."""
    result = ynn.probe()
    if not result.uses_ynn:
        msg = "this JAX compiles sum(W @ x) without a YNN fusion, the path the fault is in"
        raise CannotCheck(msg)
    outcome = ynn.verdict(result.closure, result.reference)
    off = json.loads(run_probe("ynn_probe", env=ynn.YNN_OFF))
    return Observation(
        expected={
            "closure version wrong": True,
            "argument version right": True,
            "closure version right with YNN off": True,
        },
        observed={
            "closure version wrong": outcome.wrong,
            "argument version right": abs(result.argument - result.reference) <= ynn.TOLERANCE,
            "closure version right with YNN off": off["closure_error"] <= ynn.TOLERANCE,
            "closure error": float(f"{outcome.error:.3g}"),
        },
    )
