"""The registry of claims: what the book says JAX does, each with a check that looks.

A claim is a zero-argument check that returns an `Observation`: named values the book
expects and the values this JAX produced. Whether the claim holds, its status and the
sentence shown all derive from them. A claim belongs to the page its module is named after
(`claims/xla_compilation.py` is the page `xla-compilation`). What the book says is written
once, on that page: the paragraph (or warning box) under the label `(claim-<id>)=`, which
`statement_on_page` reads for the drift report, the matrix and the failure messages.
"""

import ast
import functools
import inspect
import json
import os
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

VERDICT_MIME = "application/vnd.chapter2.verdict+json"


class Kind(StrEnum):
    ASSERTED = "asserted"  # JAX decides it: a difference is drift and fails the build
    OBSERVED = "observed"  # the machine decides it (CPU, allocator): reported, never asserted


class Status(StrEnum):
    HOLDS = "holds"
    DRIFTED = "drifted"
    AS_SPECIFIED = "as specified"  # an observed claim: this machine behaved as the book says
    DIFFERS_HERE = "differs here"  # an observed claim: this machine behaved otherwise
    CANNOT_CHECK = "cannot check"  # what the claim is about does not exist in this JAX

    @property
    def stands(self) -> bool:
        """Whether the book stands as written: an asserted claim holds, or an observed one's
        check ran (what the machine did is reported either way)."""
        return self is not Status.DRIFTED

    @property
    def symbol(self) -> str:
        return SYMBOLS[self]

    def words(self, jax: str) -> str:
        """The status in plain words, as a verdict's mark says it for JAX `jax`."""
        return WORDS[self].format(jax=jax)


# Every place that shows a status (marks, the matrix, the drift report) takes it from here.
SYMBOLS = {
    Status.HOLDS: "✓",
    Status.DRIFTED: "✗",
    Status.AS_SPECIFIED: "✓",
    Status.DIFFERS_HERE: "≠",
    Status.CANNOT_CHECK: "○",
}
WORDS = {
    Status.HOLDS: "checked on JAX {jax}",
    Status.DRIFTED: "not true on JAX {jax}",
    Status.AS_SPECIFIED: "seen on the machine that built this page (JAX {jax})",
    Status.DIFFERS_HERE: "not seen on the machine that built this page (JAX {jax})",
    Status.CANNOT_CHECK: "cannot be checked on JAX {jax}",
}

# The book's pages: those of the book a build executes (it names them in DOCS_VARIABLE), or
# those of the source tree (an installed wheel has none).
DOCS_VARIABLE = "CHAPTER2_DOCS"
DOCS = Path(os.environ.get(DOCS_VARIABLE) or Path(__file__).resolve().parents[3] / "docs")


