"""Why does it recompile? Call a jitted function as you do, and read JAX's own explanation.

    python examples/why_recompile.py MODULE:FUNCTION --call "jnp.ones(3)" --call "jnp.ones(4)"
    python examples/why_recompile.py --quick

Each --call is a Python expression for the arguments of one call (a tuple for several),
evaluated with jax, jnp and np in scope. The function is jitted (with --static-argnums if
given), called once per --call, and for each call the program prints how many compilations
it caused and, with jax_explain_cache_misses on, why JAX could not reuse an earlier one.
"""

import sys

import jax

from chapter2.cli import Parser, UsageError, arguments, load_function, run
from chapter2.compiles import CompileCounter, explained_cache_misses

QUICK = (
    "chapter2.cases.distances:pair_distance",
    [
        "jnp.ones(3), jnp.zeros(3)",
        "jnp.ones(3), jnp.ones(3)",
        "jnp.ones(4), jnp.zeros(4)",
        "jnp.ones(4), 0.0",
    ],
)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", help="MODULE:FUNCTION to jit and call")
    parser.add_argument("--call", action="append", default=[], help="arguments of one call")
    parser.add_argument("--static-argnums", type=int, nargs="*", default=(), help="as jax.jit")
    parser.add_argument(
        "--quick", action="store_true", help="the distance of two points, four calls"
    )
    args = parser.parse_args(argv)
    target, calls = QUICK if args.quick else (args.target, args.call)
    if not target or not calls:
        msg = "give MODULE:FUNCTION and at least one --call (or --quick)"
        raise UsageError(msg)
    function = jax.jit(load_function(target), static_argnums=tuple(args.static_argnums))
    name = target.partition(":")[2]
    for number, call in enumerate(calls, start=1):
        call_args = arguments(call)
        with CompileCounter(name) as counter, explained_cache_misses() as explanations:
            jax.block_until_ready(function(*call_args))
        print(f"call {number}: {name}({call}): {counter.count} compilation(s)")
        for explanation in explanations:
            print("    " + explanation.replace("\n", "\n    "))
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
