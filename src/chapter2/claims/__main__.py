"""`python -m chapter2.claims [--json FILE] [--page P]`: every claim checked in one process,
with JAX's defaults (the variables that configure JAX or XLA are dropped); exits 1 when a
claim drifted or a claims module could not be loaded."""

import argparse
import datetime as dt
import os
import platform
import sys
from pathlib import Path

from chapter2.claims import Status, evaluate_all, load_errors
from chapter2.fresh import jax_settings, without_jax_settings
from chapter2.records import ClaimsReport, Machine


def report(page: str | None = None) -> ClaimsReport:
    """Every verdict of the registry (of one page's claims), with the versions and date."""
    import jax  # noqa: PLC0415 - after main made sure JAX starts from its defaults
    import jaxlib  # noqa: PLC0415

    from chapter2.environment import cpu_model, xla_cores  # noqa: PLC0415 - imports JAX

    verdicts = evaluate_all(page)
    return ClaimsReport(
        jax=jax.__version__,
        jaxlib=jaxlib.__version__,
        python=platform.python_version(),
        recorded=dt.date.today().isoformat(),
        claims=[v.record() for v in verdicts],
        modules_not_loaded=load_errors(),
        machine=Machine(cpu_model(), xla_cores()),
    )


def main(argv: list[str] | None = None) -> int:
    if dropped := jax_settings(os.environ):  # JAX reads them once it is imported: start again
        print(
            f"the claims state JAX's defaults: checked without {', '.join(dropped)}",
            file=sys.stderr,
            flush=True,
        )
        arguments = sys.argv[1:] if argv is None else argv
        os.execve(
            sys.executable,
            [sys.executable, "-m", "chapter2.claims", *arguments],
            without_jax_settings(os.environ),
        )
    parser = argparse.ArgumentParser(prog="python -m chapter2.claims", description=__doc__)
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the verdicts here")
    parser.add_argument("--page", help="only the claims whose home is this page")
    args = parser.parse_args(argv)
    data = report(args.page)
    if args.page and not data.claims:
        parser.error(f"no claim's home is the page {args.page!r}")
    for record in data.claims:
        print(f"{record.status:>13}  {record.id}: {record.evidence}")
    for module, error in data.modules_not_loaded.items():
        print(f"{'not loaded':>13}  claims module {module}: {error}")
    if args.json:
        data.dump(args.json)
    drifted = any(r.status is Status.DRIFTED for r in data.claims)
    return 1 if drifted or data.modules_not_loaded else 0


if __name__ == "__main__":
    sys.exit(main())
