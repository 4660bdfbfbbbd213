"""A fingerprint of everything a page's output depends on besides the page's own code."""

import hashlib
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
