"""The claims matrix, on its page and in the version notes: each claim's status under every
JAX release `nox -s matrix` measured (data/matrix/jax-<release>.json), under this build, and
on each backend a recorded run holds; and since which release a version note's claims hold."""

import functools
import hashlib
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging

from book import SERIAL
from book.markdown import with_recorded
from book.record import book_data, home_verdicts
from book.site import page_in_site
from book.verdicts import (
    NeedsEveryPage,
    every_page,
    in_reading_order,
    link,
    section_number,
    status_class,
)
from chapter2.claims.backends import Cause, cause_there, claim_of, host_status
from chapter2.records import ClaimAcrossReleases, ClaimsMatrix, Kind, Status, VerdictRecord
from chapter2.runs import recorded_runs

logger = logging.getLogger(__name__)

NOT_MEASURED = "·"  # a release, or a backend, without a verdict for the claim
_SYMBOLS = [Status.HOLDS, Status.DIFFERS_HERE, Status.DRIFTED, Status.CANNOT_CHECK]
# The release columns' marks, a line each, as the matrix's legend lists them.
LEGEND = [
    *(f"{s.symbol} {s.meaning}" for s in _SYMBOLS),
    f"{NOT_MEASURED} not measured",
    f"for a fact of the machine (since: machine), {Status.HOLDS.symbol} means it behaved as "
    "described",
    '"Since X": holds in X and every later release measured, not in the one before; '
    '"X or earlier": holds in the oldest',
]
LINKED = f"a linked {Status.DRIFTED.symbol} opens the page as that release built it, in this site"


def since_text(claim: ClaimAcrossReleases, releases: list[str]) -> str:
    """How the matrix states since when a claim holds."""
    if claim.kind is Kind.OBSERVED:
        return "machine"
    if claim.since is None:
        return "none measured"
    if not claim.measured_before(claim.since, releases):  # the oldest that measured it
        return f"{claim.since} or earlier"
    return claim.since


# --- version notes ------------------------------------------------------------------------


class note_release(nodes.General, nodes.Element):
    """Placeholder for a version note's measured release and links, filled when written."""


