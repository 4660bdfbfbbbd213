"""A stand-in GPU listed first by `jax.devices()`, run before a page's code (a test's script,
or an IPython startup file in `nox -s standin_gpu`): it shows which claims a GPU-default
machine judges as the GPU's and which pages pin the CPU, never what a GPU computes."""

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
