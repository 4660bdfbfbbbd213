"""Runs recorded on other machines (`data/backends/<name>/`), each read as one typed record.

A run's folder holds `run.json` and the files it names: the claims checked on the device
and, where recorded, on the same machine's CPU under the same JAX (the control that tells
the device's difference from the release's); what the pages did; what the chapter's
sections measured there, and the training. Every committed `run.json` is read as it was
written (`chapter2.records.RunFile`). Nothing here imports JAX or Sphinx.
"""

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from chapter2.records import ClaimsReport, RunFile, VerdictRecord, value_at
from chapter2.timing import BenchResult  # imports no JAX

# A device its vendor names otherwise than JAX does: JAX's name, the vendor's.
SOLD_AS = {"TPU v5 lite": "TPU v5e"}


@dataclass(frozen=True)
class RecordedRun:
    """One recorded run: the device, the software, its date and what each file recorded."""

    name: str  # its folder's name, by which pages and notes address it
    folder: Path
    device: str  # as JAX names it: "TPU v5 lite", "NVIDIA H200"
    platform: str  # "tpu", "gpu"
    jax: str
    jaxlib: str
    recorded: str  # the date of its measurements, as the run wrote it
    verdicts: dict[str, VerdictRecord]  # the device's verdicts, by today's claim ids
    host_verdicts: dict[str, VerdictRecord] = field(default_factory=dict)  # the same JAX, CPU
    files: dict[str, str] = field(default_factory=dict)  # what each file holds: its name

    @property
    def sold_as(self) -> str:
        """The device as its vendor names it, where that is not JAX's name."""
        return SOLD_AS.get(self.device, self.device)

    def read(self, part: str):
        """The JSON of the file that holds `part` ("numbers", "training", "pages")."""
        if part not in self.files:
            msg = f"the run {self.name} recorded no {part}"
            raise KeyError(msg)
        return json.loads((self.folder / self.files[part]).read_text())

    @functools.cached_property
    def numbers(self) -> dict:
        """What the chapter's sections measured there ({} where the run kept none), read once."""
        return self.read("numbers") if "numbers" in self.files else {}

    def timing(self, key: str):
        """The timing recorded at `key` ({"median", "runs"}, in seconds) as a BenchResult."""
        return BenchResult(tuple(self.value(key)["runs"]))

    def value(self, key: str):
        """The value at `key`, a path of names joined by "/" (a number indexes a list): into
        the numbers, into a claim's observation (`claim-id/name`), or one of the run's own
        facts (`device`)."""
        observed = {cid: v.observed or {} for cid, v in self.verdicts.items()}
        facts = {"device": self.device, "jax": self.jax, "recorded": self.recorded}
        return value_at({**self.numbers, **observed, **facts}, key, f"the run {self.name}")


def _verdicts(path: Path, renamed: dict[str, str]) -> tuple[dict[str, VerdictRecord], str]:
    """A claims file's verdicts by today's ids, and the jaxlib it ran."""
    recorded = ClaimsReport.load(path)
    return {renamed.get(c.id, c.id): c for c in recorded.claims}, recorded.jaxlib


def read_run(folder: Path) -> RecordedRun:
    """The run recorded in `folder`, read as its run.json was written."""
    run = RunFile.load(folder / "run.json")
    files = run.files
    verdicts, jaxlib = _verdicts(folder / files["claims"], run.renamed)
    host = (
        _verdicts(folder / files["host claims"], run.renamed)[0] if "host claims" in files else {}
    )
    return RecordedRun(
        name=folder.name,
        folder=folder,
        device=run.device,
        platform=run.platform,
        jax=run.jax,
        jaxlib=run.jaxlib or jaxlib,
        recorded=run.recorded,
        verdicts=verdicts,
        host_verdicts=host,
        files=files,
    )


def recorded_runs(folder: Path | str) -> list[RecordedRun]:
    """Every run recorded under `folder`, by name."""
    return [read_run(path.parent) for path in sorted(Path(folder).glob("*/run.json"))]


def recorded_run(folder: Path | str, name: str) -> RecordedRun:
    """The run recorded under `folder` in the folder `name`."""
    path = Path(folder) / name
    if not (path / "run.json").is_file():
        known = ", ".join(r.name for r in recorded_runs(folder)) or "none"
        msg = f"no run {name!r} is recorded in {folder} (recorded: {known})"
        raise FileNotFoundError(msg)
    return read_run(path)
