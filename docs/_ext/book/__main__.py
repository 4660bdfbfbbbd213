"""`python -m book COMMAND ARGS`: the layer's three commands, each its module's `main`.

build SOURCE OUTDIR [sphinx-build options]   the one build command (book.build)
drift REPORT.json                             exit 1 when the report says the book drifted
site SITE PLAN                                assemble the versioned site a plan names
"""

import sys
from importlib import import_module

# Each command and how many arguments it takes, at least and at most (None: no limit).
COMMANDS = {"build": (2, None), "drift": (1, 1), "site": (2, 2)}


def main(argv: list[str] | None = None) -> int:
    """The command's exit status; 2, with this usage, for an unknown command or a wrong number
    of arguments (1 is drift's "the book drifted")."""
    args = list(sys.argv[1:] if argv is None else argv)
    least, most = COMMANDS.get(args[0] if args else "", (0, -1))
    if not least <= len(args) - 1 <= (most if most is not None else len(args)):
        print(__doc__, file=sys.stderr)
        return 2
    return import_module(f"book.{args[0]}").main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
