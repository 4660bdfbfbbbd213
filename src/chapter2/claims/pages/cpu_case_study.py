"""Claims of the page `cpu-case-study`: products followed by sums in the CPU's YNN fusion."""

from chapter2.cases import ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Observation, claim, counted, listed


@claim("jit-matches-eager-reported-program", only_on=YNN)
def _reported_program() -> Observation:
    found = ynn.jit_against_eager()
    return Observation(
        expected={"rows where jit and eager differ": 0},
        observed=found,
        repeats="the cell above",
        said=f"The cell above, run again: jit and eager differ in "
        f"{counted(found['rows where jit and eager differ'], 'row')} of {ynn.REPORTED_ROWS:,}, "
        f"the last row {found['last row, jit']:,.0f} under jit and "
        f"{found['last row, eager']:,.0f} eager; with the matrix passed as an argument, "
        f"{counted(found['rows that differ with the matrix as an argument'], 'row')} differ.",
    )


@claim("ynn-fusion-flag-off", only_on=YNN)
def _ynn_flag_off() -> Observation:
    found = ynn.jit_against_eager()
    if not found["jit's program is a __ynn_fusion"]:
        msg = "this JAX compiles the program without a YNN fusion: there is none to turn off"
        raise CannotCheck(msg)
    names = ["__ynn_fusion with YNNPACK fusion off", "fusions with YNNPACK fusion off"]
    off_kernels = found["kernels with YNNPACK fusion off"]
    return Observation(
        expected={names[0]: False, names[1]: ["kLoop"], "a plain dot for the product": True},
        observed={
            **{name: found[name] for name in names},
            "a plain dot for the product": ["dot"] in found["kernels with YNNPACK fusion off"],
            "kernels with YNNPACK fusion off": found["kernels with YNNPACK fusion off"],
        },
        repeats="the cell above",
        said="The cell above, compiled again with xla_cpu_experimental_ynn_fusion_type empty: "
        f"{'a' if found[names[0]] else 'no'} __ynn_fusion, fusions of kind "
        f"{', '.join(found[names[1]]) or 'none'}, and "
        f"{counted(len(off_kernels), 'kernel')} ("
        + "; ".join(listed(ops) for ops in off_kernels)
        + ").",
    )
