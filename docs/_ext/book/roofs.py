"""This machine's roofs, measured once per build folder and shared by every page that places
a program under them (`chapter2.roofline`). The probe runs in a process of its own when the
first such page is read, before it executes; the roofs' values join each such page's cache
key (book.dependencies), so no page shows roofs of another run than its own timings. A build
whose roofs file is gone reads those pages again, and they measure anew."""

import hashlib
import json
import os
import time
from pathlib import Path

from book import SERIAL, build_folder
from book.kernels import KERNEL_ENV
from chapter2.fresh import run_probe, without_jax_settings
from chapter2.roofline import ROOFS_VARIABLE

ENGINE_MODULE = Path("chapter2") / "roofline.py"


def roofs_file(app) -> Path:
    return build_folder(app) / "roofs.json"


def places_programs(files: set[Path]) -> bool:
    """Whether a page whose engine files are `files` uses the roofs."""
    return any(path.as_posix().endswith(ENGINE_MODULE.as_posix()) for path in files)


def method_file(build: Path) -> Path:
    """Where a build keeps a hash of the code that measured its roofs, and the seconds its
    probe took (the pages' work, tools/build_benchmark.py counts it so)."""
    return build / "roofs.method.json"


def measured(app, method: set[Path]) -> str:
    """The roofs' JSON: the build's file, measured first if there is none or if the code of
    the `method` differs from the code that measured it (its contents, not its times)."""
    path, stamp = roofs_file(app), method_file(build_folder(app))
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in sorted(method))).hexdigest()
    kept = json.loads(stamp.read_text()) if stamp.is_file() else {}
    if not path.is_file() or kept.get("method") != digest:
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        roofs = run_probe(  # on the book's device, with JAX's defaults (book.kernels)
            "roofs", env={"JAX_PLATFORMS": "cpu"}, base=without_jax_settings(os.environ)
        )
        path.write_text(roofs)
        seconds = round(time.perf_counter() - started, 1)
        stamp.write_text(json.dumps({"method": digest, "seconds": seconds}))
    return path.read_text()


def probe_seconds(build: Path) -> float:
    """How long the build in `build` took to measure its roofs (0 where it measured none)."""
    stamp = method_file(build)
    return json.loads(stamp.read_text())["seconds"] if stamp.is_file() else 0.0


def share_with_kernels(app) -> None:
    """`builder-inited`: page kernels find the build's roofs in their environment."""
    KERNEL_ENV[ROOFS_VARIABLE] = str(roofs_file(app))


def measure_again(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: without a roofs file, every page that uses the roofs is read again."""
    if roofs_file(app).is_file():
        return []
    return sorted(
        doc
        for doc, files in env.dependencies.items()
        if doc in env.found_docs and places_programs({Path(f) for f in files})
    )


def setup(app):
    app.connect("builder-inited", share_with_kernels)
    app.connect("env-get-outdated", measure_again)
    return SERIAL
