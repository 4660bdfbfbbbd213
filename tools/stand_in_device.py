"""A stand-in accelerator listed first by `jax.devices()`, run before a page's code (a test's
script, or an IPython startup file in `nox -s standin_gpu`): it shows which claims a machine
whose default device is a GPU or a TPU judges as that device's and which pages pin the CPU,
never what such a device computes. Its platform is STAND_IN_PLATFORM's ("gpu" unless set)."""

import os

import jax

PLATFORM = os.environ.get("STAND_IN_PLATFORM", "gpu")


class StandInDevice:
    """Just enough of a jax.Device for the book to take it for one of PLATFORM."""

    platform, device_kind, id = PLATFORM, f"stand-in {PLATFORM.upper()}", 0

    def __repr__(self) -> str:
        return f"StandInDevice({self.platform!r}, id=0)"


_devices = jax.devices


def _with_stand_in(backend=None):
    return _devices(backend) if backend else [StandInDevice(), *_devices()]


jax.devices = _with_stand_in
jax.default_backend = lambda: PLATFORM
