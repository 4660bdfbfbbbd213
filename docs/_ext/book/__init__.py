"""The book's Sphinx layer: `chapter2` returns data, this turns it into pages. A package of
its own (docs/_ext/pyproject.toml declares its renderers and kernel provisioner)."""

import hashlib
import subprocess
from pathlib import Path

from chapter2 import records

# What each module's setup declares: the book builds with -j 1 (one page at a time, so no
# timing shares the machine), and its handlers are written for that.
SERIAL = {"parallel_read_safe": False, "parallel_write_safe": False}


def build_folder(app) -> Path:
    """Where a build keeps what it learned, beside its HTML folder (book.build puts the
    doctrees there too): the execution cache, the record, the roofs, the notebooks."""
    return Path(app.outdir).parent


def book_commit(root: Path) -> str:
    """The commit the book's sources are at, with "+" when tracked files hold changes since
    ("" when they are not a git checkout): `git describe`, every tag excluded."""
    describe = ["git", "describe", "--always", "--dirty=+", "--exclude=*"]
    done = subprocess.run(describe, cwd=root, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


# The modules with a setup of their own, in the order they connect their handlers.
MODULES = (
    "numbering",
    "dependencies",
    "verdicts",
    "matrix",
    "record",
    "notebooks",
    "links",
    "failures",
    "site",
    "drift_page",
    "recorded_notes",
    "glyphs",
    "kernels",
    "mathml",
)


def layer_hash(package: Path = Path(__file__).parent) -> str:
    """A hash of this package's code and of the records Sphinx's environment keeps
    (`chapter2.records`, pickled between builds): as a config value, a change re-reads every
    page, so no kept record lacks a field its class has gained."""
    digest = hashlib.sha256()
    for path in [*sorted(package.glob("*.py")), Path(records.__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def setup(app):
    """Each module sets itself up; the order is the order their handlers of an event run in."""
    for module in ("cache", "roofs", *MODULES):
        app.setup_extension(f"book.{module}")
    app.add_config_value("book_layer_hash", layer_hash(), "env", types=[str])
    app.add_css_file("book.css")
    app.add_css_file("icons.css")  # the theme's icons as SVG, not its icon font
    return {"version": "1", **SERIAL}
