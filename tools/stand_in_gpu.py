"""A stand-in GPU as the first device JAX lists, for a machine that has none.

Run before a page's code (the tests prepend it to a page run as a script; `nox -s
standin_gpu` makes it an IPython startup file of every page kernel), it makes
`jax.devices()` list a GPU first (the device the claims take for the machine's default when
a page has not pinned one) and `jax.default_backend()` say "gpu". The computations still
run on the CPU: it shows how the book reads where the default device is a GPU (which claims
are judged as the GPU's, which pages pin the CPU), never what a GPU computes.
"""

import jax


class StandInGpu:
    """Just enough of a jax.Device for the book to take it for a GPU."""

    platform, device_kind, id = "gpu", "stand-in GPU", 0

    def __repr__(self) -> str:
        return "StandInGpu(id=0)"


_devices = jax.devices


def _with_stand_in(backend=None):
    return _devices(backend) if backend else [StandInGpu(), *_devices()]


jax.devices = _with_stand_in
jax.default_backend = lambda: "gpu"
