"""Every page's code as a plain script outside Jupyter, with a stand-in GPU listed first.

    python tools/pages_as_scripts.py [PAGE ...]     # `nox -s scripts`: every page by default

Each page runs on the CPU named explicitly (JAX_PLATFORMS=cpu), as it would on a machine
whose default device is a GPU: tools/stand_in_device.py puts a stand-in GPU first in
`jax.devices()`, the device the claims take for the machine's default. It cannot show what a
GPU computes (data/backends/ holds a real run); it shows that the book is written for one: a
page about the CPU pins the CPU in its setup cell and its verdicts are the CPU's, every other
page's claims are judged as the GPU's, a fact of the CPU alone cannot be checked there, and
no page stops. Exits 1 and names the page when one of these fails.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

from book.dependencies import claims_verified
from record_backend import PIN_CPU, ROOT, notebook_pages, page_script, run_script

from chapter2.records import Status, VerdictRecord

STAND_IN = ROOT / "tools" / "stand_in_device.py"

# After the stand-in GPU, every verdict is written down with the platform it was judged on.
RECORD_VERDICTS = """
import atexit, json, chapter2.claims as _claims

_run_check, _seen = _claims.run_check, []

def _recorded(entry):
    verdict = _run_check(entry)
    _seen.append(verdict.record().to_dict())
    return verdict

_claims.run_check = _recorded
atexit.register(lambda: open({out!r}, "w").write(json.dumps(_seen)))
"""


def problems_of(page: Path, folder: Path, platform: str = "gpu") -> list[str]:
    """What went wrong when `page` ran as a script with a stand-in device of `platform` first:
    nothing, if all held."""
    seen = folder / f"{page.stem}.verdicts.json"
    prelude = STAND_IN.read_text() + RECORD_VERDICTS.format(out=str(seen))
    script = folder / f"{page.stem}.py"
    script.write_text(page_script(page, prelude))
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "STAND_IN_PLATFORM": platform}
    status, output, _ = run_script(script, page.parent, env)
    if status != 0:
        return [f"{page.name} stopped ({status}):\n{output[-2000:]}"]
    text = page.read_text()
    about_the_cpu = PIN_CPU in text
    verdicts = (
        [VerdictRecord.from_dict(v) for v in json.loads(seen.read_text())] if seen.exists() else []
    )
    found = []
    if bool(verdicts) != bool(claims_verified(ROOT / "src", text)):
        found.append(f"{page.name}: its checks ran {len(verdicts)} times")
    for verdict in verdicts:
        if verdict.platform != ("cpu" if about_the_cpu else platform):
            found.append(f"{page.name}: {verdict.id} was judged on the {verdict.platform}")
        only_on = verdict.only_on
        of_the_cpu_elsewhere = not about_the_cpu and only_on and only_on[0] == "cpu"
        if (verdict.status is Status.CANNOT_CHECK) != bool(of_the_cpu_elsewhere):
            found.append(f"{page.name}: {verdict.id} came out {str(verdict.status)!r}")
    return found


def main(argv: list[str]) -> int:
    pages = [ROOT / "docs" / f"{p}.md" for p in argv] or notebook_pages()
    found = []
    with tempfile.TemporaryDirectory() as folder:
        for page in pages:
            problems = problems_of(page, Path(folder))
            print(f"{page.stem}: {'ok' if not problems else 'FAILED'}", flush=True)
            found += problems
    print("\n".join(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
