"""The claims of the page `async-dispatch` fail when JAX behaves otherwise."""

import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from breakers.shared import config_option
from chapter2.claims import Status

ArrayImpl = type(jnp.zeros(()))  # the class of every jax.Array, reached by a public road
REAL_JIT = jax.jit
REAL_REPR = ArrayImpl.__repr__


def compiles_on_every_call(mp):
    """A jit that forgets its cache: every call compiles again."""

    def jit(f, **kwargs):
        def call(*args):
            fresh = functools.wraps(f)(lambda *a: f(*a))  # noqa: PLW0108 - a new function
            return REAL_JIT(fresh, **kwargs)(*args)

        return call

    mp.setattr(jax, "jit", jit)


def block_until_ready_waits_for_everything(mp):
    """A block_until_ready whose argument is optional (and that then returns None)."""
    real = jax.block_until_ready
    mp.setattr(jax, "block_until_ready", lambda x=None: None if x is None else real(x))


def block_until_ready_copies(mp):
    """A block_until_ready that returns a new pytree instead of its argument."""
    real = jax.block_until_ready
    mp.setattr(jax, "block_until_ready", lambda x: jax.tree.map(lambda leaf: leaf, real(x)))


def values_without_waiting(mp):
    """A JAX whose arrays hand the host made-up values at once, without waiting for them."""
    mp.setattr(ArrayImpl, "item", lambda self, *args: 0.0)
    mp.setattr(ArrayImpl, "__float__", lambda self: 0.0)
    mp.setattr(ArrayImpl, "__bool__", lambda self: False)
    mp.setattr(ArrayImpl, "__array__", lambda self, dtype=None, copy=None: np.zeros(self.shape))
    mp.setattr(ArrayImpl, "tolist", lambda self: np.zeros(self.shape).tolist())


def repr_prints_values(mp):
    """A repr that prints the values of every array, however large."""
    mp.setattr(ArrayImpl, "__repr__", lambda self: f"Array({np.asarray(self)!r})")


def repr_waits(mp):
    """A repr that waits for the computation before it returns."""
    mp.setattr(ArrayImpl, "__repr__", lambda self: REAL_REPR(self.block_until_ready()))


def work_already_done(mp):
    """A machine so fast that results are ready as soon as they are dispatched."""
    mp.setattr(ArrayImpl, "is_ready", lambda self: True)


def traces_every_call(mp):
    """A jit that traces its function again on every call, though it compiles it once."""

    def jit(f, **kwargs):
        jitted = REAL_JIT(f, **kwargs)

        def call(*args):
            jax.make_jaxpr(lambda *a: f(*a))(*args)  # noqa: PLW0108 - a new function: traced anew
            return jitted(*args)

        return call

    mp.setattr(jax, "jit", jit)


def argument_named_tree(mp):
    """A block_until_ready whose required argument is named `tree`."""
    real = jax.block_until_ready

    def block_until_ready(tree):
        return real(tree)

    mp.setattr(jax, "block_until_ready", block_until_ready)


def waits_for_arrays_only(mp):
    """A block_until_ready that waits for its jax.Array leaves and calls no other leaf."""

    def block_until_ready(x):
        for leaf in jax.tree.leaves(x):
            if isinstance(leaf, jax.Array):
                leaf.block_until_ready()
        return x

    mp.setattr(jax, "block_until_ready", block_until_ready)


def repr_reads_values(mp):
    """A repr that prints a large array's shape, but reads its values first."""
    mp.setattr(ArrayImpl, "__repr__", lambda self: (np.asarray(self), REAL_REPR(self))[1])


def format_in_full(mp):
    """An f-string of a jax.Array that prints every value, however many."""
    mp.setattr(
        ArrayImpl,
        "__format__",
        lambda self, spec: np.array2string(np.asarray(self), threshold=sys.maxsize),
    )


def format_without_waiting(mp):
    """An f-string of a jax.Array that prints made-up values at once, without waiting."""
    mp.setattr(ArrayImpl, "__format__", lambda self, spec: format(np.zeros(self.shape), spec))


def format_as_repr(mp):
    """A jax.Array whose f-string shows what its repr shows, shape and dtype only."""
    mp.setattr(ArrayImpl, "__format__", lambda self, spec: repr(self))


BREAKERS = {
    "cheap-computation-runs-inline": work_already_done,
    "first-call-compiles": compiles_on_every_call,
    "cpu-async-dispatch-default": config_option("jax_cpu_enable_async_dispatch", False),
    "block-until-ready-needs-argument": block_until_ready_waits_for_everything,
    "block-until-ready-pytree": block_until_ready_copies,
    "implicit-synchronization": values_without_waiting,
    "repr-large-array-shape-only": repr_prints_values,
    "format-fetches-values": format_as_repr,
    "repr-does-not-wait": repr_waits,
}
FORCED = [
    ("not-ready-after-dispatch", work_already_done, Status.DIFFERS_HERE, "dispatch: True"),
]
PARTS = {
    "first-call-compiles": {"traces in the first call, the second": traces_every_call},
    "block-until-ready-needs-argument": {"the missing argument": argument_named_tree},
    "block-until-ready-pytree": {"another leaf's block_until_ready called": waits_for_arrays_only},
    "repr-large-array-shape-only": {"1 MiB: reads no values": repr_reads_values},
    "format-fetches-values": {
        "summarized past 1000 elements, not at 1000": format_in_full,
        "a result ready after its f-string": format_without_waiting,
    },
}
