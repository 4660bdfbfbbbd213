"""The book's typed records: what a claim's check found (`VerdictRecord`), every claim
checked in one process (`ClaimsReport`) and under each release (`ClaimsMatrix`), what a
build learned of its pages (`BuildRecord`), what a run on another machine says of itself
(`RunFile`) and what the site is built from (`SitePlan`). A record kept as a file of its own
has `load(path)` and `dump(path)`; a list of them, or a folder, `read` (and `write`). One
kept inside another is read by `from_dict` where its JSON form needs more than its fields
(an old key, a nested record), and written by `to_dict` where it is written alone. It
imports neither JAX, Sphinx nor docutils, and runs on Python 3.11, where a recording command
runs.

A record is loaded from every committed file as it was written: a verdict written before
its page was called `page` names it `section`, and a recorded run's verdict may lack the
fields added since (they take their defaults). Free-form values stay mappings: a check's
`expected` and `observed`, a timed comparison's numbers."""

import dataclasses
import functools
import json
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from chapter2.releases import release_key


class Kind(StrEnum):
    ASSERTED = "asserted"  # JAX decides it: a difference is drift and fails the build
    OBSERVED = "observed"  # the machine decides it (CPU, allocator): a difference is reported,
    # not asserted; a check that could not run fails the build all the same (`status_of`)


class Status(StrEnum):
    HOLDS = "holds"
    DRIFTED = "drifted"
    AS_SPECIFIED = "as specified"  # an observed claim: this machine behaved as the book says
    DIFFERS_HERE = "differs here"  # an observed claim: this machine behaved otherwise
    CANNOT_CHECK = "cannot check"  # what the claim is about does not exist in this JAX

    @property
    def symbol(self) -> str:
        return SHOWN[self][0]

    def words(self, jax: str) -> str:
        """The status in plain words, as a verdict's mark says it for JAX `jax`."""
        return SHOWN[self][1].format(jax=jax)

    @property
    def meaning(self) -> str:
        """What the symbol means in a table of releases."""
        return SHOWN[self][2]

    @property
    def did(self) -> str:
        """What a check that came out so did, as a sentence says it ("held")."""
        return SHOWN[self][3]

    @property
    def as_the_page_says(self) -> bool:
        """Whether the check came out as the page says (checked, or seen on this machine)."""
        return self in (Status.HOLDS, Status.AS_SPECIFIED)


# Every place that shows a status (marks, matrix, legend, drift report, banner, a recorded
# run's reasons) reads it here: its symbol, its words, its meaning in a table, its verb.
SHOWN = {
    Status.HOLDS: ("✓", "checked on JAX {jax}", "holds", "held"),
    Status.DRIFTED: (
        "✗",
        "not true on JAX {jax}",
        "found otherwise, or the check failed",
        "drifted",
    ),
    Status.AS_SPECIFIED: (
        "✓",
        "seen on this book's machine (JAX {jax})",
        "seen",
        "did as the book describes",
    ),
    Status.DIFFERS_HERE: (
        "≠",
        "not seen on this book's machine (JAX {jax})",
        "a fact of the machine that behaved otherwise",
        "did otherwise",
    ),
    Status.CANNOT_CHECK: (
        "○",
        "cannot be checked on JAX {jax}",
        "could not be checked there: its subject is missing, or its check cannot run there",
        "could not check it",
    ),
}


ABSENT = "(not observed)"  # a value a check names but did not give, as every report says it


@dataclasses.dataclass(frozen=True)
class Compared:
    """One value a check names: what JAX gave (ABSENT where it gave none) and what the book
    expects of it (None where it expects nothing: context)."""

    name: str
    observed: Any
    expected: Any = None
    expects: bool = False

    @property
    def differs(self) -> bool:
        return self.expects and self.observed != self.expected


