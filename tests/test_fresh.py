import importlib
import importlib.util
import os
import sys

import pytest

from chapter2 import fresh


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """A package of throwaway examples, importable by the child through PYTHONPATH."""
    package = tmp_path / "throwaway_examples"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.setattr(fresh, "PACKAGE", "throwaway_examples")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "throwaway_examples", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))

    def write(name: str, code: str) -> None:
        (package / f"{name}.py").write_text(code)
        importlib.invalidate_caches()

    return write


def test_runs_in_a_new_interpreter_with_extra_env_and_args(examples):
    examples(
        "echo",
        "import os, sys\n"
        "print(os.environ['GREETING'], *sys.argv[1:], os.getpid())\n"
        "print('noise', file=sys.stderr)\n",
    )
    words = fresh.run_example("echo", "a", "b", env={"GREETING": "hello"}).split()
    assert words[:3] == ["hello", "a", "b"] and int(words[3]) != os.getpid()


def test_failure_carries_the_childs_stderr(examples):
    examples("broken", "raise SystemExit('the flag was not read')\n")
    with pytest.raises(fresh.ExampleFailed, match="the flag was not read") as err:
        fresh.run_example("broken")
    assert "throwaway_examples.broken exited with 1" in str(err.value)


def test_unknown_example_is_named(examples):
    with pytest.raises(ModuleNotFoundError, match="'nope'"):
        fresh.run_example("nope")


def test_the_book_examples_are_found_by_module_name():
    assert fresh.PACKAGE == "chapter2.examples"
    for name in ("xla_dump", "ynn_probe"):
        assert importlib.util.find_spec(f"{fresh.PACKAGE}.{name}") is not None
