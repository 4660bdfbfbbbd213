"""Page kernels on IPC sockets (jupyter_client's provisioner extension point), so that
ipykernel never warns "Kernel is running over TCP without encryption" (myst-nb passes the
kernel manager no options). The socket path is absolute and short (Unix limits it). Each
kernel starts with the IPython extension that names the drifted claim behind a failing cell
(chapter2.claims.attribution), in the build's environment without the variables that
configure JAX or XLA and with KERNEL_ENV (its page, the build's roofs: the build's own
environment is left as it is), and is ended soon after its last cell
(SHUTDOWN_SECONDS); the build says which of the shell's JAX settings no page sees. It is
jupyter_client's default provisioner in the build's process, set on
the provisioner factory's configurable `default_provisioner_name` while the build lasts;
when it ends, the factory's default is put back and KERNEL_ENV emptied, so that a second
build in the same process starts from neither."""

import os
import shutil
import tempfile
from pathlib import Path

from jupyter_client.provisioning import KernelProvisionerFactory, LocalProvisioner
from sphinx.util import logging

from book import SERIAL
from chapter2.claims.attribution import PAGE_VARIABLE
from chapter2.fresh import jax_settings, without_jax_settings

logger = logging.getLogger(__name__)

ATTRIBUTION = "chapter2.claims.attribution"
PROVISIONER = "book-ipc"  # its name as docs/_ext/pyproject.toml's entry point gives it
# A page's kernel has sent every output when it is asked to shut down; Python and JAX then take
# 0.4 to 0.6 s to tear down (a clean build waits that on each page). Half of this is allowed
# for that, then the kernel is terminated.
SHUTDOWN_SECONDS = 0.2
# What the next page kernel's environment adds: handlers set it before the kernel of the page
# being read starts (name_the_page; book.roofs, the roofs' file).
KERNEL_ENV: dict[str, str] = {}


class IPCProvisioner(LocalProvisioner):
    """A local kernel whose sockets are IPC files in a private temporary folder."""

    async def pre_launch(self, **kwargs):
        self._folder = tempfile.mkdtemp(prefix="k")
        self.parent.transport = "ipc"
        self.parent.ip = str(Path(self._folder) / "s")
        launch = await super().pre_launch(**kwargs)
        return launch | {
            "cmd": [*launch["cmd"], f"--ext={ATTRIBUTION}"],
            "env": without_jax_settings(launch["env"]) | KERNEL_ENV,
        }

    def get_shutdown_wait_time(self, recommended: float = 5.0) -> float:
        return SHUTDOWN_SECONDS

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if not restart:
            shutil.rmtree(self._folder, ignore_errors=True)


def name_the_page(app, docname: str, source: list[str]) -> None:
    """`source-read`: the kernel started next knows its page (chapter2.claims.attribution)."""
    KERNEL_ENV[PAGE_VARIABLE] = docname


class PageKernels:
    """The provisioner of the pages' kernels, for one build."""

    def __init__(self) -> None:
        self.before = ""

    def use(self, app) -> None:
        """`builder-inited`: the pages' kernels, all started after it, use this provisioner."""
        factory = KernelProvisionerFactory.instance()
        self.before = factory.default_provisioner_name
        factory.default_provisioner_name = PROVISIONER

    def put_back(self, app, exception) -> None:
        """`build-finished`: the factory's default as it was, and no page's variables left."""
        KernelProvisionerFactory.instance().default_provisioner_name = self.before
        KERNEL_ENV.clear()


def say_what_pages_run_without(app, config) -> None:
    """`config-inited`: name the shell's JAX settings that no page sees (the roofs' probe,
    book.roofs, starts without them too): the book states what JAX does by default."""
    dropped = jax_settings(os.environ)
    if dropped:
        logger.info(
            "The book states JAX's defaults: its pages run without %s, set in this shell.",
            ", ".join(dropped),
        )


def setup(app):
    app.connect("config-inited", say_what_pages_run_without)
    kernels = PageKernels()
    app.connect("builder-inited", kernels.use)
    app.connect("source-read", name_the_page)
    app.connect("build-finished", kernels.put_back)
    return SERIAL
