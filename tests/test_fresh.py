import pytest

from chapter2 import fresh


@pytest.fixture
def examples(tmp_path, monkeypatch):
    monkeypatch.setattr(fresh, "EXAMPLES", tmp_path)
    return tmp_path


def test_runs_in_a_new_interpreter_with_extra_env_and_args(examples):
    (examples / "echo.py").write_text(
        "import os, sys\n"
        "print(os.environ['GREETING'], *sys.argv[1:])\n"
        "print('noise', file=sys.stderr)\n"
    )
    out = fresh.run_example("echo", "a", "b", env={"GREETING": "hello"})
    assert out == "hello a b\n"


def test_failure_carries_the_childs_stderr(examples):
    (examples / "broken.py").write_text("raise SystemExit('the flag was not read')\n")
    with pytest.raises(fresh.ExampleFailed, match="the flag was not read") as err:
        fresh.run_example("broken")
    assert "examples/broken.py exited with 1" in str(err.value)


def test_unknown_example_is_named(examples):
    with pytest.raises(FileNotFoundError, match="'nope'"):
        fresh.run_example("nope")


def test_default_folder_is_the_repository_examples():
    assert fresh.EXAMPLES.name == "examples" and (fresh.EXAMPLES.parent / "pyproject.toml").exists()
