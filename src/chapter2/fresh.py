"""Running Python in a fresh interpreter: a probe of `chapter2.probes`, or a snippet of yours.

Some behaviour can only be shown in a new process: XLA reads the environment variable
`XLA_FLAGS` once, when JAX starts its backend, and a persistent cache proves itself only when
a second process hits it. The probes are modules of the package, so
`python -m chapter2.probes.<name>` finds them wherever the package is installed; `run_py`
runs any snippet the same way.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path

PACKAGE = "chapter2.probes"
# The book states what JAX does by default. A shell may set JAX's configuration variables
# (JAX_ENABLE_X64, JAX_COMPILATION_CACHE_DIR, ...) and XLA's flags, which every process it
# starts inherits; the book's processes start without them. JAX_PLATFORMS stays: the book's
# own sessions choose with it the device a build reads.
KEPT = ("JAX_PLATFORMS",)


def jax_settings(env: Mapping[str, str]) -> list[str]:
    """The variables of `env` that configure JAX or XLA, but those the book keeps (KEPT)."""
    return sorted(k for k in env if (k.startswith("JAX_") or k == "XLA_FLAGS") and k not in KEPT)


def without_jax_settings(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the variables that configure JAX or XLA (JAX_PLATFORMS kept)."""
    dropped = set(jax_settings(env))
    return {k: v for k, v in env.items() if k not in dropped}


class ProbeFailed(RuntimeError):
    """A probe exited with an error; the message carries its stderr."""


# Accelerators one process at a time can hold: a child of a process that holds one runs on
# the machine's CPU (the TPU's runtime refuses a second process the chip).
ONE_PROCESS = ("tpu",)


def pinned_platform() -> dict[str, str]:
    """`JAX_PLATFORMS` for a probe started by this process: the platform it pinned as its
    default device (a page about the CPU, on a machine whose default device is an
    accelerator), or the CPU where this process holds a device of ONE_PROCESS."""
    jax = sys.modules.get("jax")
    if jax is None:
        return {}
    device = jax.config.jax_default_device
    if device is not None:
        return {"JAX_PLATFORMS": device if isinstance(device, str) else device.platform}
    if jax.devices()[0].platform in ONE_PROCESS:
        return {"JAX_PLATFORMS": "cpu"}
    return {}


def _run(
    command: list[str],
    label: str,
    env: dict[str, str] | None,
    timeout: float,
    base: Mapping[str, str] | None = None,
) -> str:
    """Run `command` with `base` (this process's environment if None) and extra `env`, on the
    platform its caller pinned; its stdout, or ProbeFailed naming `label`, with its stderr."""
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**(os.environ if base is None else base), **pinned_platform(), **(env or {})},
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        msg = f"{label} exited with {proc.returncode}:\n{proc.stderr.strip()}"
        raise ProbeFailed(msg)
    return proc.stdout


def run_py(source: str, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    """Run the Python `source` (dedented) in a fresh interpreter, with `args` and extra `env`
    (`XLA_FLAGS`, say); return what it printed. A failure raises ProbeFailed with its stderr."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "snippet.py"
        script.write_text(textwrap.dedent(source))
        return _run([sys.executable, str(script), *args], "the snippet", env, timeout)


def run_probe(
    name: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    base: Mapping[str, str] | None = None,
) -> str:
    """Run `python -m chapter2.probes.<name> args` with extra `env`, in `base` (this process's
    environment if None); return its stdout. It runs on the platform of the default device its
    caller pinned, if any."""
    module = f"{PACKAGE}.{name}"
    if importlib.util.find_spec(module) is None:
        msg = f"no probe called {name!r} in {PACKAGE}"
        raise ModuleNotFoundError(msg)
    return _run([sys.executable, "-m", module, *args], module, env, timeout, base)