def compared(
    expected: Mapping[str, Any] | None, observed: Mapping[str, Any] | None, ordered: bool = False
) -> list[Compared]:
    """Every value a check names, those it expects first, each with what JAX gave: in the
    check's order, or sorted by name (`ordered`; the execution cache sorts a verdict's keys,
    so a page says them sorted whether its notebook ran now or came from the cache)."""
    expected, observed = expected or {}, observed or {}
    names = [*expected, *(n for n in observed if n not in expected)]
    if ordered:
        names = [*sorted(expected), *sorted(set(observed) - set(expected))]
    return [Compared(n, observed.get(n, ABSENT), expected.get(n), n in expected) for n in names]


@dataclasses.dataclass(frozen=True)
class Versions:
    """Where a check ran: JAX, jaxlib, and the default device's platform ("cpu") and kind."""

    jax: str
    jaxlib: str
    platform: str
    device: str


@dataclasses.dataclass(frozen=True)
class AtBaseline:
    """A claim as the baseline JAX's recorded claims found it, where a drift report shows it."""

    status: Status
    observed: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))


@dataclasses.dataclass(frozen=True)
class BaselineClaims:
    """The baseline JAX's recorded claims that a drift report compares with."""

    jax: str
    recorded: str


@dataclasses.dataclass(frozen=True)
class VerdictRecord:
    """A claim's verdict as data: the claim (its page, label, kind and where it applies), what
    its check found on one JAX and backend, and the check's code. A page's output carries
    it, the build's record keeps it, a recorded run and the matrix of releases store it."""

    id: str
    page: str  # the page that states it
    label: str  # its statement's label on that page
    kind: Kind
    status: Status
    jax: str
    jaxlib: str
    platform: str = ""  # the backend it was checked on: "cpu", "tpu", "gpu"
    device: str = ""
    warning: bool = False  # shown in a box on its page
    rests_on: list[str] = dataclasses.field(default_factory=list)
    only_on: list[str] | None = None  # (platform, why) for a fact of one backend
    expected_on: dict[str, list] = dataclasses.field(default_factory=dict)
    checks: str = ""  # what the check tests, in a reader's words
    unchecked: str = ""  # what the statement says beyond it
    expected: dict[str, Any] | None = None  # None: the check could not run
    observed: dict[str, Any] | None = None
    said: str = ""  # what was run and what JAX did, in a reader's words
    repeats: str = ""  # what on the page the check ran again ("the cell above")
    evidence: str = ""  # the values in one line, or why the check could not run
    check_source: str = ""
    statement: str = ""  # what its page says, where a report carries it
    baseline: AtBaseline | None = None  # a drift report's

    def __post_init__(self) -> None:  # a kind and a status as their words, made members
        object.__setattr__(self, "kind", Kind(self.kind))
        object.__setattr__(self, "status", Status(self.status))

    @property
    def checked(self) -> list[str] | None:
        """The names of the values the check compares (None where it could not run)."""
        return list(self.expected or {}) or None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "VerdictRecord":
        """A verdict from its JSON form, as any committed file wrote it."""
        found = dict(data)
        if "section" in found:  # the page's key in a file written before it was renamed
            found["page"] = found.pop("section")
        if found.get("baseline"):
            found["baseline"] = AtBaseline(**found["baseline"])
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(found) - known)
        if unknown:
            msg = f"verdict {found.get('id')!r} has fields no verdict has: {', '.join(unknown)}"
            raise ValueError(msg)
        return cls(**found)

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form (`from_dict` reads it back equal)."""
        return json.loads(json.dumps(dataclasses.asdict(self)))


def _renamed(data: Mapping[str, Any], **new_names: str) -> dict[str, Any]:
    """`data` with each old key that it holds under its new name."""
    return {new_names.get(key, key): value for key, value in data.items()}


class JsonFile:
    """A record kept as a JSON file of its own: `dump` writes it whole, `load` reads it back."""

    @classmethod
    def load(cls, path: str | Path):
        return cls(**json.loads(Path(path).read_text()))

    def dump(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n")


@dataclasses.dataclass(frozen=True)
class Machine:
    """The CPU a record was made on, and the cores XLA used there."""

    cpu: str
    cores: int

    def __str__(self) -> str:
        return f"{self.cpu} ({self.cores} cores)"


@dataclasses.dataclass(frozen=True)
class ClaimsReport(JsonFile):
    """Every claim checked in one process (`python -m chapter2.claims --json`): the versions,
    the date, the machine where it recorded it, each verdict, and the claims modules that
    process could not import. The claims matrix keeps one per release; a recorded run, one
    for its device and one for its host."""

    jax: str
    jaxlib: str
    python: str
    recorded: str  # the date it ran
    claims: list[VerdictRecord]
    modules_not_loaded: dict[str, str] = dataclasses.field(default_factory=dict)
    machine: Machine | None = None  # where the report recorded it

    @property
    def by_id(self) -> dict[str, VerdictRecord]:
        return {v.id: v for v in self.claims}

    @property
    def observations(self) -> dict[str, Mapping[str, Any]]:
        """What each claim observed, by its id."""
        return {v.id: v.observed or {} for v in self.claims}

    def value(self, key: str) -> Any:
        """The value at `key` ("jax", "recorded", or `claim-id/name/...` into an observation)."""
        values = {"jax": self.jax, "recorded": self.recorded, **self.observations}
        return value_at(values, key, f"the record of JAX {self.jax}")

    @classmethod
    def load(cls, path: str | Path) -> "ClaimsReport":
        found = json.loads(Path(path).read_text())
        found["claims"] = [VerdictRecord.from_dict(v) for v in found["claims"]]
        found["machine"] = Machine(**found["machine"]) if found.get("machine") else None
        return cls(**found)


@dataclasses.dataclass(frozen=True)
class ClaimAcrossReleases:
    """One claim under each release the matrix measured."""

    page: str
    kind: Kind
    status: dict[str, Status]  # by release
    since: str | None  # asserted: the oldest release from which it holds in every later one

    def measured_before(self, release: str, releases: list[str]) -> str | None:
        """The newest release older than `release` that checked it; None where none did (a
        partial run of the matrix, or a claim added since, leaves releases unmeasured)."""
        return next(
            (r for r in reversed(releases[: releases.index(release)]) if r in self.status), None
        )


@dataclasses.dataclass(frozen=True)
class ClaimsMatrix:
    """The claims matrix: a `ClaimsReport` per JAX release, oldest first, as
    `nox -s matrix` recorded them in data/matrix/jax-<release>.json."""

    reports: list[ClaimsReport]

    def __post_init__(self) -> None:  # oldest first, whatever order they were given in
        object.__setattr__(self, "reports", sorted(self.reports, key=lambda r: release_key(r.jax)))

    @classmethod
    def read(cls, folder: str | Path) -> "ClaimsMatrix":
        """The reports in `folder` (none where it holds none)."""
        return cls([ClaimsReport.load(p) for p in Path(folder).glob("jax-*.json")])

    @property
    def releases(self) -> list[str]:
        return [report.jax for report in self.reports]

    def report_of(self, release: str) -> ClaimsReport | None:
        return next((report for report in self.reports if report.jax == release), None)

    @functools.cached_property
    def claims(self) -> dict[str, ClaimAcrossReleases]:
        """Each claim any report checked, with its status under each release that checked it."""
        found: dict[str, ClaimAcrossReleases] = {}
        for report in self.reports:
            for verdict in report.claims:
                claim = found.setdefault(
                    verdict.id, ClaimAcrossReleases(verdict.page, verdict.kind, {}, None)
                )
                claim.status[report.jax] = verdict.status
        return {
            claim_id: dataclasses.replace(claim, since=self._since(claim))
            for claim_id, claim in found.items()
        }

    def _since(self, claim: ClaimAcrossReleases) -> str | None:
        """The oldest release from which an asserted claim holds in every later release that
        measured it."""
        first = None
        for release in reversed(self.releases if claim.kind is Kind.ASSERTED else []):
            if release not in claim.status:  # unmeasured: it says nothing either way
                continue
            if claim.status[release] is not Status.HOLDS:
                break
            first = release
        return first


@dataclasses.dataclass(frozen=True)
class Statement:
    """What a page says under a claim's label, as a reader reads it, and the line it starts
    on (None where docutils gives none)."""

    text: str = ""
    line: int | None = 0


@dataclasses.dataclass(frozen=True)
class FailingCell:
    """A cell that raised, as its page's executed notebook shows it."""

    page: str
    path: str  # its page's source, from the folder above the sources
    line: int | None  # the cell's line there
    cell: str  # its code
    error: str  # "ErrorType: message"
    claim_ids: list[str]  # the claims whose verdicts its output shows (in a drift report's
    # causes, the drifted ones among them)
    after_a_failure: bool = False  # an earlier cell of the same page failed
    error_type: str = ""  # not in a report written before it was added

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "FailingCell":
        """As any report wrote it: one written before the rename calls its ids "claims"."""
        return cls(**_renamed(data, claims="claim_ids"))


