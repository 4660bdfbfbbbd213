"""Fetch the inventory of a library's published reference, which the book's intersphinx reads
offline.

    python tools/inventory.py jax      # the one reference JAX publishes, built from main
    python tools/inventory.py numpy    # the reference of the installed minor release
    python tools/inventory.py scipy    # the reference of the installed release

Writes data/inventories/NAME.inv as the reference publishes it
(`python -m sphinx.ext.intersphinx data/inventories/NAME.inv` prints it) and NAME.json: the
address its links point into, where it came from and when, and where the installed library
defines the classes it documents under other names.
"""

import argparse
import datetime as dt
import importlib.metadata
import json
import pkgutil
import sys
import urllib.request
from pathlib import Path

from sphinx.util.inventory import InventoryFile

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "inventories"
# JAX publishes one reference, built from main (jax-ml/jax#22709); NumPy one per minor
# release, SciPy one per release.
ADDRESSES = {
    "jax": "https://docs.jax.dev/en/latest/",
    "numpy": "https://numpy.org/doc/{minor}/",
    "scipy": "https://docs.scipy.org/doc/scipy-{version}/",
}


def defined_in(classes: set[str]) -> dict[str, str]:
    """{where a documented class is defined: its documented name}, where the two differ
    (`jax._src.profiler.TraceAnnotation`: jax.profiler.TraceAnnotation). sphinx-codeautolink
    follows a class to where it is defined; its `codeautolink_inventory_map` reads this. A
    class documented under two names goes to the one that ends in its own name."""
    moved = {}
    for name in sorted(classes):
        try:
            cls = pkgutil.resolve_name(name)
        except (ImportError, AttributeError, ValueError):
            continue  # documented, but not in the installed release
        where = f"{getattr(cls, '__module__', '')}.{getattr(cls, '__qualname__', '')}"
        standard = where.split(".", maxsplit=1)[0] in sys.stdlib_module_names  # ctypes.c_long
        if where == name or where in classes or standard:
            continue
        if where not in moved or name.rsplit(".", 1)[-1] == cls.__name__:
            moved[where] = name
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", choices=sorted(ADDRESSES))
    parser.add_argument("--url", help="fetch the inventory from here (default: the reference's)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    version = importlib.metadata.version(args.library)
    minor = ".".join(version.split(".")[:2])
    addresses = ADDRESSES[args.library].format(minor=minor, version=version)
    url = args.url or f"{addresses}objects.inv"
    with urllib.request.urlopen(url) as response:
        published = response.read()
    names = InventoryFile.loads(published, uri=addresses).data
    source = {
        "addresses": addresses,
        "fetched": f"{url} on {dt.datetime.now(dt.UTC).date()}",
        "installed": f"{args.library} {version}",
        "defined_in": defined_in(set(names.get("py:class", {}))),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.library}.inv").write_bytes(published)
    (args.out / f"{args.library}.json").write_text(json.dumps(source, indent=2) + "\n")
    print(f"{sum(map(len, names.values()))} names from {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
