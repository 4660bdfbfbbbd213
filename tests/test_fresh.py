import importlib
import os
import pkgutil
import sys
from pathlib import Path

import jax
import pytest

from chapter2 import fresh


@pytest.fixture
def probes(tmp_path, monkeypatch):
    """A package of throwaway probes, importable by the child through PYTHONPATH."""
    package = tmp_path / "throwaway_probes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.setattr(fresh, "PACKAGE", "throwaway_probes")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "throwaway_probes", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))

    def write(name: str, code: str) -> None:
        (package / f"{name}.py").write_text(code)
        importlib.invalidate_caches()

    return write


def test_runs_in_a_new_interpreter_with_extra_env_and_args(probes):
    probes(
        "echo",
        "import os, sys\n"
        "print(os.environ['GREETING'], *sys.argv[1:], os.getpid())\n"
        "print('noise', file=sys.stderr)\n",
    )
    words = fresh.run_probe("echo", "a", "b", env={"GREETING": "hello"}).split()
    assert words[:3] == ["hello", "a", "b"]
    assert int(words[3]) != os.getpid()


def test_failure_carries_the_childs_stderr(probes):
    probes("broken", "raise SystemExit('the flag was not read')\n")
    with pytest.raises(fresh.ProbeFailed, match="the flag was not read") as err:
        fresh.run_probe("broken")
    assert "throwaway_probes.broken exited with 1" in str(err.value)


def test_unknown_example_is_named(probes):
    with pytest.raises(ModuleNotFoundError, match="'nope'"):
        fresh.run_probe("nope")


def test_every_probe_of_the_book_is_tested_as_it_runs():
    """Each module of chapter2.probes is run by a test in tests/test_probes.py."""
    package = importlib.import_module(fresh.PACKAGE)
    probes = {m.name for m in pkgutil.iter_modules(package.__path__)}
    tested = (Path(__file__).parent / "test_probes.py").read_text()
    assert probes
    assert {p for p in probes if f'run_probe("{p}"' not in tested} == set()


def test_a_probe_runs_on_the_platform_its_caller_pinned(probes, monkeypatch):
    """A page about the CPU pins it (jax_default_device); on a machine whose default device is a
    GPU its probes must run on the CPU too, so they are started with JAX_PLATFORMS=cpu."""
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    probes("platforms", "import os\nprint(os.environ.get('JAX_PLATFORMS', 'unset'))\n")
    assert fresh.run_probe("platforms").strip() == "unset"
    with jax.default_device(jax.devices("cpu")[0]):
        assert fresh.run_probe("platforms").strip() == "cpu"
    assert fresh.run_probe("platforms").strip() == "unset"


def test_a_probe_starts_from_the_environment_it_is_given(probes, monkeypatch):
    """The build's roofs probe starts from JAX's defaults (book.roofs): `base` stands in for
    this process's environment, which stays as it is."""
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    probes("x64", "import os\nprint(os.environ.get('JAX_ENABLE_X64', 'unset'))\n")
    assert fresh.run_probe("x64").strip() == "1"
    defaults = fresh.without_jax_settings(os.environ)
    assert fresh.run_probe("x64", base=defaults).strip() == "unset"
    assert os.environ["JAX_ENABLE_X64"] == "1"


def test_run_py_runs_a_snippet_in_a_fresh_interpreter_with_its_env():
    out = fresh.run_py(
        """
        import os, sys
        print(os.environ["GREETING"], sys.argv[1], os.getpid())
        """,
        "there",
        env={"GREETING": "hello"},
    )
    greeting, arg, pid = out.split()
    assert (greeting, arg) == ("hello", "there")
    assert int(pid) != os.getpid()


def test_run_py_reports_a_failing_snippet_with_its_stderr():
    with pytest.raises(fresh.ProbeFailed, match="the snippet exited with 3") as err:
        fresh.run_py("import sys\nprint('why', file=sys.stderr)\nsys.exit(3)")
    assert "why" in str(err.value)
