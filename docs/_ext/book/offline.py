"""The book works offline and tells no third party who reads it: MathJax is served locally.

Sphinx loads MathJax from a CDN by default. The `docs` extra installs MathJax 3 as static
files (the PyPI package django-static-mathjax, which needs no Django); conf.py points
`mathjax_path` at `_static/mathjax/`, and this copies MathJax's files there.
"""

import shutil
from pathlib import Path

import mathjax


def copy_mathjax(app, exception) -> None:
    """`build-finished`: MathJax's es5 bundle, with its fonts, in `_static/mathjax/`."""
    if exception is None and app.builder.format == "html":
        source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
        shutil.copytree(source, Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)