def plain_text(markdown: str) -> str:
    """MyST as a sentence reads: a number glued in by the page shows as [its name], other
    roles keep their text, a link its words; one space between words."""
    text = re.sub(r"\{glue(?::\w+)?\}`([^`]*)`", r"[\1]", markdown)
    text = re.sub(r"\{[\w:-]+\}`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    return " ".join(text.split())


def page_statements(page: str) -> dict[str, str]:
    """What the page `page` says under each `(claim-<id>)=` label: the paragraph after it, or
    the text of the warning box after it. Empty where the pages are not at hand."""
    path = DOCS / f"{page}.md"
    if not path.exists():
        return {}
    stat = path.stat()
    return _statements(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _statements(path: Path, *_version: int) -> dict[str, str]:
    text = path.read_text()
    found = {}
    for match in re.finditer(r"^\(claim-([\w-]+)\)=\n", text, re.M):
        block = text[match.end() :]
        if block.startswith(":::{"):  # a warning: the text of its box
            block = block.split("\n", 1)[1].split("\n:::", 1)[0]
        else:  # a paragraph: up to the first blank line
            block = re.split(r"\n\s*\n", block, maxsplit=1)[0]
        found[match[1]] = plain_text(block)
    return found


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """The values as JSON has them (tuples become lists), so comparisons survive a round trip."""
    return json.loads(json.dumps(values))


class CannotCheck(Exception):
    """Raised by a check whose subject does not exist in this JAX (no YNN fusion, no profiler
    events API): the claim neither holds nor drifts here. The message is the reason."""


@dataclass(frozen=True)
class Observation:
    """Named values the book expects, and what this JAX produced.

    `observed` may name more values than `expected`: those are context, shown but not compared.
    """

    expected: dict[str, Any]
    observed: dict[str, Any]

    def __post_init__(self):
        object.__setattr__(self, "expected", _plain(self.expected))
        object.__setattr__(self, "observed", _plain(self.observed))

    @property
    def differences(self) -> list[str]:
        """The names whose observed value is not the expected one."""
        return [k for k, v in self.expected.items() if self.observed.get(k, ...) != v]

    @property
    def matches(self) -> bool:
        return not self.differences

    def sentence(self, expected_by: str = "the book expects") -> str:
        """Every observed value by name; a value that differs says what was expected."""
        parts = []
        for name in {**self.observed, **self.expected}:
            seen = self.observed.get(name, "(not observed)")
            part = f"{name}: {seen}"
            if name in self.differences:
                part += f" ({expected_by} {self.expected[name]})"
            parts.append(part)
        return "; ".join(parts)


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
    recorded_statement: str | None = None  # a claim rebuilt from a verdict's data says this

    @property
    def label(self) -> str:
        """The label of the claim's statement on its page."""
        return f"claim-{self.id}"

    @property
    def statement(self) -> str:
        """What the book says, read from its page ("" where the pages are not at hand)."""
        if self.recorded_statement is not None:
            return self.recorded_statement
        return page_statements(self.page).get(self.id, "")


def _names_used(code: types.CodeType) -> set[str]:
    """The global names a function's code reads, nested functions' code included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _constants(module: types.ModuleType) -> dict[str, str]:
    """The source of each module-level assignment of `module`, by the names it assigns."""
    source = inspect.getsource(module)
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found[name.id] = ast.get_source_segment(source, node)
    return found


def check_source(check: Callable) -> str:
    """The check's source, followed by that of every function of its module it calls (and
    they call), after the module's constants they read: all the code of the module that
    reached the verdict. A check written in a notebook cell has no source file: ""."""
    module = sys.modules[check.__module__]
    try:
        constants = _constants(module)
    except (OSError, TypeError):  # a module without a file: __main__ of a notebook
        return ""
    shown, read = [check], {}
    for function in shown:
        for name in sorted(_names_used(function.__code__)):
            found = getattr(module, name, None)
            if name in constants:
                read[name] = constants[name]
            elif (
                inspect.isfunction(found)
                and found.__module__ == module.__name__
                and found not in shown
            ):
                shown.append(found)
    parts = [inspect.getsource(f).rstrip() for f in shown]
    if read:
        parts.insert(0, "\n".join(dict.fromkeys(read.values())))
    return "\n\n".join(parts) + "\n"


def status_of(kind: Kind, matches: bool | None, *, checkable: bool = True) -> Status:
    """The one rule: `matches` is None when the check could not run on this JAX; a check
    that found nothing to check (`checkable` false) neither holds nor drifts."""
    if not checkable:
        return Status.CANNOT_CHECK
    if kind is Kind.OBSERVED and matches is not None:
        return Status.AS_SPECIFIED if matches else Status.DIFFERS_HERE
    return Status.HOLDS if matches else Status.DRIFTED


def describe_error(err: BaseException) -> str:
    """A check that could not run, in one readable sentence (a missing API names itself)."""
    missing = re.fullmatch(r"module '([\w.]+)' has no attribute '(\w+)'", str(err))
    if missing:
        return f"`{missing[1]}.{missing[2]}` does not exist in this JAX"
    if isinstance(err, AttributeError) and getattr(err, "obj", None) is not None:
        owner = getattr(err.obj, "__name__", type(err.obj).__name__)
        return f"`{owner}.{err.name}` does not exist in this JAX"
    unimportable = re.match(r"cannot import name '(\w+)' from '([\w.]+)'", str(err))
    if isinstance(err, ImportError) and unimportable:
        return f"`{unimportable[2]}.{unimportable[1]}` does not exist in this JAX"
    if isinstance(err, ImportError) and err.name:
        return f"`{err.name}` cannot be imported: {err}"
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    said = lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1].strip()}"
    return f"the check raised {type(err).__name__}: {said}"


def installed_versions() -> dict[str, str]:
    """The JAX and jaxlib a verdict was reached on, and the backend: the platform of the
    default device (cpu, gpu, tpu; `jax_default_device` when a page set it) and its kind.
    JAX is imported here, not when the registry is: a kernel that loads
    chapter2.claims.attribution pays for JAX only if a cell fails."""
    import jax  # noqa: PLC0415
    import jaxlib  # noqa: PLC0415

    from chapter2.environment import default_device  # noqa: PLC0415

    device = default_device()
    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "platform": device.platform,
        "device": device.device_kind,
    }


@dataclass(frozen=True)
class Verdict:
    """What a claim's check found on the installed JAX: data, shown by whoever renders it."""

    claim: Claim
    observation: Observation | None
    error: str | None = None
    versions: dict[str, str] = field(default_factory=installed_versions)
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.claim.id,
            "section": self.claim.page,
            "label": self.claim.label,
            "statement": self.claim.statement,
            "kind": str(self.claim.kind),
            "warning": self.claim.warning,
            "rests_on": list(self.claim.rests_on),
            "only_on": list(self.claim.only_on) if self.claim.only_on else None,
            "expected_on": {k: list(v) for k, v in self.claim.expected_on.items()},
            "status": str(self.status),
            "expected": self.observation.expected if self.observation else None,
            "observed": self.observation.observed if self.observation else None,
            "evidence": self.evidence,
            "check_source": check_source(self.claim.check),
            **self.versions,
        }

    def __str__(self) -> str:
        return f"[{self.claim.id}] {self.status} on JAX {self.versions['jax']}: {self.evidence}"

    __repr__ = __str__

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:  # noqa: ARG002
        return {"text/plain": str(self), VERDICT_MIME: self.as_dict()}


