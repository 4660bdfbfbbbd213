"""The book states what JAX does by default, whatever the shell that builds it sets: before
any page kernel or probe starts (they inherit this process's environment), the build drops
the variables that configure JAX or XLA (`chapter2.fresh.jax_settings`) and says which."""

import os

from sphinx.util import logging

from book import SERIAL
from chapter2.fresh import jax_settings

logger = logging.getLogger(__name__)


def drop_jax_settings(app, config) -> None:
    """`config-inited`: the build's processes start from JAX's defaults."""
    dropped = jax_settings(os.environ)
    for name in dropped:
        del os.environ[name]
    if dropped:
        logger.info(
            "The book states JAX's defaults: its pages run without %s, set in this shell.",
            ", ".join(dropped),
        )


def setup(app):
    app.connect("config-inited", drop_jax_settings)
    return SERIAL
