"""The registry of claims: what the book says JAX does (stated on its page, under the label
`(claim-<id>)=`), each with a check that returns an `Observation`, whence its status."""

import ast
import contextlib
import inspect
import json
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from chapter2.cannot_check import CannotCheck
from chapter2.records import Kind, Status, VerdictRecord, Versions, compared

VERDICT_MIME = "application/vnd.chapter2.verdict+json"


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """The values as JSON has them, so comparisons survive a round trip."""
    return json.loads(json.dumps(values))


def counted(n: int, noun: str) -> str:
    """`n` and its noun, singular or plural: 1 failing cell, 2 failing cells."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def listed(words, none: str = "") -> str:
    """Words as a sentence lists them: "a", "a and b", "a, b and c"; `none` for none."""
    words = list(words)
    if len(words) < 2:
        return "".join(words) or none
    return ", ".join(words[:-1]) + f" and {words[-1]}"


@dataclass(frozen=True)
class Observation:
    """Named values the book expects, and what this JAX produced (extra ones: context);
    `said`: what was run and what JAX did, in a reader's words, from the same values;
    `repeats`: what on the page the check ran again ("the cell above"), where it adds nothing
    the page does not show while it holds."""

    expected: dict[str, Any]
    observed: dict[str, Any]
    said: str = ""
    repeats: str = ""

    def __post_init__(self):
        object.__setattr__(self, "expected", _plain(self.expected))
        object.__setattr__(self, "observed", _plain(self.observed))

    @property
    def differences(self) -> list[str]:
        """The names whose observed value is not the expected one."""
        return [c.name for c in compared(self.expected, self.observed) if c.differs]

    @property
    def matches(self) -> bool:
        return not self.differences

    def sentence(self, expected_by: str = "the book expects") -> str:
        """Every observed value by name; a value that differs says what was expected."""
        return "; ".join(
            f"{c.name}: {c.observed}" + (f" ({expected_by} {c.expected})" if c.differs else "")
            for c in compared(self.expected, self.observed)
        )


LABEL_PREFIX = "claim-"  # a statement's label on its page: (claim-<id>)=
ID_FORM = r"[a-z0-9]+(-[a-z0-9]+)*"  # what a docutils id keeps as written


@dataclass(frozen=True)
class Claim:
    id: str
    page: str
    check: Callable[[], Observation] | None
    kind: Kind = Kind.ASSERTED
    warning: bool = False  # a common belief the book corrects: shown as a box, not a mark
    rests_on: tuple[str, ...] = ()  # claims whose fact this one depends on: one cause if both drift
    # Where it is asserted: every backend, unless `only_on` names one, (platform, why); and
    # what it does on a backend where it is known to differ: {platform: (expected, why)}.
    only_on: tuple[str, str] | None = None
    expected_on: dict[str, tuple[dict, str]] = field(default_factory=dict, compare=False)
    # What the check tests, in a reader's words, and what its statement says beyond that
    # ("" where the statement says nothing more): the page of checks shows both.
    checks: str = ""
    unchecked: str = ""

    @property
    def label(self) -> str:
        """The label of the claim's statement on its page."""
        return f"{LABEL_PREFIX}{self.id}"


def module_code(text: str, roots: list[str]) -> str:
    """The module's functions named in `roots` and the module-level functions and constants
    they read, transitively: constants first, then the functions as they are found."""
    body = ast.parse(text).body
    named: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            named[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            named |= {n.id: node for n in ast.walk(node) if isinstance(n, ast.Name)}
    shown = [named[root] for root in roots if root in named]
    for node in shown:  # grows while it is read
        for name in dict.fromkeys(n.id for n in ast.walk(node) if isinstance(n, ast.Name)):
            if name in named and named[name] not in shown:
                shown.append(named[name])
    lines = text.splitlines()

    def code(node: ast.stmt) -> str:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return "\n".join(lines[first - 1 : node.end_lineno])

    constants = [n for n in body if n in shown and isinstance(n, ast.Assign | ast.AnnAssign)]
    parts = ["\n".join(map(code, constants))] if constants else []
    return "\n\n".join([*parts, *(code(n) for n in shown if n not in constants)]) + "\n"


def check_source(check: Callable) -> str:
    """The check's source with the functions and constants of its module that it reads."""
    try:
        return module_code(inspect.getsource(sys.modules[check.__module__]), [check.__name__])
    except (OSError, TypeError):  # a module without a file: __main__ of a notebook
        return ""


def status_of(kind: Kind, matches: bool | None, *, checkable: bool = True) -> Status:
    """The one rule (`matches` None: the check could not run; not `checkable`: no subject)."""
    if not checkable:
        return Status.CANNOT_CHECK
    if kind is Kind.OBSERVED and matches is not None:
        return Status.AS_SPECIFIED if matches else Status.DIFFERS_HERE
    return Status.HOLDS if matches else Status.DRIFTED


def describe_error(err: BaseException) -> str:
    """A check that could not run, in one sentence (a missing API names itself)."""
    if isinstance(err, AttributeError) and getattr(err, "obj", None) is not None:
        owner = getattr(err.obj, "__name__", type(err.obj).__name__)
        return f"`{owner}.{err.name}` does not exist in this JAX"
    if isinstance(err, ImportError) and getattr(err, "name_from", None):  # from M import X
        return f"`{err.name}.{err.name_from}` does not exist in this JAX"
    if isinstance(err, ImportError) and err.name:
        return f"`{err.name}` cannot be imported: {err}"
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    said = lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1].strip()}"
    return f"the check raised {type(err).__name__}: {said}"