class VersionNote(NeedsEveryPage):
    """`{version-note} ids`: its words, the release its claims hold from, links to them;
    `:before:` what the release measured before that one did, filled from its record."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict] = {"before": directives.unchanged}

    def run(self):
        self.note_page()
        claim_ids = self.arguments[0].split()
        book_data(self.env).page(self.env.docname).noted += claim_ids
        node = note_release(claims=claim_ids, before=self.options.get("before"))
        matrix = claims_matrix(self.config)
        before = release_before(claim_ids, matrix)
        if before is not None and node["before"]:  # what that release did, in its words
            recorded = matrix.report_of(before)
            try:
                filled = with_recorded(node["before"], recorded.value)
            except KeyError as err:
                return [self.state.document.reporter.warning(err.args[0], line=self.lineno)]
            node += self.parse_text_to_nodes(filled)[0].children
        box = nodes.container(classes=["version-note"])
        box += self.parse_content_to_nodes()
        box += node
        return [box]


def _holds_from(claim: ClaimAcrossReleases, releases: list[str]) -> str:
    """Since when a claim holds, in a version note's words (the matrix says it shorter,
    `since_text`)."""
    if claim.since is None:
        return "in none of the releases measured"
    before = claim.measured_before(claim.since, releases)
    if before is None:
        newest = next(r for r in reversed(releases) if r in claim.status)
        return f"in every release measured, {claim.since} to {newest}"
    earlier = releases[: releases.index(claim.since)]
    held = [r for r in earlier if claim.status.get(r) is Status.HOLDS]
    if held:  # it held before, then not (or could not be checked): `since` holds again
        broken = [r for r in earlier if claim.status.get(r) is Status.DRIFTED]
        unchecked = [r for r in earlier if claim.status.get(r) is Status.CANNOT_CHECK]
        first = f"in {held[0]}" if len(held) == 1 else f"in {held[0]} to {held[-1]}"
        gaps = [f"not in {', '.join(broken)}"] if broken else []
        gaps += [f"cannot be checked in {', '.join(unchecked)}"] if unchecked else []
        return f"from JAX {claim.since} and {first}; {'; '.join(gaps)}"
    if claim.status[before] is Status.CANNOT_CHECK:
        return f"from JAX {claim.since}, the first release where it can be checked"
    return f"from JAX {claim.since}"


def note_release_text(claim_ids: list[str], matrix: ClaimsMatrix, home: dict) -> str:
    """Since which release a note's asserted claims hold (all of them, then each part that
    holds longer); what this machine did for the others."""
    releases = matrix.releases
    claims = {c: matrix.claims.get(c) for c in claim_ids}
    asserted = [c for c in claims.values() if c is not None and c.kind is Kind.ASSERTED]
    said = []
    if any(c is None for c in claims.values()):
        said.append("not yet measured under older releases")
    elif asserted:
        order = {None: len(releases), **{r: i for i, r in enumerate(releases)}}
        newest_first = sorted(asserted, key=lambda c: -order[c.since])
        whens = [_holds_from(c, releases) for c in newest_first]
        parts = [when for when in dict.fromkeys(whens[1:]) if when != whens[0]]
        said.append(f"holds as a whole {whens[0]}" if parts else f"holds {whens[0]}")
        said += [f"part of it holds {when}" for when in parts]
    observed = [home[c] for c in claim_ids if c in home and home[c].kind is Kind.OBSERVED]
    said += [f"on this machine: {d.status.words(d.jax)}" for d in observed]
    text = "; ".join(said)
    return text[:1].upper() + text[1:] + "."


CHANGED = "version-notes-changed"  # the label of the part of notes on a change of release


def release_before(claim_ids: list[str], matrix: ClaimsMatrix) -> str | None:
    """The newest release measured before the one a note's asserted claims all hold from,
    or None when they hold in every release measured."""
    claims = [matrix.claims[c] for c in claim_ids if c in matrix.claims]
    asserted = [claim for claim in claims if claim.kind is Kind.ASSERTED]
    if not asserted or None in {claim.since for claim in asserted}:
        return None
    last = max(asserted, key=lambda claim: matrix.releases.index(claim.since))
    return last.measured_before(last.since, matrix.releases)


def _note_problem(node: note_release, before: str | None) -> str | None:
    """Why a note stands in the wrong part of the page, or lacks what an older release did."""
    sections, parent = [], node.parent
    while parent is not None:
        sections += [parent] if isinstance(parent, nodes.section) else []
        parent = parent.parent
    in_changed = any(CHANGED in section["ids"] for section in sections)
    if before is not None and not in_changed:
        return f"a note on claims that changed after JAX {before} belongs under '{CHANGED}'"
    if before is None and in_changed:
        return f"a note on claims that hold in every release measured is not under '{CHANGED}'"
    if before is not None and not node["before"]:
        return f"a note on a change says what JAX {before} did instead (its :before: option)"
    if before is None and node["before"]:
        return "a note on claims that hold in every release measured has no :before:"
    return None


def _fill_note(app, docname: str, node: note_release, matrix: ClaimsMatrix, home: dict) -> None:
    unknown = [c for c in node["claims"] if c not in home]
    if unknown:
        logger.warning("a version note names claims no page verified: %s", unknown, location=node)
        node.replace_self([])
        return
    before = release_before(node["claims"], matrix)
    problem = _note_problem(node, before)
    if problem:
        logger.warning(problem, location=node)
    paragraph = nodes.paragraph(classes=["version-note-release"])
    paragraph += nodes.strong(text="Measured: ")
    paragraph += nodes.Text(note_release_text(node["claims"], matrix, home))
    if node.children:
        paragraph += nodes.Text(f" Before: JAX {before} ")
        paragraph += list(node.children)
    paragraph += nodes.Text(" Shown in ")
    sections = {}  # a link per section, to the first of its claims the note names
    for claim_id in node["claims"]:
        sections.setdefault(section_number(app.env, home[claim_id].page), home[claim_id])
    for i, (number, data) in enumerate(sections.items()):
        if i:
            paragraph += nodes.Text(" and " if i == len(sections) - 1 else ", ")
        paragraph += link(app, docname, data, number, titled=False)
    paragraph += nodes.Text(".")
    node.replace_self(paragraph)


# --- the matrix's page --------------------------------------------------------------------


def _row(cells: list[list[nodes.Node]], classes: list[str]) -> nodes.row:
    row = nodes.row(classes=classes)
    for content in cells:
        row += nodes.entry("", *content)
    return row


def _mark(there) -> nodes.Node:
    """A run's mark for a claim: its status's symbol, or the symbol of a difference where the
    device did otherwise than the statement, in the way the book says of it."""
    if there.otherwise:
        return nodes.inline(text=OTHERWISE, classes=[status_class(Status.DIFFERS_HERE)])
    return _symbol(there.status)


def _symbol(status: str | None) -> nodes.Node:
    if status is None:
        return nodes.inline(text=NOT_MEASURED)
    return nodes.inline(text=Status(status).symbol, classes=[status_class(status)])


def _run_heading(run) -> str:
    return f"{run.sold_as}, JAX {run.jax} ({run.recorded})"


def this_release(home: dict) -> str | None:
    """The JAX this build checked its claims under (None before any page was read)."""
    return next((d.jax for d in home.values()), None)


def _matrix_table(app, docname: str, matrix: ClaimsMatrix, home: dict, runs: list):
    releases = matrix.releases
    this = this_release(home) or "this build"
    shown = [r for r in releases if r != this]  # this build's own column says it
    heads = ["Claim", "Since", *shown, f"{this} (this build)", *map(_run_heading, runs)]
    group = nodes.tgroup(cols=len(heads))
    group += [nodes.colspec(colwidth=w) for w in (24, 10, *[3] * (len(heads) - 2))]
    group += nodes.thead("", _row([[nodes.paragraph(text=h)] for h in heads], []))
    env = app.env
    rows = []
    for data in in_reading_order(env, home):
        across = matrix.claims.get(data.id)
        number = section_number(env, data.page)
        claim = nodes.paragraph("", f"{number}: ", link(app, docname, data, data.id))
        since = since_text(across, releases) if across else "not measured"
        statuses = [across.status.get(r) if across else None for r in shown] + [data.status]
        cells = [[claim], [nodes.paragraph(text=since)]]
        built = set(app.config.book_site_versions) - {this}  # releases this site holds
        for release, status in zip([*shown, this], statuses, strict=True):
            symbol = _symbol(status)
            if status == Status.DRIFTED and release in built:  # the page as that release ran it
                versions = app.config.book_site_versions
                uri = f"{page_in_site(data.page, release, this, versions)}#{data.label}"
                symbol = nodes.reference("", "", symbol, refuri=uri, reftitle=f"JAX {release}")
            cells.append([nodes.paragraph("", "", symbol)])
        for run in runs:  # the claim as it is now, judged on what that backend recorded
            there = _there(data, run)
            cell = nodes.paragraph("", "", _mark(there))
            if there.partial:
                cell += nodes.Text(EARLIER)
            if there.cause:
                cell += nodes.Text(f" {CAUSE_MARKS[there.cause]}")
            cells.append([cell])
        rows.append(_row(cells, []))
    group += nodes.tbody("", *rows)
    return nodes.container(
        "", nodes.table("", group, classes=["claims-matrix"]), classes=["claims-matrix-scroll"]
    )


# A run's mark where the device did otherwise than the statement, as the book says it does.
OTHERWISE = Status.DIFFERS_HERE.symbol
# A run's mark judged on the values an earlier form of the claim's check recorded.
EARLIER = "*"
# How a run's column marks the cause of a difference from this build; the legend says it.
CAUSE_MARKS = {Cause.DEVICE: "device", Cause.RELEASE: "release", Cause.CPU_ONLY: "CPU"}


def _lines(lines: list[str]) -> nodes.bullet_list:
    found = nodes.bullet_list()
    for line in lines:
        found += nodes.list_item("", nodes.paragraph(text=line))
    return found


def _backend_legend() -> list[nodes.Node]:
    """What a recorded run's column marks, and the words after its marks."""
    marks = [
        f"{Status.HOLDS.symbol} the device did what the statement says",
        f"{OTHERWISE} it did otherwise than the statement, in the way the book says of that "
        "device (its reason below the table)",
        f"{Status.DRIFTED.symbol} it did otherwise than the book says, or the check failed there",
        f"{Status.CANNOT_CHECK.symbol} {Status.CANNOT_CHECK.meaning}",
        f"{NOT_MEASURED} not recorded there",
        f"{EARLIER} after a mark: judged on the values an earlier form of the check recorded "
        "(its code has changed since, or it reads more now); the mark certifies that check",
    ]
    causes = [
        f"{CAUSE_MARKS[Cause.DEVICE]}: the device does otherwise (the same JAX on the run's own "
        "CPU did as this build did, or the claim expects the device's own value); beside "
        f"{Status.CANNOT_CHECK.symbol}, the device or its machine kept the check from running",
        f"{CAUSE_MARKS[Cause.RELEASE]}: the run's JAX release, not the device: its own CPU, "
        "under the same JAX, did the same (the version notes date it)",
        f"{CAUSE_MARKS[Cause.CPU_ONLY]}: a fact of the CPU, or a check that reads what XLA's "
        "CPU compiler prints: not checked there",
    ]
    return [
        nodes.paragraph(
            text="A column after this build's is a run recorded on another backend, judged by "
            "each claim as it is now:"
        ),
        _lines(marks),
        nodes.paragraph(
            text="A word after a run's mark gives the cause of a difference from this build; "
            "below the table, each difference with its reason:"
        ),
        _lines(causes),
    ]


