"""The machine and software the book was executed on, read live at build time."""

import os
import platform
import sys
from pathlib import Path

import jax
import jaxlib


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux, else what platform reports)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def default_device() -> jax.Device:
    """The device JAX computes on by default: the one `jax_default_device` names when a page
    pinned it (the CPU, on a page about the CPU), else the machine's first."""
    device = jax.config.jax_default_device or jax.devices()[0]
    return jax.devices(device)[0] if isinstance(device, str) else device


def environment() -> dict[str, str]:
    """Python, JAX, jaxlib, backend, devices and CPU of this process."""
    return {
        "Python": sys.version.split()[0],
        "JAX": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "backend": jax.default_backend(),
        "devices": ", ".join(str(d) for d in jax.devices()),
        "CPU": f"{cpu_model()} ({os.cpu_count()} cores)",
        "platform": platform.platform(terse=True),
    }
