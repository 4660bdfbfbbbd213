"""The machine and software the book was executed on, read live at build time."""

import os
import platform
import sys
from pathlib import Path

import jax
import jaxlib

CPUINFO = Path("/proc/cpuinfo")


def cpuinfo_field(names: tuple[str, ...], cpuinfo: Path = CPUINFO) -> str | None:
    """The value of the first line of Linux's /proc/cpuinfo that starts with one of `names`."""
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith(names):
                return line.split(":", 1)[1].strip()
    return None


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux, else what platform reports)."""
    return cpuinfo_field(("model name",)) or platform.processor() or "unknown"


# The CPU flags of bfloat16 arithmetic as Linux names them: x86's AVX-512 and AMX, Arm's.
BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


def bfloat16_flags(cpuinfo: Path = CPUINFO) -> list[str] | None:
    """The bfloat16 instructions the CPU's flags list (Linux), or None where none are read."""
    flags = cpuinfo_field(("flags", "Features"), cpuinfo)
    return None if flags is None else [f for f in flags.split() if f in BFLOAT16_FLAGS]


SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def last_level_cache(caches: Path = SYSFS_CACHES) -> int | None:
    """The size in bytes of the CPU's last-level cache (from Linux's sysfs), or None."""
    found = {}
    for cache in caches.glob("index*"):
        size = (cache / "size").read_text().strip() if (cache / "size").exists() else ""
        if size[:-1].isdigit() and size[-1] in "KMG":
            level = int((cache / "level").read_text())
            found[level] = int(size[:-1]) * 1024 ** " KMG".index(size[-1])
    return found[max(found)] if found else None


THP_SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def transparent_hugepages(setting: Path = THP_SETTING) -> str | None:
    """Linux's transparent hugepage mode ("always", "madvise" or "never": the one sysfs
    brackets), a setting of the kernel, not a fact a measurement could give; None elsewhere."""
    if not setting.exists():
        return None
    chosen = [word[1:-1] for word in setting.read_text().split() if word.startswith("[")]
    return chosen[0] if chosen else None


def xla_cores() -> int:
    """The cores this process may run on, which XLA's CPU thread pool uses."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def default_device() -> jax.Device:
    """The device JAX computes on by default: the one `jax_default_device` names when a page
    pinned it (the CPU, on a page about the CPU), else the machine's first."""
    device = jax.config.jax_default_device or jax.devices()[0]
    return jax.devices(device)[0] if isinstance(device, str) else device


def cpus(machine: int, usable: int) -> str:
    """The machine's CPU count, and the count this process may use where it is fewer."""
    return f"{machine} CPUs" + (f", {usable} usable by this process" if usable < machine else "")


def environment() -> dict[str, str]:
    """Python, JAX, jaxlib, backend, devices and CPU of this process."""
    return {
        "Python": sys.version.split()[0],
        "JAX": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "backend": jax.default_backend(),
        "devices": ", ".join(str(d) for d in jax.devices()),
        "CPU": f"{cpu_model()} ({cpus(os.cpu_count() or 1, xla_cores())})",
        "last-level cache": f"{llc / 2**20:g} MiB" if (llc := last_level_cache()) else "unknown",
        "platform": platform.platform(terse=True),
    }
