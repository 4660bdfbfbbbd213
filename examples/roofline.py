"""How close your function runs to this machine's limits: its flops, bytes, intensity, time,
and the roofline's verdict.

    python examples/roofline.py MODULE:FUNCTION --args "jnp.ones((2000, 2000)), jnp.ones(2000)"
    python examples/roofline.py --quick

--args is a Python expression for the arguments (a tuple for several), evaluated with jax,
jnp and np in scope. The roofs are measured first, in a few seconds: the fastest float32
matrix product under jit, and streams over working sets from 32 KiB to 512 MiB, which find
where the caches end and how fast each size streams, in place and reading only, and how fast
fresh pages are mapped. Your function is placed under the level its arrays fit in (from its
memory analysis): the caches' rate, or past them main memory's stream of its pattern, in
place or reading only; its fresh pages at the rate they are mapped. The flops and bytes are
XLA's cost analysis of the compiled function, an estimate read from its optimized HLO: it
counts a loop's body once, and a library call's work only where XLA knows it. The time is the median
of runs, each waited for, with the middle half of them. The report counts the fresh pages
each call touches (its minor page faults): a large output written into new memory faults on
every page, and donating an input the output can take over, or reusing the output, avoids it.
"""

import json
import sys
from dataclasses import asdict

import jax

from chapter2.cli import Parser, UsageError, arguments, lowered, run
from chapter2.layout import call_cost
from chapter2.roofline import measure_roofs, percent, place, rate_text
from chapter2.timing import bench

# The page's v2, on the page's sizes: 1000 and 1500 points of 64 coordinates.
QUICK = (
    "chapter2.cases.distances:distances_v2",
    "jax.random.normal(jax.random.key(1), (1000, 64)), "
    "jax.random.normal(jax.random.key(2), (1500, 64))",
)


def report(target: str, expression: str) -> dict:
    """The roofs, and the function's numbers and place under them."""
    args = arguments(expression)
    compiled = lowered(target, args).compile()
    roofs = measure_roofs()
    timing = bench(compiled, *args, n=20)
    fresh = call_cost(lambda: jax.block_until_ready(compiled(*args))).fresh_bytes
    placed = place(compiled, timing.median, roofs, fresh)
    return {
        "function": f"{target}({expression})",
        "roofs": asdict(roofs),
        "roofs in words": str(roofs),
        "flops": placed.flops,
        "bytes": placed.bytes,
        "footprint": placed.footprint,
        "in cache": placed.in_cache,
        "pattern": str(placed.pattern),
        "stream": placed.stream.stream,
        "bandwidth": placed.bandwidth,
        "intensity": placed.intensity,
        "ridge": placed.ridge,
        "seconds": {"median": timing.median, "low": timing.low, "high": timing.high},
        "runs": timing.n,
        "verdict": str(placed.bound),
        "meaning": placed.bound.meaning,
        "share": placed.share,
        "allowed seconds": placed.allowed,
        "fresh bytes per call": fresh,
    }


def printed(found: dict) -> str:
    """The report as a reader reads it."""
    roofs, seconds = found["roofs"], found["seconds"]
    median, low, high = (1e3 * seconds[k] for k in ("median", "low", "high"))
    rate = found["flops"] / seconds["median"]
    traffic = found["bytes"] / seconds["median"]
    return "\n".join(
        [
            found["function"],
            f"this machine's roofs, float32 on {roofs['cores']} "
            f"core{'s' if roofs['cores'] != 1 else ''}: {found['roofs in words']}",
            f"flops            {found['flops']:,.0f}",
            f"bytes accessed   {found['bytes']:,.0f}",
            f"arrays           {found['footprint']:,.0f} bytes, "
            + ("in a cache" if found["in cache"] else "past the caches")
            + f", {found['pattern']}: its roof is {rate_text(found['bandwidth'], 'B')}, the "
            f"{found['stream']}'s",
            f"intensity        {found['intensity']:.3g} flops per byte, against a ridge of "
            f"{found['ridge']:.3g}",
            f"time             {median:.3g} ms median ({low:.3g} to {high:.3g} ms for the "
            f"middle half of {found['runs']} runs)",
            f"rate             {rate_text(rate, 'FLOP')} and {rate_text(traffic, 'B')}",
            f"verdict          {found['verdict']}: {found['meaning']}",
            f"share            {percent(found['share'])} of what the roofs allow "
            f"({1e3 * found['allowed seconds']:.3g} ms)",
            fresh_pages(found["fresh bytes per call"], found["seconds"]["median"]),
        ]
    )


def fresh_pages(fresh: float, seconds: float) -> str:
    """The fresh pages a call touched, and the advice that removes them where they count."""
    if fresh < 2**20:
        return f"fresh pages      {fresh / 2**10:.0f} KiB a call"
    return (
        f"fresh pages      {fresh / 2**20:.0f} MiB a call: page faults, one per 4 KiB page, "
        f"part of its {1e3 * seconds:.3g} ms. Donate an input the output can take over "
        "(jax.jit(f, donate_argnums=...)), or reuse the output's buffer"
    )


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", help="MODULE:FUNCTION to compile and time")
    parser.add_argument("--args", help="the arguments, as a Python expression")
    parser.add_argument("--quick", action="store_true", help="the book's v2 distances")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    target, expression = QUICK if args.quick else (args.target, args.args)
    if not target or not expression:
        msg = "give MODULE:FUNCTION and --args (or --quick)"
        raise UsageError(msg)
    found = report(target, expression)
    print(json.dumps(found) if args.json else printed(found))
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
