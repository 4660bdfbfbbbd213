"""The book states what JAX does by default, whatever the shell that builds it sets: the
processes that run JAX for a page (its kernel, book.kernels; the roofs' probe, book.roofs)
start without the variables that configure JAX or XLA (`chapter2.fresh.jax_settings`), and
the build says which it left out."""

import os

from sphinx.util import logging

from book import SERIAL
from chapter2.fresh import jax_settings

logger = logging.getLogger(__name__)


def say_what_pages_run_without(app, config) -> None:
    """`config-inited`: name the shell's JAX settings that no page sees."""
    dropped = jax_settings(os.environ)
    if dropped:
        logger.info(
            "The book states JAX's defaults: its pages run without %s, set in this shell.",
            ", ".join(dropped),
        )


def setup(app):
    app.connect("config-inited", say_what_pages_run_without)
    return SERIAL
