"""MathJax served from the site, not a CDN (django-static-mathjax ships its files)."""

import shutil
from pathlib import Path

import mathjax

from book import SERIAL


def copy_mathjax(app, exception) -> None:
    """`build-finished`: MathJax's es5 bundle, with its fonts, in `_static/mathjax/`."""
    if exception is None and app.builder.format == "html":
        source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
        shutil.copytree(source, Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def setup(app):
    app.connect("build-finished", copy_mathjax)
    return SERIAL
