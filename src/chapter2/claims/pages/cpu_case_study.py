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
    w, x = ynn.operands()
    xj, wj = jnp.asarray(x), jnp.asarray(w)
    closure = clean_hlo(ynn.closure_version(w).lower(xj).compile().as_text())
    argument = clean_hlo(ynn.argument_version().lower(xj, wj).compile().as_text())
    bodies = ynn.ynn_fusion_body(closure), ynn.ynn_fusion_body(argument)
    sizes = [32, 48, 63, 64, 96, 128]
    embedded = [n for n in sizes if ynn.probe(n).dot_operands[0] == "constant"]
    return Observation(
        expected={
            "closure fusions": ["kCustom"],
            "dot operands, closure": ["constant", "parameter"],
            "dot operands, argument": ["parameter", "parameter"],
            f"sizes among {sizes} with the constant embedded": [64, 96, 128],
        },
        observed={
            "closure fusions": fusion_kinds(closure),
            "dot operands, closure": bodies[0] and ynn.dot_operands(bodies[0]),
            "dot operands, argument": bodies[1] and ynn.dot_operands(bodies[1]),
            f"sizes among {sizes} with the constant embedded": embedded,
        },
    )


@claim("ynn-fusion-flag-off", only_on=YNN)
def _ynn_flag_off() -> Observation:
    if not ynn.probe().uses_ynn:  # older XLA has no YNN fusion, and rejects the flag
        msg = "this JAX compiles sum(W @ x) without a YNN fusion: there is none to turn off"
        raise CannotCheck(msg)
    off = json.loads(run_probe("ynn_probe", env=ynn.YNN_OFF))
    return Observation(
        expected={"__ynn_fusion with the flag": False, "only kLoop fusions with the flag": True},
        observed={
            "__ynn_fusion with the flag": off["uses_ynn"],
            "only kLoop fusions with the flag": set(off["fusion_kinds"]) == {"kLoop"},
            "fusions with the flag": off["fusion_kinds"],
        },
    )


@claim("ynn-closure-constant-wrong-result", kind=Kind.OBSERVED, warning=True, only_on=YNN)
def _ynn_wrong_result() -> Observation:
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