def _there(data: VerdictRecord, run):
    """A claim, as this build checked it, judged on what `run` recorded, with its cause."""
    return cause_there(claim_of(data), run, data.status, data.checked, data.check_source)


def _differences(app, docname: str, home: dict, runs: list) -> list[nodes.Node]:
    """Per run, every claim that reads otherwise there than in this build, or holds there
    only by the device's own expectation: its mark, cause and reason in words (facts of the
    CPU are counted, not listed)."""
    found = []
    for run in runs:
        listed_here, host_differs = nodes.bullet_list(), nodes.bullet_list()
        cpu_only = 0
        for data in in_reading_order(app.env, home):
            there = _there(data, run)
            if there.cause == Cause.CPU_ONLY:
                cpu_only += 1
            elif there.cause:
                item = nodes.paragraph("", "", link(app, docname, data, data.id))
                said = there.found
                earlier = " (judged on what an earlier form of its check recorded)"
                item += nodes.Text(
                    f": {_mark(there).astext()} {there.cause}: {there.reason}. "
                    f"Recorded: {said}" + (earlier if there.partial else "")
                )
                listed_here += nodes.list_item("", item)
            elif there.status == data.status:
                host = host_status(claim_of(data), run, data.checked)
                if host is not None and host != there.status:
                    item = nodes.paragraph("", "", link(app, docname, data, data.id))
                    item += nodes.Text(
                        f": {_mark(there).astext()} as in this build, where that machine's "
                        f"CPU, under the same JAX {run.jax}, gave {host.symbol}: a difference "
                        f"of that release on the CPU (the version notes date it), not of the "
                        f"{run.sold_as}."
                    )
                    host_differs += nodes.list_item("", item)
        section = nodes.section(ids=[f"differences-{run.name}"])
        section += nodes.title(text=f"On the {run.sold_as} (JAX {run.jax})")
        section += nodes.paragraph(
            text=f"{cpu_only} claims are checked on the CPU alone, facts of the CPU or checks "
            f"that read what its compiler prints ({Status.CANNOT_CHECK.symbol} CPU). Every "
            "other claim that reads otherwise there, or did otherwise than its statement in "
            "the way the book says of that device:"
        )
        section += listed_here
        if host_differs.children:
            section += nodes.paragraph(
                text=f"Every claim the {run.sold_as} gave as this build does, where its host "
                "CPU did not:"
            )
            section += host_differs
        found.append(section)
    return found


