"""Page kernels on IPC sockets (jupyter_client's provisioner extension point), so that
ipykernel never warns "Kernel is running over TCP without encryption" (myst-nb passes the
kernel manager no options). The socket path is absolute and short (Unix limits it)."""

import shutil
import tempfile
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner


class IPCProvisioner(LocalProvisioner):
    """A local kernel whose sockets are IPC files in a private temporary folder."""

    async def pre_launch(self, **kwargs):
        self._folder = tempfile.mkdtemp(prefix="k")
        self.parent.transport = "ipc"
        self.parent.ip = str(Path(self._folder) / "s")
        return await super().pre_launch(**kwargs)

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if not restart:
            shutil.rmtree(self._folder, ignore_errors=True)