@dataclasses.dataclass(frozen=True)
class Problem:
    """A warning Sphinx logged: its file (from the folder above the sources; "" for none), its
    line (0 for none), its page (None for a file that is not one) and its message."""

    path: str
    line: int
    page: str | None
    message: str


@dataclasses.dataclass(frozen=True)
class TimingRecord:
    """One side of a timed comparison, in seconds: its name, its median with the range that
    holds it, and its middle half of `n` runs (`chapter2.timing.BenchResult`)."""

    name: str
    median: float
    median_low: float
    median_high: float
    low: float
    high: float
    n: int


@dataclasses.dataclass(frozen=True)
class ComparisonRecord:
    """A timed comparison a page made (`chapter2.timing.Comparison`): the sentence it chose,
    its verdict ("faster", "slower", "indistinguishable"), how many times faster `a` ran than
    `b`, and each side's timing. A page's output carries it; the build's record keeps it."""

    text: str
    verdict: str
    ratio: float
    a: TimingRecord
    b: TimingRecord

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ComparisonRecord":
        found = dict(data)
        return cls(**found | {side: TimingRecord(**found[side]) for side in ("a", "b")})


@dataclasses.dataclass
class PageRecord:
    """What a build learned of one page. The docs layer fills it as it reads the page."""

    path: str = ""  # its source, from the folder above the sources
    statements: dict[str, Statement] = dataclasses.field(default_factory=dict)  # by claim id
    verdicts: dict[str, VerdictRecord] = dataclasses.field(default_factory=dict)  # by claim id
    failing_cells: list[FailingCell] = dataclasses.field(default_factory=list)
    comparisons: list[ComparisonRecord] = dataclasses.field(default_factory=list)
    checked_claims: list[str] = dataclasses.field(default_factory=list)  # its cells' checks
    noted: list[str] = dataclasses.field(default_factory=list)  # the claims its notes name
    needs_every_page: bool = False  # it shows every page's verdicts
    seconds: float | None = None  # its notebook's run, in this build or cached
    executed_at: float | None = None  # when that run started (a `time.time()`)

    def statement(self, claim_id: str) -> Statement:
        """What the page says of `claim_id` (empty where it says nothing)."""
        return self.statements.get(claim_id, Statement())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PageRecord":
        found = _renamed(data, checks="checked_claims")  # a build's before the rename
        found["statements"] = {k: Statement(**v) for k, v in found["statements"].items()}
        found["verdicts"] = {k: VerdictRecord.from_dict(v) for k, v in found["verdicts"].items()}
        found["comparisons"] = [ComparisonRecord.from_dict(c) for c in found["comparisons"]]
        found["failing_cells"] = [FailingCell.from_dict(c) for c in found["failing_cells"]]
        return cls(**found)


