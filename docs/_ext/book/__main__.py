"""`python -m book COMMAND ARGS`: the layer's three commands, each its module's `main`.

build SOURCE OUTDIR [sphinx-build options]   the one build command (book.build)
drift REPORT.json                             exit 1 when the report says the book drifted
site SITE PLAN                                assemble the versioned site a plan names
"""

import sys
from importlib import import_module

COMMANDS = ("build", "drift", "site")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    return import_module(f"book.{args[0]}").main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
