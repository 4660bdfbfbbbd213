"""Where executed notebooks are cached: a folder per Python and JAX (engine files are in
each page's own key: book.dependencies)."""

import contextlib
import hashlib
import shutil
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.cache.main import JupyterCacheBase

from book import SERIAL, build_folder


@contextlib.contextmanager
def opened(folder: Path | str) -> Iterator[JupyterCacheBase]:
    """jupyter-cache's cache in `folder`, its database engine disposed on leaving."""
    cache = get_cache(str(folder))
    try:
        yield cache
    finally:
        cache.db.dispose()


def cache_folder(caches: Path) -> Path:
    """`jax-<version>-<fingerprint>` for this Python and JAX; stale ones of this JAX go."""
    seen = f"python {sys.version_info[:2]}\njax=={version('jax')}\njaxlib=={version('jaxlib')}\n"
    prefix = f"jax-{version('jax')}-"
    current = caches / (prefix + hashlib.sha256(seen.encode()).hexdigest()[:16])
    for stale in caches.glob(prefix + "*"):
        if stale != current:
            shutil.rmtree(stale, ignore_errors=True)
    return current


def cache_in_the_build(app, config) -> None:
    """`config-inited`: myst-nb's execution cache in the build folder (book.build_folder)."""
    config.nb_execution_cache_path = str(cache_folder(build_folder(app) / ".jupyter_cache"))


def setup(app):
    app.connect("config-inited", cache_in_the_build)
    return SERIAL