class ClaimDrift(AssertionError):
    """The installed JAX no longer does what the book says."""


REGISTRY: dict[str, Claim] = {}


def page_of(module: str) -> str:
    """The page a claims module belongs to: `...pages.xla_compilation` → xla-compilation."""
    return module.rsplit(".", 1)[-1].replace("_", "-")


def claim(
    id: str,
    *,
    kind: Kind = Kind.ASSERTED,
    page: str | None = None,
    warning: bool = False,
    rests_on: tuple[str, ...] = (),
    only_on: tuple[str, str] | None = None,
    expected_on: dict[str, tuple[dict, str]] | None = None,
):
    """Register the decorated zero-argument check as claim `id` of its module's page, which
    says what the book claims under the label `(claim-<id>)=`. `warning`: the
    claim corrects a common belief, and its page shows it in a box of its own. `rests_on`: the
    claims whose fact this one depends on (the barrier splitting a fusion, for a claim about
    the traffic it adds); a drift report shows the two as one cause when both drift.
    `only_on`: (platform, why) for a fact of one backend (YNNPACK is a library of XLA's CPU
    backend): on another the claim cannot be checked, and its check does not run.
    `expected_on`: {platform: (expected values, why)} where a backend is known to do
    otherwise (an NVIDIA GPU multiplies float32 matrices in TF32 by default).
    """

    def register(check: Callable[[], Observation]) -> Callable[[], Observation]:
        if id in REGISTRY:
            msg = f"claim {id!r} is registered twice"
            raise ValueError(msg)
        owner = page or page_of(check.__module__)
        REGISTRY[id] = Claim(
            id, owner, check, kind, warning, tuple(rests_on), only_on, expected_on or {}
        )
        return check

    return register


def judged(
    entry: Claim, observation: Observation | None, versions: dict, error: str | None = None
) -> Verdict:
    """The verdict on what a check observed (None: it could not run, for `error`) on the
    backend `versions` names: a fact of another backend cannot be checked there, and a
    backend known to do otherwise is held to what the claim expects of it."""
    platform = versions["platform"]
    if entry.only_on and platform != entry.only_on[0]:
        home, why = entry.only_on
        reason = f"a fact of the {home.upper()} backend, not checked on {platform.upper()}: {why}"
        return Verdict(entry, None, reason, versions, checkable=False)
    if observation is not None and platform in entry.expected_on:
        expected, why = entry.expected_on[platform]
        there = Observation({**observation.expected, **expected}, observation.observed)
        return Verdict(entry, there, error, versions, note=f"on {platform.upper()}, {why}")
    return Verdict(entry, observation, error, versions)


def run_check(entry: Claim) -> Verdict:
    """Run one claim's check on the default backend; a check that cannot run on this JAX is a
    drift, not a crash, one whose subject does not exist here cannot check, and the check of
    a fact of another backend does not run."""
    versions = installed_versions()
    if entry.only_on and versions["platform"] != entry.only_on[0]:
        return judged(entry, None, versions)
    try:
        return judged(entry, entry.check(), versions)
    except CannotCheck as err:
        return Verdict(entry, None, str(err), versions, checkable=False)
    except Exception as err:
        return judged(entry, None, versions, describe_error(err))


_DRIFTED = "claim {id!r} (page {page}) drifted on JAX {jax}."
_NAMED = re.compile(r"claim '([\w-]+)' \(page [\w-]+\) drifted on JAX ")


def drift_message(verdict: Verdict) -> str:
    """What the build says when a claim drifted: the claim, the book's words, what JAX did."""
    entry, obs = verdict.claim, verdict.observation
    lines = [
        _DRIFTED.format(id=entry.id, page=entry.page, jax=verdict.versions["jax"]),
        f"  the book says: {entry.statement}",
        f"  JAX did:       {verdict.evidence}",
    ]
    if obs is not None:
        lines.append(f"  expected {obs.expected}, observed {obs.observed}")
    return "\n".join(lines)


def claims_named(text: str) -> list[str]:
    """The ids of the drifted claims that `drift_message`s in `text` name, each once, in order."""
    return list(dict.fromkeys(_NAMED.findall(text)))
