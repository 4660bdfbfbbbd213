"""The claims of the page `training-step` fail when JAX behaves otherwise."""

import contextlib

import jax
import jax.numpy as jnp

from breakers.async_dispatch import compiles_on_every_call

ArrayImpl = type(jnp.zeros(()))  # the class of every jax.Array, reached by a public road
REAL_JIT = jax.jit


def never_ready(mp):
    """Arrays that never report their value computed, as if float() had not waited for it."""
    mp.setattr(ArrayImpl, "is_ready", lambda self: False)


def guard_that_allows_everything(mp):
    """A transfer_guard that guards nothing."""
    mp.setattr(jax, "transfer_guard", lambda level: contextlib.nullcontext())


def float_that_is_a_guarded_transfer(mp):
    """A float() that counts as a device-to-host transfer, as on a GPU, and is refused."""

    def refused(self):
        msg = "Disallowed device-to-host transfer"
        raise RuntimeError(msg)

    mp.setattr(ArrayImpl, "__float__", refused)


def donation_ignored(mp):
    """A jit that drops donate_argnums and donate_argnames: nothing is ever donated."""

    def jit(fun=None, **kwargs):
        kept = {k: v for k, v in kwargs.items() if not k.startswith("donate_")}
        return REAL_JIT(fun, **kept)

    mp.setattr(jax, "jit", jit)


def always_ready(mp):
    """Arrays that report their value computed at once, as if dispatch waited for it."""
    mp.setattr(ArrayImpl, "is_ready", lambda self: True)


def guard_that_refuses_device_put(mp):
    """A transfer_guard under which even an explicit device_put raises."""
    real_guard, real_put, guarded = jax.transfer_guard, jax.device_put, []

    @contextlib.contextmanager
    def transfer_guard(level):
        with real_guard(level):
            guarded.append(level)
            try:
                yield
            finally:
                guarded.pop()

    def device_put(*args, **kwargs):
        if guarded:
            msg = "Disallowed host-to-device transfer"
            raise RuntimeError(msg)
        return real_put(*args, **kwargs)

    mp.setattr(jax, "transfer_guard", transfer_guard)
    mp.setattr(jax, "device_put", device_put)


BREAKERS = {
    "float-loss-waits": never_ready,
    "transfer-guard-catches-numpy-batch": guard_that_allows_everything,
    "transfer-guard-misses-float-on-cpu": float_that_is_a_guarded_transfer,
    "ragged-batch-compiles-again": compiles_on_every_call,
    "donation-aliases-state": donation_ignored,
    "donated-array-deleted": donation_ignored,
    "donation-by-keyword": donation_ignored,
}
FORCED = []
PARTS = {
    "float-loss-waits": {"not ready at dispatch, mostly": always_ready},
    "transfer-guard-catches-numpy-batch": {"device batch raises": guard_that_refuses_device_put},
}
