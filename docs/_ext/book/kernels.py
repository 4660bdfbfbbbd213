"""Kernels for page execution: IPC sockets, and the claims of the page each kernel runs.

ipykernel warns "Kernel is running over TCP without encryption" whenever its transport is
TCP without CurveZMQ keys. The kernels that execute the pages talk to the build over local
IPC sockets instead, so there is nothing to encrypt and nothing to warn about. myst-nb passes
no options to the kernel manager, so the transport is set by a kernel provisioner, made the
default from conf.py. The socket path is absolute and short (a fresh temporary folder):
Unix socket paths are limited to about 100 bytes, and a relative one would make kernel and
client disagree.

The provisioner also loads two extensions into every kernel: `chapter2.claims.attribution`,
so that a cell failing under another JAX names the drifted claim of its page, and
`chapter2.quiet`, so that no timing runs while another page's cell computes (see each module;
the lock file lies in the build folder).
"""

import os
import shutil
import tempfile
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner

from chapter2.claims.attribution import PAGE_VARIABLE
from chapter2.claims.registry import DOCS_VARIABLE
from chapter2.quiet import LOCK_VARIABLE


def share_timing_lock(app) -> None:
    """`builder-inited`: the kernels of this build share one timing lock (chapter2.quiet), and
    read the claims' statements from this build's pages."""
    os.environ[LOCK_VARIABLE] = str(Path(app.outdir).parent / "timing.lock")
    os.environ[DOCS_VARIABLE] = str(app.srcdir)


def note_page(app, docname: str, source: list[str]) -> None:
    """`source-read`: the kernel started for this page inherits its name."""
    os.environ[PAGE_VARIABLE] = docname


class IPCProvisioner(LocalProvisioner):
    """A local kernel whose sockets are IPC files in a private temporary folder."""

    async def pre_launch(self, **kwargs):
        self._folder = tempfile.mkdtemp(prefix="k")
        self.parent.transport = "ipc"
        self.parent.ip = str(Path(self._folder) / "s")
        extensions = ["--ext=chapter2.claims.attribution", "--ext=chapter2.quiet"]
        extra = [*kwargs.pop("extra_arguments", []), *extensions]
        return await super().pre_launch(extra_arguments=extra, **kwargs)

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if not restart:
            shutil.rmtree(self._folder, ignore_errors=True)