def _matrix_page(app, docname: str, matrix: ClaimsMatrix, home: dict) -> list[nodes.Node]:
    """The matrix's page: its legend, the table, and each recorded run's differences."""
    recorded = ", ".join(sorted({report.recorded for report in matrix.reports}))
    unknown = [report.jax for report in matrix.reports if not report.machine]
    machines = sorted({str(report.machine) for report in matrix.reports if report.machine})
    this = this_release(home)
    linked = [LINKED] if set(app.config.book_site_versions) - {this} else []
    intro = nodes.paragraph(
        text=f"Recorded {recorded}"
        + (f", on {', '.join(machines)}" if machines else "")
        + (f"; the records of {', '.join(unknown)} do not say on which machine" if unknown else "")
        + ". In a release's column:"
    )
    legend = [intro, _lines([*LEGEND, *linked]), *_backend_legend()]
    runs = recorded_runs(app.config.book_backends) if app.config.book_backends else []
    table = _matrix_table(app, docname, matrix, home, runs)
    return [*legend, table, *_differences(app, docname, home, runs)]


def fill_pages(app, doctree, docname) -> None:
    """`doctree-resolved`: fill each version note and the matrix with every page's verdicts."""
    notes = list(doctree.findall(note_release))
    pages = [n for n in doctree.findall(every_page) if n["fill"] == "claims-matrix"]
    if not notes and not pages:
        return
    matrix = claims_matrix(app.config)
    home = home_verdicts(book_data(app.env).pages)
    for node in notes:
        _fill_note(app, docname, node, matrix, home)
    for node in pages:
        node.replace_self(_matrix_page(app, docname, matrix, home))


def claims_matrix(config) -> ClaimsMatrix:
    """The claims matrix of `book_matrix` (data/matrix/), read once while it stays the same."""
    return _read_matrix(Path(config.book_matrix), config.book_matrix_digest)


@functools.lru_cache(maxsize=1)
def _read_matrix(folder: Path, digest: str) -> ClaimsMatrix:
    return ClaimsMatrix.read(folder)


def matrix_digest(app, config) -> None:
    """`config-inited`: the matrix's records as a digest in the config, so that a release
    recorded again, or added, reads every page again."""
    digest = hashlib.sha256()
    for path in sorted(Path(config.book_matrix).glob("jax-*.json")):
        digest.update(path.name.encode() + path.read_bytes())
    config.book_matrix_digest = digest.hexdigest()[:16]


def setup(app):
    app.add_config_value("book_matrix", "", "env", types=[str])
    app.add_config_value("book_matrix_digest", "", "env", types=[str])
    app.connect("config-inited", matrix_digest)
    app.add_directive("claims-matrix", NeedsEveryPage)
    app.add_directive("version-note", VersionNote)
    app.add_node(note_release)
    app.connect("doctree-resolved", fill_pages)
    return SERIAL
