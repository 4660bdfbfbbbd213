"""What your training step costs, over one pass of its batches: compilations, NumPy data it
takes in, host values it hands back (each a wait for the device), donated inputs, time per
step and, for a jitted step, its share of this machine's roofs; for a model that gives its
flops per step, its MFU (or, on a device whose vendor peak it does not know, its share of the
measured peak).

    python examples/step_audit.py MODULE:FACTORY
    python examples/step_audit.py --quick

FACTORY is a function of no arguments returning (update, state, batches), (update, state,
batches, steps per call) or (update, state, batches, steps per call, model flops per step):
`update(state, *batch)` returns `(state, ...)`. The audit calls it once per batch, threading
the state through (so a donated state is never reused), then times more calls. The roofs are
measured once the workloads load, in about two seconds. --quick audits a small classifier's
loop as often written and made fast, and the training-step page's transformer in its CPU
config.
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
    "the transformer's step": "chapter2.training_numbers:audited_step",
}


def workload(factory: str) -> tuple:
    """The factory's (update, state, batches, steps per call, model flops per step or None),
    or a one-line error."""
    try:
        made = load_function(factory)()
    except UsageError:
        raise
    except Exception as err:
        msg = f"{factory}() failed: {type(err).__name__}: {err}"
        raise UsageError(msg) from err
    if not isinstance(made, tuple) or len(made) not in (3, 4, 5) or not made[2]:
        msg = f"{factory} should return (update, state, batches[, steps per call[, flops]])"
        raise UsageError(msg)
    return (*made, 1, None)[:5] if len(made) == 3 else (*made, None)[:5]


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
        counted = (  # a scanned update's loop body is its step, timed per step
            "; XLA counts the body of its loop once, so it may count too little work"
            if found.loops and found.steps_per_call == 1
            else ""
        )
        lines.append(f"  roofs          {found.placement.verdict}{counted}")
    else:
        lines.append("  roofs          not placed: the update is not one jitted program")
    if found.utilization is not None:
        lines.append(f"  model flops    {found.utilization}")
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
        name: audit(update, state, list(batches), roofs, steps_per_call=steps, model_flops=flops)
        for name, (update, state, batches, steps, flops) in workloads.items()
    }
    if args.json:
        print(json.dumps({name: as_json(a) for name, a in found.items()}))
    else:
        print("\n".join(printed(name, a) for name, a in found.items()))
    return 0


def as_json(found: Audit) -> dict:
    """The audit's counts, its step time, its share of the roofs (None: not placed) and, for a
    model that gave its flops, its MFU or its share of the measured peak (None otherwise)."""
    share = found.placement.share if found.placement is not None else None
    used = found.utilization
    counts = {k: v for k, v in vars(found).items() if isinstance(v, int)}
    return counts | {
        "waits": found.waits,
        "seconds per step": found.per_step.median,
        "share": share,
        "mfu": used.share if used is not None and used.vendor else None,
        "share of measured peak": used.share if used is not None and not used.vendor else None,
    }


if __name__ == "__main__":
    sys.exit(run(main))
