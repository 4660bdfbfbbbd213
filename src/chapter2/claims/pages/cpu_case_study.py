"""Claims of the page `cpu-case-study`: products followed by sums in the CPU's YNN fusion."""

from chapter2.cases import ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Observation, claim


@claim("jit-matches-eager-reported-program", only_on=YNN)
def _reported_program() -> Observation:
    found = ynn.jit_against_eager()
    return Observation(expected={"rows where jit and eager differ": 0}, observed=found)


@claim("ynn-fusion-flag-off", only_on=YNN)
def _ynn_flag_off() -> Observation:
    found = ynn.jit_against_eager()
    if not found["jit's program is a __ynn_fusion"]:
        msg = "this JAX compiles the program without a YNN fusion: there is none to turn off"
        raise CannotCheck(msg)
    names = ["__ynn_fusion with YNNPACK fusion off", "fusions with YNNPACK fusion off"]
    return Observation(
        expected={names[0]: False, names[1]: ["kLoop"], "a plain dot for the product": True},
        observed={
            **{name: found[name] for name in names},
            "a plain dot for the product": ["dot"] in found["kernels with YNNPACK fusion off"],
            "kernels with YNNPACK fusion off": found["kernels with YNNPACK fusion off"],
        },
    )


@claim("cpu-ynn-fusion-closure-constant", only_on=YNN)
def _closure_constant() -> Observation:
    scan = {n: ynn.probe(n) for n in ynn.SIZES}
    embedded = [n for n, p in scan.items() if p.dot_operands[0] == "constant"]
    return Observation(
        expected={
            f"sizes among {list(ynn.SIZES)} with the constant embedded": [64, 96, 128],
            "fusions from 64 on": [["kCustom"]] * 3,
        },
        observed={
            f"sizes among {list(ynn.SIZES)} with the constant embedded": embedded,
            "fusions from 64 on": [list(scan[n].fusion_kinds) for n in (64, 96, 128)],
            "sizes where the closure's sum was wrong": [n for n, p in scan.items() if p.wrong],
        },
    )
