"""Where executed notebooks are cached, named after everything a page sees besides its code."""

import hashlib
import shutil
from importlib.metadata import version
from pathlib import Path


def code_fingerprint(*folders: Path) -> str:
    """Hash the Python files under `folders` and the installed jax/jaxlib versions."""
    digest = hashlib.sha256()
    for package in ("jax", "jaxlib"):
        digest.update(f"{package}=={version(package)}\n".encode())
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.py")):
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_folder(caches: Path, *code: Path) -> Path:
    """The cache for this JAX and this code; older caches for the same JAX are removed.

    The folder is named `jax-<version>-<fingerprint>`, so a build under another JAX keeps
    its own cache and never deletes the baseline's.
    """
    prefix = f"jax-{version('jax')}-"
    current = caches / (prefix + code_fingerprint(*code))
    for stale in caches.glob(prefix + "*"):
        if stale != current:
            shutil.rmtree(stale, ignore_errors=True)
    return current
