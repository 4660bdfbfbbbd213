"""Where executed notebooks are cached, named after what every page sees: Python and JAX.

What each page imports from the engine is folded into that page's own cache key instead
(book.dependencies), so an engine change re-executes only the pages that use it.
"""

import contextlib
import fcntl
import functools
import hashlib
import shutil
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.cache.main import JupyterCacheBase


@contextlib.contextmanager
def opened(folder: Path | str) -> Iterator[JupyterCacheBase]:
    """jupyter-cache's cache in `folder`, its database closed on leaving the block.

    `get_cache` opens an SQLAlchemy engine whose pooled connections nothing closes; the
    garbage collector closes them later, wherever it runs, and Python 3.13 warns then
    (ResourceWarning). `Engine.dispose()` closes them here.
    """
    cache = get_cache(str(folder))
    try:
        yield cache
    finally:
        cache.db.dispose()


def fingerprint() -> str:
    """A hash of what every page sees: the Python version and jax/jaxlib's versions."""
    digest = hashlib.sha256(f"python {sys.version_info[:2]}\n".encode())
    for package in ("jax", "jaxlib"):
        digest.update(f"{package}=={version(package)}\n".encode())
    return digest.hexdigest()[:16]


def cache_folder(caches: Path) -> Path:
    """The cache for this Python and JAX; older caches for the same JAX are removed.

    The folder is named `jax-<version>-<fingerprint>`, so a build under another JAX keeps
    its own cache and never deletes the baseline's.
    """
    prefix = f"jax-{version('jax')}-"
    current = caches / (prefix + fingerprint())
    for stale in caches.glob(prefix + "*"):
        if stale != current:
            shutil.rmtree(stale, ignore_errors=True)
    # Create the cache and its database now, before `sphinx-build -j` forks its workers:
    # workers that create it themselves race ("table settings already exists").
    with opened(current) as cache:
        cache.list_cache_records()
    serialize_writes(current / "write.lock")
    return current


def serialize_writes(lock: Path) -> None:
    """Let one `-j` worker at a time write jupyter-cache's database.

    Workers writing at once lost records: after a parallel clean build of four pages, the
    cache held three (tests/test_build.py builds five in a row to prove it no longer does).
    """
    for name in ("add_nb_to_project", "cache_notebook_bundle"):
        original = getattr(JupyterCacheBase, name)
        original = getattr(original, "__wrapped__", original)

        @functools.wraps(original)
        def locked(self, *args, _original=original, **kwargs):
            with lock.open("a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                return _original(self, *args, **kwargs)

        setattr(JupyterCacheBase, name, locked)