@dataclasses.dataclass(frozen=True)
class BuildRecord(JsonFile):
    """What one build of the book learned: the versions it ran, each page's record, and every
    problem Sphinx logged. The docs layer writes it beside the pages; the failure summary, a
    drift build's report, the benchmark and the tests read it."""

    jax: str
    jaxlib: str
    python: str
    recorded: str  # the date it was built
    pages: dict[str, PageRecord]
    problems: list[Problem]

    @property
    def failing_cells(self) -> list[FailingCell]:
        """Every failing cell, page by page."""
        return [c for page in self.pages.values() for c in page.failing_cells]

    @classmethod
    def load(cls, path: str | Path) -> "BuildRecord":
        found = json.loads(Path(path).read_text())
        found["pages"] = {k: PageRecord.from_dict(v) for k, v in found["pages"].items()}
        found["problems"] = [Problem(**p) for p in found["problems"]]
        return cls(**found)


@dataclasses.dataclass(frozen=True)
class ChangedOutput:
    """An output of a cell that differs, masked, from the same cell's in the baseline build."""

    page: str
    cell_index: int  # among its page's code cells
    cell: str  # its code
    output: str  # the kind of output: "stdout", "text/plain"
    diff: str  # the changed lines, "-" before and "+" after
    checked_after: list[str]  # the claims its section checks after it
    claim_ids: list[str] = dataclasses.field(default_factory=list)  # the drifted one it goes to

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ChangedOutput":
        """As any report wrote it: one written before the rename calls its ids "claims", and
        keeps both outputs whole ("before", "after"), which the diff says in short."""
        found = _renamed(data, claims="claim_ids")
        return cls(**{k: v for k, v in found.items() if k not in ("before", "after")})


