"""Page kernels on IPC sockets (jupyter_client's provisioner extension point), so that
ipykernel never warns "Kernel is running over TCP without encryption" (myst-nb passes the
kernel manager no options). The socket path is absolute and short (Unix limits it). Each
kernel starts with the IPython extension that names the drifted claim behind a failing cell
(chapter2.claims.attribution)."""

import shutil
import tempfile
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner

ATTRIBUTION = "chapter2.claims.attribution"


class IPCProvisioner(LocalProvisioner):
    """A local kernel whose sockets are IPC files in a private temporary folder."""

    async def pre_launch(self, **kwargs):
        self._folder = tempfile.mkdtemp(prefix="k")
        self.parent.transport = "ipc"
        self.parent.ip = str(Path(self._folder) / "s")
        launch = await super().pre_launch(**kwargs)
        return launch | {"cmd": [*launch["cmd"], f"--ext={ATTRIBUTION}"]}

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if not restart:
            shutil.rmtree(self._folder, ignore_errors=True)
