"""What your training step costs, over one pass of its batches: compilations, NumPy data it
takes in, host values it hands back (each a wait for the device), donated inputs, time per
step and, for a jitted step, its share of this machine's roofs.

    python examples/step_audit.py MODULE:FACTORY
    python examples/step_audit.py --quick

FACTORY is a function of no arguments returning (update, state, batches), or (update, state,
batches, steps per call): `update(state, *batch)` returns `(state, ...)`. The audit calls it
once per batch, threading the state through (so a donated state is never reused), then times
more calls. The roofs are measured once the workloads load, in about two seconds. --quick
audits the book's training-step page: its first loop and its last.
"""

import json
import sys

from chapter2.audit import Audit, audit
from chapter2.cli import Parser, UsageError, load_function, run
from chapter2.roofline import measure_roofs
from chapter2.timing import milliseconds

QUICK = {
    "the loop as written": "chapter2.cases.training:as_written",
    "the loop made fast": "chapter2.cases.training:made_fast",
}


def workload(factory: str) -> tuple:
    """The factory's (update, state, batches, steps per call), or a one-line error."""
    try:
        made = load_function(factory)()
    except UsageError:
        raise
    except Exception as err:
        msg = f"{factory}() failed: {type(err).__name__}: {err}"
        raise UsageError(msg) from err
    if not isinstance(made, tuple) or len(made) not in (3, 4) or not made[2]:
        msg = f"{factory} should return (update, state, batches[, steps per call])"
        raise UsageError(msg)
    return made if len(made) == 4 else (*made, 1)


def printed(name: str, found: Audit) -> str:
    """The audit as a reader reads it."""
    step = found.per_step
    lines = [
        name,
        f"  compilations   {found.compilations_first} in the first call, "
        f"{found.compilations_later} in the {found.calls - 1} after it",
        f"  NumPy inputs   {found.numpy_inputs} a call"
        + (": JAX copies each to the device" if found.numpy_inputs else ""),
        f"  host results   {found.host_results} a call"
        + (": each waits for the device" if found.host_results else ""),
        "  waits          "
        + ("yes: a call returns only once its results are computed" if found.waits else "no"),
        f"  donated        {found.donated} input arrays a call",
        f"  time           {milliseconds(step.median)} ms a step ({milliseconds(step.low)} to "
        f"{milliseconds(step.high)} ms for the middle half of {step.n} calls, each waited for)",
    ]
    if found.placement is not None:
        lines.append(f"  roofs          {found.placement.verdict}")
    else:
        lines.append("  roofs          not placed: the update is not one jitted program")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("factory", nargs="?", help="MODULE:FACTORY returning the workload")
    parser.add_argument("--quick", action="store_true", help="the book's first and last loops")
    parser.add_argument("--json", action="store_true", help="print the audits as JSON")
    args = parser.parse_args(argv)
    if not args.quick and not args.factory:
        msg = "give MODULE:FACTORY (or --quick)"
        raise UsageError(msg)
    factories = QUICK if args.quick else {args.factory: args.factory}
    workloads = {name: workload(factory) for name, factory in factories.items()}
    roofs = measure_roofs()  # once a bad factory has had its say
    found = {
        name: audit(update, state, list(batches), roofs, steps_per_call=steps)
        for name, (update, state, batches, steps) in workloads.items()
    }
    if args.json:
        print(json.dumps({name: as_json(a) for name, a in found.items()}))
    else:
        print("\n".join(printed(name, a) for name, a in found.items()))
    return 0


def as_json(found: Audit) -> dict:
    """The audit's counts, its step time and its share of the roofs (None: not placed)."""
    share = found.placement.share if found.placement is not None else None
    counts = {k: v for k, v in vars(found).items() if isinstance(v, int)}
    return counts | {
        "waits": found.waits,
        "seconds per step": found.per_step.median,
        "share": share,
    }


if __name__ == "__main__":
    sys.exit(run(main))