@dataclasses.dataclass(frozen=True)
class RootCause:
    """Drifted claims with one root (the first; the others rest on it), and the failing cells
    and changed outputs it explains."""

    name: str  # the root claim's id
    claims: list[VerdictRecord]
    failing_cells: list[FailingCell]
    changed_outputs: list[ChangedOutput]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RootCause":
        return cls(
            data["name"],
            [VerdictRecord.from_dict(v) for v in data["claims"]],
            [FailingCell.from_dict(c) for c in data["failing_cells"]],
            [ChangedOutput.from_dict(c) for c in data["changed_outputs"]],
        )


@dataclasses.dataclass(frozen=True)
class DriftReport(JsonFile):
    """The book under another JAX, against the baseline: its claims as that build's pages
    showed them, grouped by cause, each failing cell and changed output given to the claim
    that explains it, or to none (`book.drift.build_report` makes it)."""

    jax: str
    jaxlib: str
    python: str
    recorded: str
    claims_checked: int
    changed_claims: list[VerdictRecord]
    causes: list[RootCause]
    modules_not_loaded: dict[str, str]
    failing_cells: list[FailingCell]
    unexplained_cells: list[FailingCell]
    outputs_compared: bool  # False: no baseline build to compare with
    changed_outputs: list[ChangedOutput]
    unexplained_outputs: list[ChangedOutput]
    environment_dependent: list[VerdictRecord]  # facts of the machine: reported, not drift
    cannot_check: list[VerdictRecord]
    baseline: BaselineClaims | None
    commit: str | None = None  # the book's; not in a report written before it was added
    claim_ids: list[str] | None = None  # the claims checked; nor this

    @property
    def anything_changed(self) -> bool:
        """Whether a claim, a cell, an output or a claims module changed."""
        return bool(
            self.changed_claims
            or self.failing_cells
            or self.changed_outputs
            or self.modules_not_loaded
        )

    @property
    def shared(self) -> bool:
        """Whether a failing cell or changed output is explained by more than one cause."""
        cells = sum(len(c.failing_cells) for c in self.causes)
        outputs = sum(len(c.changed_outputs) for c in self.causes)
        return cells > len(self.failing_cells) - len(self.unexplained_cells) or outputs > len(
            self.changed_outputs
        ) - len(self.unexplained_outputs)

    @classmethod
    def load(cls, path: str | Path) -> "DriftReport":
        found = json.loads(Path(path).read_text())
        for key in ("changed_claims", "environment_dependent", "cannot_check"):
            found[key] = [VerdictRecord.from_dict(v) for v in found[key]]
        for key in ("failing_cells", "unexplained_cells"):
            found[key] = [FailingCell.from_dict(c) for c in found[key]]
        for key in ("changed_outputs", "unexplained_outputs"):
            found[key] = [ChangedOutput.from_dict(c) for c in found[key]]
        found["causes"] = [RootCause.from_dict(c) for c in found["causes"]]
        found["baseline"] = BaselineClaims(**found["baseline"]) if found["baseline"] else None
        return cls(**found)