def installed_versions() -> Versions:
    """JAX, jaxlib and the default device's platform and kind (JAX imported only here)."""
    import jax  # noqa: PLC0415
    import jaxlib  # noqa: PLC0415

    from chapter2.environment import default_device  # noqa: PLC0415

    device = default_device()
    return Versions(jax.__version__, jaxlib.__version__, device.platform, device.device_kind)


@dataclass(frozen=True)
class Verdict:
    """What a claim's check found on the installed JAX: data, shown by whoever renders it."""

    claim: Claim
    observation: Observation | None
    error: str | None = None
    versions: Versions = field(default_factory=installed_versions)
    checkable: bool = True
    note: str = ""  # why the values expected here are not the CPU's (`Claim.expected_on`)

    @property
    def status(self) -> Status:
        matches = None if self.observation is None else self.observation.matches
        return status_of(self.claim.kind, matches, checkable=self.checkable)

    @property
    def drifted(self) -> bool:
        return self.status is Status.DRIFTED

    @property
    def evidence(self) -> str:
        if self.observation is None:
            return self.error
        if self.claim.kind is Kind.OBSERVED:  # the book describes another machine
            return self.observation.sentence("on the machine the book describes:")
        if self.note:
            return f"{self.note}: {self.observation.sentence('expected there')}"
        return self.observation.sentence()

    @property
    def found(self) -> str:
        """The evidence without its note, which says why the values expected are not the
        CPU's (`note`)."""
        if self.observation is None or self.claim.kind is Kind.OBSERVED or not self.note:
            return self.evidence
        return self.observation.sentence("expected there")

    def record(self) -> VerdictRecord:
        """The verdict as data, for a page's output, the build's record and a recorded run."""
        seen = self.observation
        return VerdictRecord(
            id=self.claim.id,
            page=self.claim.page,
            label=self.claim.label,
            kind=self.claim.kind,
            status=self.status,
            warning=self.claim.warning,
            rests_on=list(self.claim.rests_on),
            only_on=list(self.claim.only_on) if self.claim.only_on else None,
            expected_on={k: list(v) for k, v in self.claim.expected_on.items()},
            checks=self.claim.checks,
            unchecked=self.claim.unchecked,
            expected=seen.expected if seen else None,
            observed=seen.observed if seen else None,
            said=seen.said if seen else "",
            repeats=seen.repeats if seen else "",
            evidence=self.evidence,
            check_source=check_source(self.claim.check),
            **asdict(self.versions),
        )

    def __str__(self) -> str:
        return f"[{self.claim.id}] {self.status} on JAX {self.versions.jax}: {self.evidence}"

    __repr__ = __str__

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:  # noqa: ARG002
        return {"text/plain": str(self), VERDICT_MIME: self.record().to_dict()}


class ClaimDrift(AssertionError):
    """The installed JAX no longer does what the book says: the drifted verdicts, and the
    error of the cell they explain, if one failed."""

    def __init__(self, verdicts: list["Verdict"], cell_error: BaseException | None = None):
        self.verdicts, self.cell_error = list(verdicts), cell_error
        super().__init__("\n".join([*map(drift_message, verdicts), *self._failed()]))

    def _failed(self) -> list[str]:
        error = self.cell_error
        return [f"this cell failed with {type(error).__name__}: {error}"] if error else []

    def _render_traceback_(self) -> list[str]:
        """What a notebook shows (IPython's hook): each claim and the cell's error, no
        traceback and no details (the marks above the cell show them)."""
        heads = [*map(drift_headline, self.verdicts), *self._failed()]
        return [f"ClaimDrift: {head}" for head in heads]


REGISTRY: dict[str, Claim] = {}


def page_of(module: str) -> str:
    """The page a claims module belongs to: `...pages.xla_compilation` → xla-compilation."""
    return module.rsplit(".", 1)[-1].replace("_", "-")


