import os
import tomllib
from importlib.metadata import PackageNotFoundError

import jax
from conftest import ROOT

from chapter2 import environment as env_module
from chapter2.environment import baseline_jax, cpu_model, environment


def test_environment_reports_this_process():
    env = environment()
    assert env["JAX"] == jax.__version__
    assert env["backend"] == jax.default_backend()
    assert str(jax.devices()[0]) in env["devices"]
    assert env["CPU"].startswith(cpu_model())
    assert f"({os.cpu_count()} cores)" in env["CPU"]


def test_the_baseline_is_the_pinned_jax_installed_or_run_from_the_source_tree(monkeypatch):
    """Run with PYTHONPATH=src on a machine where nothing can be installed (the GPU machine),
    the package has no metadata: the pin is read from pyproject.toml."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pin = next(r for r in extra["optional-dependencies"]["baseline"] if r.startswith("jax=="))
    assert baseline_jax() == pin.removeprefix("jax==")

    def not_installed(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr(env_module, "requires", not_installed)
    assert baseline_jax() == pin.removeprefix("jax==")
