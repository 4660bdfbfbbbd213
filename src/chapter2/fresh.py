"""Running a script of `examples/` in a fresh interpreter.

Some behaviour can only be shown in a new process: XLA reads `XLA_FLAGS` once, at start-up,
and a persistent cache proves itself only when a second process hits it.
"""

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class ExampleFailed(RuntimeError):
    """A fresh-process example exited with an error; the message carries its stderr."""


def run_example(
    name: str, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> str:
    """Run `examples/<name>.py` with `args` and extra `env`; return what it printed on stdout."""
    script = EXAMPLES / f"{name}.py"
    if not script.is_file():
        raise FileNotFoundError(f"no example called {name!r} in {EXAMPLES.name}/")
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise ExampleFailed(
            f"examples/{name}.py exited with {proc.returncode}:\n{proc.stderr.strip()}"
        )
    return proc.stdout