@dataclasses.dataclass(frozen=True)
class HostFacts(JsonFile):
    """The software a recorded run's parts ran under, and its host's CPU (host.json)."""

    jax: str
    jaxlib: str
    python: str
    cpu: str
    cores: int


@dataclasses.dataclass(frozen=True)
class RecordingCall(JsonFile):
    """One call that recorded parts of a run, where the run was made (call.json)."""

    made: str  # the command, and the commit of the tool that ran it
    parts: list[str]
    recorded: str  # its date


@dataclasses.dataclass(frozen=True)
class Device:
    """The device a part of a run ran on, as JAX names it ("TPU v5 lite"), and its platform."""

    device: str
    platform: str

    @classmethod
    def of_part(cls, path: str | Path) -> "Device":
        """The device a numbers or training file names (beside its memory and the clock)."""
        named = json.loads(Path(path).read_text())["device"]
        return cls(named["device"], named["platform"])


@dataclasses.dataclass(frozen=True)
class PageRunFailure:
    """A cell that raised where a page ran as a script (`PageRun`): its index among the
    page's code cells, its error ("ErrorType: message") and the drifted claims that explain
    it. A pages file calls the index "cell" and the ids "claims" (a build's failing cell is a
    `FailingCell`)."""

    index: int
    error: str
    claim_ids: list[str]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PageRunFailure":
        return cls(data["cell"], data["error"], data["claims"])

    def to_dict(self) -> dict[str, Any]:
        return {"cell": self.index, "error": self.error, "claims": self.claim_ids}


@dataclasses.dataclass(frozen=True, kw_only=True)
class PageRun:
    """One page's cells run in order where a run was recorded, past a failing one. The first
    run (an H200) kept only the exit status, the seconds and its output's last line."""

    page: str
    on: str | None = None  # "host CPU" or "default device"
    rc: int | str  # its exit status, or "timeout"
    seconds: float
    cells: int | None = None
    failed_cells: list[PageRunFailure] | None = None  # None: it did not report them
    ran_to_the_end: bool | None = None  # its process ended at 0 and reported its cells
    made: list[str] | None = None  # the call that ran it, where a later call joined the run
    last: str | None = None

    @classmethod
    def read(cls, path: str | Path) -> list["PageRun"]:
        """Every page run in a pages file, whose keys are words ("failed cells")."""
        runs = []
        for found in json.loads(Path(path).read_text()):
            fields = {k.replace(" ", "_"): v for k, v in found.items()}
            if fields.get("failed_cells") is not None:
                fields["failed_cells"] = [
                    PageRunFailure.from_dict(c) for c in fields["failed_cells"]
                ]
            runs.append(cls(**fields))
        return runs

    @staticmethod
    def write(runs: list["PageRun"], path: str | Path) -> None:
        """`runs` as a pages file, in the words its keys have always had."""
        words = []
        for run in runs:
            fields = dataclasses.asdict(run)
            if run.failed_cells is not None:
                fields["failed_cells"] = [c.to_dict() for c in run.failed_cells]
            words.append(
                {
                    k.replace("_", " "): v
                    for k, v in fields.items()
                    if v is not None or (k == "failed_cells" and run.ran_to_the_end is not None)
                }
            )
        Path(path).write_text(json.dumps(words, indent=1) + "\n")


# The files of the first recorded run (an H200) that its run.json does not name.
FIRST_RUN_FILES = {
    "host claims": "claims-cpu-same-machine.json",
    "pages": "pages-gpu.json",
    "training": "training-gpu.json",
}


def _beside(path: str | Path, name: str) -> bool:
    return (Path(path).parent / name).exists()


