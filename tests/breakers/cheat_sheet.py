"""The claim of the page `cheat-sheet` fails when an API it lists is gone."""

import contextlib

import jax

from chapter2.cheat_sheet import missing, resolves


def step_annotations_removed(mp):
    """A JAX without jax.profiler.StepTraceAnnotation."""
    mp.delattr(jax.profiler, "StepTraceAnnotation")


def log_compiles_switches_on(mp):
    """A jax.log_compiles(True) that turns logging on when called, like a setter."""
    mp.setattr(jax, "log_compiles", lambda value=True: jax.config.update("jax_log_compiles", value))


def log_compiles_left_on(mp):
    """A jax.log_compiles whose `with` block leaves logging on after it."""

    @contextlib.contextmanager
    def log_compiles(enable=True):
        jax.config.update("jax_log_compiles", enable)
        yield

    saved = jax.config.jax_log_compiles
    mp.setattr(jax, "log_compiles", log_compiles)
    return lambda: jax.config.update("jax_log_compiles", saved)


BREAKERS = {
    "cheat-sheet-apis-exist": step_annotations_removed,
    "log-compiles-context-manager": log_compiles_switches_on,
}
PARTS = {
    "log-compiles-context-manager": {
        "a bare call returns a context manager": log_compiles_switches_on,
        "logged after the with block": log_compiles_left_on,
    }
}


def test_each_kind_of_entry_is_looked_up():
    assert resolves("jax.numpy.ones")
    assert resolves("jax.stages.Compiled.cost_analysis")
    assert resolves("config:jax_enable_x64")
    assert resolves("array:is_ready")
    assert resolves("array:format.layout")
    assert not resolves("array:format.no_such_attribute")
    assert not resolves("jax.numpy.no_such_function")
    assert not resolves("no_such_package.f")
    assert not resolves("config:jax_no_such_option")
    assert not resolves("array:no_such_attribute")


def test_every_name_of_a_row_is_looked_up():
    assert missing("jax.profiler.start_trace jax.profiler.no_stop") == ["jax.profiler.no_stop"]
    assert missing("jax.jit") == []
    assert missing("") == []
