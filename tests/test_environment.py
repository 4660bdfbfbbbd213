import os

import jax

from chapter2.environment import cpu_model, environment


def test_environment_reports_this_process():
    env = environment()
    assert env["JAX"] == jax.__version__
    assert env["backend"] == jax.default_backend()
    assert str(jax.devices()[0]) in env["devices"]
    assert env["CPU"].startswith(cpu_model())
    assert f"({os.cpu_count()} cores)" in env["CPU"]
