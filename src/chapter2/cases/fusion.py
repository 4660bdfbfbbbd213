"""Case study of the page `fusion`: the XLA flag that switches fusion off, and a softmax whose
reductions sit between its elementwise steps."""

import jax.numpy as jnp

# XLA_FLAGS for a fresh process whose programs XLA does not fuse (XLA reads them at start-up).
UNFUSED = {"XLA_FLAGS": "--xla_disable_hlo_passes=fusion"}


def softmax_by_hand(t):
    """softmax over the last axis: a max and a sum (reductions) between elementwise steps."""
    m = t.max(axis=-1, keepdims=True)
    e = jnp.exp(t - m)
    return e / e.sum(axis=-1, keepdims=True)
