"""What XLA's fusion does for your function: kernels, memory traffic and temporary buffers,
with XLA's fusion pass and without it.

    python examples/fusion_report.py MODULE:FUNCTION --args "jnp.ones((1000, 1000))"
    python examples/fusion_report.py --quick

--args is a Python expression for the arguments (a tuple for several), evaluated with jax,
jnp and np in scope. Both compilations are XLA's static estimates (cost_analysis and
memory_analysis), so they are the same on every run; nothing is timed.
"""

import sys

from chapter2.cli import Parser, UsageError, arguments, lowered, run
from chapter2.compat import cost_analysis
from chapter2.hlo import count_fusions, kernels

UNFUSED = {"xla_disable_hlo_passes": "fusion"}
QUICK = ("chapter2.cases.distances:pair_distance", "jnp.ones(1000), jnp.zeros(1000)")


def report(compiled) -> dict:
    """The numbers of one compiled program."""
    text = compiled.as_text()
    return {
        "kernels": len(kernels(text)),
        "fusions": count_fusions(text),
        "bytes accessed": cost_analysis(compiled)["bytes accessed"],
        "temp bytes": compiled.memory_analysis().temp_size_in_bytes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", help="MODULE:FUNCTION to compile")
    parser.add_argument("--args", help="the arguments, as a Python expression")
    parser.add_argument("--quick", action="store_true", help="the distance of two points")
    args = parser.parse_args(argv)
    target, expression = QUICK if args.quick else (args.target, args.args)
    if not target or not expression:
        msg = "give MODULE:FUNCTION and --args (or --quick)"
        raise UsageError(msg)
    program = lowered(target, arguments(expression))
    fused, unfused = report(program.compile()), report(program.compile(UNFUSED))
    print(f"{target}({expression})")
    print(f"{'':16s} {'fused':>14s} {'fusion pass off':>16s}")
    for key in fused:
        print(f"{key:16s} {fused[key]:>14,.0f} {unfused[key]:>16,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