@dataclasses.dataclass(frozen=True)
class RunFile(JsonFile):
    """What a run recorded on another machine says of itself (data/backends/<name>/run.json):
    the device and the software, the host's CPU, the date, the file that holds each part and
    every call that recorded some of it, oldest first. `tools/record_backend.py` writes it;
    `chapter2.runs` reads it. The first run (an H200) named its claims and numbers files by
    keys of their own, its other files not at all (`FIRST_RUN_FILES`), and its one call as
    `made`."""

    device: str  # as JAX names it: "TPU v5 lite"
    platform: str
    jax: str
    recorded: str  # the date of its measurements
    files: dict[str, str]  # what a file holds ("claims", "numbers", ...): its name
    parts: dict[str, list[str]]  # a part: every call that recorded some of it
    jaxlib: str = ""
    python: str = ""
    host: Machine | None = None  # the device's host
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)  # old claim id: today's

    @classmethod
    def load(cls, path: str | Path) -> "RunFile":
        found = json.loads(Path(path).read_text())
        if "files" not in found:  # the first run
            found["files"] = {k: found.pop(k) for k in ("claims", "numbers") if k in found}
            found["files"] |= {k: v for k, v in FIRST_RUN_FILES.items() if _beside(path, v)}
        if _beside(path, "vendor-figures.json"):  # typed from the vendor's page, not recorded
            found["files"].setdefault("vendor figures", "vendor-figures.json")
        if "parts" not in found:
            found["parts"] = {"claims": found.pop("made")}
        found["parts"] = {k: v if isinstance(v, list) else [v] for k, v in found["parts"].items()}
        found["host"] = Machine(**found["host"]) if found.get("host") else None
        return cls(**found)

    def joined(self, later: "RunFile") -> "RunFile":
        """This run with what a later call recorded on the same device and JAX: each part's
        calls, oldest first; both runs' files; the earlier date; the host either knew."""
        if (self.device, self.jax) != (later.device, later.jax):
            msg = f"the run is of {self.device} with JAX {self.jax}, not {later.device}"
            raise ValueError(msg)
        parts = {part: list(calls) for part, calls in self.parts.items()}
        for part, calls in later.parts.items():
            parts[part] = parts.get(part, []) + calls
        return dataclasses.replace(
            later,
            parts=parts,
            files={**self.files, **later.files},
            recorded=min(self.recorded, later.recorded),
            host=later.host or self.host,
            renamed={**self.renamed, **later.renamed},
        )


def value_at(values: Mapping[str, Any], key: str, holder: str) -> Any:
    """The value at `key` in `values`: names joined by "/", a number indexing a list. A
    missing one is a KeyError that names `holder`, the key and the part missing."""
    value: Any = values
    for part in key.split("/"):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            msg = f"{holder} holds no {key!r} ({part!r} is missing)"
            raise KeyError(msg)
    return value


@dataclasses.dataclass(frozen=True)
class SitePlan:
    """What `nox -s site` builds and assembles: the baseline JAX's build at the site's root,
    each other release's in a folder of its own. `builds` maps a release to its HTML folder;
    `nox -s site` writes the file, each of its builds and the assembly read it."""

    baseline: str
    builds: dict[str, Path]

    def __post_init__(self) -> None:
        if self.baseline not in self.builds:
            msg = f"the site plan has no build of the baseline JAX {self.baseline}"
            raise ValueError(msg)

    @property
    def versions(self) -> list[str]:
        """The site's releases, the baseline first, the others as the plan lists them."""
        return [self.baseline, *(v for v in self.builds if v != self.baseline)]

    @classmethod
    def load(cls, path: str | Path) -> "SitePlan":
        found = json.loads(Path(path).read_text())
        return cls(found["baseline"], {v: Path(p) for v, p in found["builds"].items()})

    def dump(self, path: str | Path) -> None:
        builds = {v: str(p) for v, p in self.builds.items()}
        Path(path).write_text(json.dumps({"baseline": self.baseline, "builds": builds}) + "\n")