def coverage_problem(id: str, checks: str, unchecked: str) -> str | None:
    """Why what a claim says of its check's coverage is not plain sentences, or None: each
    part, where given, ends in a full stop and names no id and no check value by its key."""
    if unchecked and not checks:
        return "unchecked= says what its check leaves out, so checks= says what it tests"
    for name, said in (("checks", checks), ("unchecked", unchecked)):
        if not said:
            continue
        if said != said.strip() or not said.endswith(".") or said[0].islower():
            return f"{name}= is one or more sentences, capitalized, ending in a full stop"
        if id in said or "{'" in said or "expected" in said.lower():
            return f"{name}= says in words what is tested, without ids or values' keys"
    return None


def claim(
    id: str,
    *,
    kind: Kind = Kind.ASSERTED,
    page: str | None = None,
    warning: bool = False,
    rests_on: tuple[str, ...] = (),
    only_on: tuple[str, str] | None = None,
    expected_on: dict[str, tuple[dict, str]] | None = None,
    checks: str = "",
    unchecked: str = "",
):
    """Register the decorated check as claim `id` of its module's page. `warning`: shown in
    a box (it corrects a common belief); `rests_on`: claims whose fact this one depends on;
    `only_on`: (platform, why) for a fact of one backend; `expected_on`: {platform:
    (expected, why)} where a backend is known to do otherwise (TF32 on an NVIDIA GPU);
    `checks`: what the check tests, in words; `unchecked`: what its statement says beyond
    that, in words (left out where the statement says nothing more)."""

    def register(check: Callable[[], Observation]) -> Callable[[], Observation]:
        if id in REGISTRY:
            msg = f"claim {id!r} is registered twice"
            raise ValueError(msg)
        if not re.fullmatch(ID_FORM, id):  # docutils would rewrite it into its label's id
            msg = f"claim {id!r}: an id is lowercase words and digits joined by hyphens"
            raise ValueError(msg)
        problem = coverage_problem(id, checks, unchecked)
        if problem:
            msg = f"claim {id!r}: {problem}"
            raise ValueError(msg)
        owner = page or page_of(check.__module__)
        REGISTRY[id] = Claim(
            id,
            owner,
            check,
            kind,
            warning,
            tuple(rests_on),
            only_on,
            expected_on or {},
            checks,
            unchecked,
        )
        return check

    return register


def judged(
    entry: Claim, observation: Observation | None, versions: Versions, error: str | None = None
) -> Verdict:
    """The verdict on an observation (None: the check could not run) on `versions`' backend."""
    platform = versions.platform
    if entry.only_on and platform != entry.only_on[0]:
        home, why = entry.only_on
        reason = f"a fact of the {home.upper()} backend, not checked on {platform.upper()}: {why}"
        return Verdict(entry, None, reason, versions, checkable=False)
    if observation is not None and platform in entry.expected_on:
        expected, why = entry.expected_on[platform]
        there = replace(observation, expected={**observation.expected, **expected})
        return Verdict(entry, there, error, versions, note=f"on {platform.upper()}, {why}")
    return Verdict(entry, observation, error, versions)


def run_check(entry: Claim) -> Verdict:
    """Run one claim's check: one that cannot run drifts, never crashes."""
    versions = installed_versions()
    if entry.only_on and versions.platform != entry.only_on[0]:
        return judged(entry, None, versions)
    try:
        return judged(entry, entry.check(), versions)
    except CannotCheck as err:
        return Verdict(entry, None, str(err), versions, checkable=False)
    except Exception as err:
        return judged(entry, None, versions, describe_error(err))


_DRIFTED = "claim {id!r} (page {page}) drifted on JAX {jax}."


def _shown(path: Path) -> str:
    """A path from the repository or the package's folder, never the machine's own."""
    here = Path(__file__).resolve()
    for root in (here.parents[3], here.parents[2]):
        if path.resolve().is_relative_to(root):
            return str(path.resolve().relative_to(root))
    return path.name


def where_checked(entry: Claim) -> str:
    """The file and line of a claim's check ("" for a check written in a notebook)."""
    check = entry.check if getattr(entry.check, "__module__", "__main__") != "__main__" else None
    with contextlib.suppress(OSError, TypeError):  # no check, or one written in a notebook
        line = inspect.getsourcelines(check)[1]
        return f"{_shown(Path(inspect.getsourcefile(check)))}:{line}"
    return ""


def drift_headline(verdict: Verdict) -> str:
    """A drifted claim in one line: which, on which page, under which JAX."""
    entry = verdict.claim
    return _DRIFTED.format(id=entry.id, page=entry.page, jax=verdict.versions.jax)


def drift_message(verdict: Verdict) -> str:
    """A drifted claim: where it is checked and what JAX did (what the book says is on its
    page, above the cell; the build's summary quotes it)."""
    entry, obs = verdict.claim, verdict.observation
    lines = [
        drift_headline(verdict),
        f"  its check:     {where_checked(entry) or 'the notebook cell that registers it'}",
        f"  JAX did:       {verdict.evidence}",
    ]
    if obs is not None and obs.sentence() != verdict.evidence:  # JAX did it, in other words
        lines.append(f"  its values:    {obs.sentence()}")
    return "\n".join(lines)
