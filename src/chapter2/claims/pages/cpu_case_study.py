"""Claims of the page `cpu-case-study`: products followed by sums in the CPU's YNN fusion."""

from chapter2.cases import ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Observation, claim, counted, listed


def _sizes(sizes: list[int]) -> str:
    """Sizes in words: "64, 96 and 128", "64", or "none of them"."""
    if len(sizes) < 2:
        return str(sizes[0]) if sizes else "none of them"
    return ", ".join(map(str, sizes[:-1])) + f" and {sizes[-1]}"


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


@claim("cpu-ynn-fusion-closure-constant", only_on=YNN)
def _closure_constant() -> Observation:
    scan = {n: ynn.probe(n) for n in ynn.SIZES}
    embedded = [n for n, p in scan.items() if p.dot_operands[0] == "constant"]
    by_kinds: dict[str, list[int]] = {}
    for n in (64, 96, 128):
        by_kinds.setdefault(listed(list(scan[n].fusion_kinds), "none"), []).append(n)
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
        repeats="the scan above",
        said=f"The scan above, run again for n = {_sizes(list(ynn.SIZES))}: the captured "
        f"matrix was embedded in the dot at {_sizes(embedded)}; from 64 on the fusions were "
        + (
            f"all {next(iter(by_kinds))}"
            if len(by_kinds) == 1
            else listed([f"{kinds} at {_sizes(sizes)}" for kinds, sizes in by_kinds.items()])
        )
        + f"; the sum was wrong at {_sizes([n for n, p in scan.items() if p.wrong])}.",
    )
