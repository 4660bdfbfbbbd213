"""Every page's code runs to the end as a plain script outside Jupyter, on the CPU named
explicitly (JAX_PLATFORMS=cpu), as it would on a machine whose default device is a GPU: a
stand-in GPU (tools/stand_in_gpu.py) is the first device `jax.devices()` lists, the one the
claims take for the machine's default. The computations run on the CPU, so this cannot show
what a GPU computes (data/backends/ holds a real run); it shows that the book is written for
one: a page about the CPU pins the CPU in its setup cell and its verdicts are the CPU's,
every other page's claims are judged as the GPU's, a fact of the CPU alone is reported
there, and no page stops.
"""

import json
import os

import pytest
from conftest import DOCS, NOTEBOOK_PAGES, PIN_CPU, ROOT
from record_backend import page_script, run_script  # tools/ is on pytest's pythonpath

from chapter2.claims import claims

pytestmark = pytest.mark.slow
STAND_IN_GPU = ROOT / "tools" / "stand_in_gpu.py"

# After tools/stand_in_gpu.py, every verdict is written down with the platform it was judged on.
RECORD_VERDICTS = """
import atexit, json, chapter2.claims as _claims

_run_check, _seen = _claims.run_check, []

def _recorded(entry):
    verdict = _run_check(entry)
    _seen.append([entry.id, verdict.versions["platform"], str(verdict.status)])
    return verdict

_claims.run_check = _recorded
atexit.register(lambda: open({out!r}, "w").write(json.dumps(_seen)))
"""


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_a_page_runs_to_the_end_as_a_script_with_a_gpu_as_default_device(page, tmp_path):
    source = DOCS / f"{page}.md"
    seen = tmp_path / "verdicts.json"
    prelude = STAND_IN_GPU.read_text() + RECORD_VERDICTS.format(out=str(seen))
    script = tmp_path / f"{page}.py"
    script.write_text(page_script(source, prelude))
    status, output, _ = run_script(script, DOCS, {**os.environ, "JAX_PLATFORMS": "cpu"})
    assert status == 0, f"{page}: {output[-2000:]}"

    text = source.read_text()
    about_the_cpu = PIN_CPU in text
    verdicts = json.loads(seen.read_text())
    assert bool(verdicts) == ("verify" in text), f"{page}: {verdicts}"
    platforms = {platform for _, platform, _ in verdicts}
    assert platforms <= {"cpu" if about_the_cpu else "gpu"}, f"{page}: {verdicts}"
    for claim_id, _, status in verdicts:
        only_on = claims()[claim_id].only_on
        of_the_cpu_elsewhere = not about_the_cpu and only_on and only_on[0] == "cpu"
        assert (status == "cannot check") == bool(of_the_cpu_elsewhere), (claim_id, status)
