"""Running a probe of `chapter2.probes` in a fresh interpreter.

Some behaviour can only be shown in a new process: XLA reads the environment variable
`XLA_FLAGS` once, at start-up, and a persistent cache proves itself only when a second
process hits it. The probes are modules of the package, so `python -m chapter2.probes.<name>`
finds them wherever the package is installed.
"""

import importlib.util
import os
import subprocess
import sys

from chapter2.quiet import LOCK_VARIABLE

PACKAGE = "chapter2.probes"


class ProbeFailed(RuntimeError):
    """A probe exited with an error; the message carries its stderr."""


def pinned_platform() -> dict[str, str]:
    """`JAX_PLATFORMS` for a probe started by a process that pinned its default device (a
    page about the CPU, on a machine whose default device is a GPU): the probe runs there too."""
    jax = sys.modules.get("jax")
    device = jax.config.jax_default_device if jax else None
    if device is None:
        return {}
    return {"JAX_PLATFORMS": device if isinstance(device, str) else device.platform}


def run_probe(
    name: str, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> str:
    """Run `python -m chapter2.probes.<name> args` with extra `env`; return its stdout.

    It runs on the platform of the default device its caller pinned, if any. The probe never
    takes the timing lock of a parallel build (it would wait for the cell that started it): a
    cell that runs a timed probe holds it, `with chapter2.quiet.alone()`.
    """
    module = f"{PACKAGE}.{name}"
    if importlib.util.find_spec(module) is None:
        msg = f"no probe called {name!r} in {PACKAGE}"
        raise ModuleNotFoundError(msg)
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env={
            k: v
            for k, v in {**os.environ, **pinned_platform(), **(env or {})}.items()
            if k != LOCK_VARIABLE
        },
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        msg = f"{module} exited with {proc.returncode}:\n{proc.stderr.strip()}"
        raise ProbeFailed(msg)
    return proc.stdout
