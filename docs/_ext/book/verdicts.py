"""Claim verdicts on the page (a box for a warning at home, else a mark that opens to what
the check found and its code), and, once every page is read, the version notes and the
claims matrix, filled from the pages' verdicts and the measured matrix."""

import json
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from book import SERIAL
from book.backends import matrix_file, matrix_record, matrix_value, with_recorded
from book.markdown import quoted, with_code
from book.matrix import LEGEND, LINKED, NOT_MEASURED, since_text
from book.record import VERDICT_ATTRIBUTE, book_data, home_verdicts
from book.site import release_folder
from chapter2.claims.backends import Cause, cause_there, claim_of, host_status
from chapter2.claims.registry import VERDICT_MIME
from chapter2.records import Kind, Status, VerdictRecord, compared
from chapter2.runs import recorded_runs

logger = logging.getLogger(__name__)


def status_class(status: str) -> str:
    return "claim-" + status.replace(" ", "-")


def words(value) -> str:
    """A value of an observation as a reader says it: yes and no, lists without quotes, a
    dict's keys sorted (the execution cache sorts them: a fresh build says them alike)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, list):
        return "[" + ", ".join(words(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {words(v)}" for k, v in sorted(value.items())) + "}"
    return str(value)


def findings(data: VerdictRecord) -> list[str]:
    """What the check found, a value per row, each with what the book expects of it (for the
    maintainers' page of checks; a reader's panel says it in words); none where the check
    could not run (its evidence says why)."""
    if data.observed is None:
        return []
    described = "the book describes" if data.kind == "observed" else "the book expects"
    return [
        f"{c.name}: {words(c.observed)}"
        + (f" ({described} {words(c.expected)})" if c.differs else " (as expected)" * c.expects)
        for c in compared(data.expected, data.observed, ordered=True)
    ]


def evidence_words(data: VerdictRecord) -> str:
    """What was run and what JAX did, as the check says it in words; where it could not run,
    why; where it says nothing, its values in words."""
    if data.observed is None:
        return data.evidence
    if data.said:
        return data.said
    return "; ".join(f"{k}: {words(v)}" for k, v in sorted(data.observed.items())) + "."


CHECKS_PAGE = "checks"  # the maintainers' page of every check, its values and its code


def only_reran(data: VerdictRecord) -> bool:
    """Whether the check ran again what the page shows and came out as the page says: then it
    has nothing to add but that."""
    return bool(data.repeats) and data.status.as_the_page_says


def reran_words(data: VerdictRecord) -> str:
    return f"Ran {data.repeats} again: JAX did as shown."


def check_anchor(data: VerdictRecord) -> str:
    """The id of the claim's section on the page of checks."""
    return f"check-{data.id}"


def checks_link(data: VerdictRecord) -> str:
    return f"{CHECKS_PAGE}.html#{check_anchor(data)}"


def panel(data: VerdictRecord) -> str:
    """The body of a verdict's panel: what was run and what JAX did, in words (where the check
    only ran again what the page shows, only that), and a link to how it is checked, on the
    page of checks."""
    said = reran_words(data) if only_reran(data) else with_code(evidence_words(data))
    if data.status is Status.DRIFTED:
        said += " The book says otherwise."
    return f'{said}\n\n<a href="{checks_link(data)}">How this is checked</a>\n'


def reran_node(data: VerdictRecord) -> nodes.container:
    """What a check that only ran again what the page shows leaves on the page: nothing a
    reader sees (the cell's output above is the evidence; the build fails if JAX does
    otherwise), an empty element that carries its verdict to the build's record."""
    return nodes.container(classes=["claim-reran"], ids=[f"reran-{data.id}"])


def mark_title(data: VerdictRecord) -> str:
    status = data.status
    home, there = (data.only_on or [None])[0], data.platform
    if status is Status.CANNOT_CHECK and home and there and home != there:
        return f"{status.symbol} a fact of the {home.upper()}, not checked on {there.upper()}"
    return f"{status.symbol} {status.words(data.jax)}"


def compact_title(data: VerdictRecord) -> str:
    """A mark's title in MyST: a check that came out as the page says is its symbol alone, its
    words read out to a screen reader only; any other keeps its words in sight."""
    status = data.status
    if not status.as_the_page_says:
        return mark_title(data)
    return f"{status.symbol} [{status.words(data.jax)}]{{.visually-hidden}}"


def verdict_markdown(data: VerdictRecord, boxed: bool) -> str:
    """A verdict in MyST: a box for a warning on its own page, a compact mark otherwise."""
    classes = f"{status_class(data.status)}"
    if not boxed:
        return (
            f"````{{dropdown}} {compact_title(data)}\n:class-container: claim-mark {classes}\n\n"
            f"{panel(data)}````\n"
        )
    return (
        f"`````{{container}} claim-verdict {classes}\n"
        f"**{mark_title(data)}**\n\n"
        f"````{{dropdown}} What was run\n"
        f":class-container: claim-check\n\n{panel(data)}````\n`````\n"
    )


class VerdictRenderer:
    """myst-nb mime renderer plugin for VERDICT_MIME outputs (registered as an entry point)."""

    mime_priority_overrides = (("*", VERDICT_MIME, 1),)

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != VERDICT_MIME or inline:
            return None
        verdict = VerdictRecord.load(data.content)
        page = renderer.renderer.sphinx_env.docname
        boxed = verdict.warning and verdict.page == page
        if only_reran(verdict) and not boxed:
            rendered = [reran_node(verdict)]
        else:
            content = verdict_markdown(verdict, boxed)
            rendered = renderer.render_markdown(
                replace(data, mime_type="text/markdown", content=content)
            )
        rendered[0][VERDICT_ATTRIBUTE] = verdict  # the collector (book.record) finds it there
        return rendered


# --- version notes and the matrix, filled once every page has been read ----------------------


class every_page(nodes.General, nodes.Element):
    """Placeholder for the claims matrix or the list of checks (`fill`: its directive's
    name), filled when the page is written."""


class note_release(nodes.General, nodes.Element):
    """Placeholder for a version note's measured release and links, filled when written."""


class NeedsEveryPage(SphinxDirective):
    """A directive whose output waits for every page's verdicts and reads the matrix:
    `{claims-matrix}`, every claim and its status under each measured release and here;
    `{claim-checks}`, each claim, what this build's check found and the check's code."""

    def note_page(self) -> None:
        book_data(self.env).page(self.env.docname).needs_every_page = True
        if Path(self.config.book_claims_matrix).is_file():  # a new matrix: read again
            self.env.note_dependency(self.config.book_claims_matrix)

    def run(self):
        self.note_page()
        return [every_page(fill=self.name)]


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
        before = release_before(claim_ids, read_matrix(self.config.book_claims_matrix))
        if before is not None and node["before"]:  # what that release did, in its words
            folder = Path(self.config.book_claims_matrix).parent
            self.env.note_dependency(str(matrix_file(folder, before)))
            try:
                recorded = matrix_record(folder, before)
                filled = with_recorded(node["before"], lambda key: matrix_value(recorded, key))
            except KeyError as err:
                return [self.state.document.reporter.warning(err.args[0], line=self.lineno)]
            node += self.parse_text_to_nodes(filled)[0].children
        box = nodes.container(classes=["version-note"])
        box += self.parse_content_to_nodes()
        box += node
        return [box]


def read_matrix(path: str) -> dict:
    """The measured claim x release matrix (data/matrix/matrix.json), or an empty one."""
    if not path or not Path(path).exists():
        return {"releases": [], "claims": {}}
    return json.loads(Path(path).read_text())


def _link(app, docname: str, data: dict, text: str, titled: bool = True) -> nodes.reference:
    """A link from `docname` to the claim's place on its page (titled with its statement)."""
    target, anchor = app.env.get_domain("std").anonlabels.get(data.label, (data.page, ""))
    uri = app.builder.get_relative_uri(docname, target) + (f"#{anchor}" if anchor else "")
    title = {"reftitle": data.statement} if titled and data.statement else {}
    return nodes.reference("", text, refuri=uri, **title)


def _section_number(env, page: str) -> str:
    """A page's number (2.3), or for an unnumbered page the head of its title (Case study)."""
    number = env.toc_secnumbers.get(page, {}).get("", ())
    title = env.titles[page].astext() if page in env.titles else page
    return ".".join(map(str, number)) or title.split(":")[0]


def _holds_from(entry: dict, releases: list[str]) -> str:
    """Since when a claim holds, in a version note's words (the matrix says it shorter,
    `book.matrix.since_text`)."""
    if entry["since"] is None:
        return "in none of the releases measured"
    if entry["since"] == releases[0]:
        return f"in every release measured, {releases[0]} to {releases[-1]}"
    earlier = releases[: releases.index(entry["since"])]
    if entry["status"].get(earlier[-1]) == Status.CANNOT_CHECK:
        return f"from JAX {entry['since']}, the first release where it can be checked"
    held = [r for r in earlier if entry["status"].get(r) == Status.HOLDS]
    if held:  # it held before, then not: a regression, fixed in `since`
        broken = [r for r in earlier if entry["status"].get(r) == Status.DRIFTED]
        first = f"in {held[0]}" if len(held) == 1 else f"in {held[0]} to {held[-1]}"
        return f"from JAX {entry['since']} and {first}; not in {', '.join(broken)}"
    return f"from JAX {entry['since']}"


def note_release_text(claim_ids: list[str], matrix: dict, home: dict) -> str:
    """Since which release a note's asserted claims hold (all of them, then each part that
    holds longer); what this machine did for the others."""
    releases = [r["jax"] for r in matrix["releases"]]
    entries = {c: matrix["claims"].get(c) for c in claim_ids}
    asserted = [e for e in entries.values() if e is not None and e["kind"] == "asserted"]
    said = []
    if any(e is None for e in entries.values()):
        said.append("not yet measured under older releases")
    elif asserted:
        order = {None: len(releases), **{r: i for i, r in enumerate(releases)}}
        newest_first = sorted(asserted, key=lambda e: -order[e["since"]])
        whens = [_holds_from(e, releases) for e in newest_first]
        parts = [when for when in dict.fromkeys(whens[1:]) if when != whens[0]]
        said.append(f"holds as a whole {whens[0]}" if parts else f"holds {whens[0]}")
        said += [f"part of it holds {when}" for when in parts]
    observed = [home[c] for c in claim_ids if c in home and home[c].kind is Kind.OBSERVED]
    said += [f"on this machine: {d.status.words(d.jax)}" for d in observed]
    text = "; ".join(said)
    return text[:1].upper() + text[1:] + "."


CHANGED = "version-notes-changed"  # the label of the part of notes on a change of release


def release_before(claim_ids: list[str], matrix: dict) -> str | None:
    """The newest release measured before the one a note's asserted claims all hold from,
    or None when they hold in every release measured."""
    releases = [r["jax"] for r in matrix["releases"]]
    sinces = [
        matrix["claims"][c]["since"]
        for c in claim_ids
        if c in matrix["claims"] and matrix["claims"][c]["kind"] == "asserted"
    ]
    if not sinces or None in sinces:
        return None
    first = max(releases.index(since) for since in sinces)
    return releases[first - 1] if first > 0 else None


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


def _fill_note(app, docname: str, node: note_release, matrix: dict, home: dict) -> None:
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
        sections.setdefault(_section_number(app.env, home[claim_id].page), home[claim_id])
    for i, (number, data) in enumerate(sections.items()):
        if i:
            paragraph += nodes.Text(" and " if i == len(sections) - 1 else ", ")
        paragraph += _link(app, docname, data, number, titled=False)
    paragraph += nodes.Text(".")
    node.replace_self(paragraph)


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


def _matrix_table(app, docname: str, matrix: dict, home: dict, runs: list) -> nodes.container:
    releases = [r["jax"] for r in matrix["releases"]]
    this = next((d.jax for d in home.values()), "this build")
    shown = [r for r in releases if r != this]  # this build's own column says it
    heads = ["Claim", "Since", *shown, f"{this} (this build)", *map(_run_heading, runs)]
    group = nodes.tgroup(cols=len(heads))
    group += [nodes.colspec(colwidth=w) for w in (24, 10, *[3] * (len(heads) - 2))]
    group += nodes.thead("", _row([[nodes.paragraph(text=h)] for h in heads], []))
    env = app.env
    rows = []
    for data in _in_reading_order(env, home):
        entry = matrix["claims"].get(data.id, {"kind": data.kind, "since": None})
        number = _section_number(env, data.page)
        claim = nodes.paragraph("", f"{number}: ", _link(app, docname, data, data.id))
        since = since_text(entry, releases) if data.id in matrix["claims"] else "not measured"
        statuses = [entry.get("status", {}).get(r) for r in shown] + [data.status]
        cells = [[claim], [nodes.paragraph(text=since)]]
        built = set(app.config.book_site_versions) - {this}  # releases this site holds
        for release, status in zip([*shown, this], statuses, strict=True):
            symbol = _symbol(status)
            if status == Status.DRIFTED and release in built:  # the page as that release ran it
                uri = f"{release_folder(release)}/{data.page}.html#{data.label}"  # from root
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
        for data in _in_reading_order(app.env, home):
            there = _there(data, run)
            if there.cause == Cause.CPU_ONLY:
                cpu_only += 1
            elif there.cause:
                item = nodes.paragraph("", "", _link(app, docname, data, data.id))
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
                    item = nodes.paragraph("", "", _link(app, docname, data, data.id))
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


def _in_reading_order(env, home: dict) -> list[VerdictRecord]:
    numbers = {page: env.toc_secnumbers.get(page, {}).get("", ()) for page in env.found_docs}
    return sorted(home.values(), key=lambda d: numbers.get(d.page) or (999,))


# What the page of checks says of a claim whose statement says no more than its check tests,
# and of one that has not said in words what its check tests.
NOTHING_MORE = "Nothing: the statement says no more than its check tests."
NOT_SAID = "Not said in words yet; the check's code is below."


def coverage(data: VerdictRecord) -> list[tuple[str, str]]:
    """What a claim's check tests and what its statement says that the check does not, as
    (heading, sentences) for the page of checks (`Claim.checks`, `Claim.unchecked`)."""
    if not data.checks:
        return [("Checked", NOT_SAID)]
    return [("Checked", data.checks), ("Not checked", data.unchecked or NOTHING_MORE)]


def _words(heading: str, text: str) -> nodes.paragraph:
    """A paragraph: the heading in bold, then the text, what it quotes in backticks as code."""
    paragraph = nodes.paragraph(classes=[f"claim-{heading.lower().replace(' ', '-')}"])
    paragraph += nodes.strong(text=f"{heading}: ")
    for kind, piece in quoted(text):
        paragraph += nodes.literal(text=piece) if kind == "code" else nodes.Text(piece)
    return paragraph


def _checks(app, docname: str, home: dict) -> list[nodes.Node]:
    """A section per claim, `check-<id>`: its statement, what its check tests and what the
    statement says beyond it, what this build's check found, the check's code."""
    found = []
    for data in _in_reading_order(app.env, home):
        section = nodes.section(ids=[check_anchor(data)])
        section += nodes.title(text=f"{_section_number(app.env, data.page)}: {data.id}")
        said = nodes.paragraph()
        said += _link(app, docname, data, "The book says")
        said += nodes.Text(f": {data.statement}")
        section += said
        section += [_words(heading, text) for heading, text in coverage(data)]
        section += nodes.paragraph(text=f"{mark_title(data)}. {evidence_words(data)}")
        values = nodes.bullet_list()
        for row in findings(data):
            values += nodes.list_item("", nodes.paragraph(text=row))
        section += values
        section += nodes.literal_block(text=data.check_source.rstrip(), language="python")
        found.append(section)
    return found


def fill_pages(app, doctree, docname) -> None:
    """`doctree-resolved`: fill each version note, matrix and list of checks with every page's
    verdicts."""
    placeholders = [
        *doctree.findall(note_release),
        *doctree.findall(every_page),
    ]
    if not placeholders:
        return
    matrix, home = (
        read_matrix(app.config.book_claims_matrix),
        home_verdicts(book_data(app.env).pages),
    )
    for node in placeholders:
        if isinstance(node, note_release):
            _fill_note(app, docname, node, matrix, home)
        elif node["fill"] == "claim-checks":
            node.replace_self(_checks(app, docname, home))
        else:
            recorded = ", ".join(sorted({r["recorded"] for r in matrix["releases"]}))
            unknown = [r["jax"] for r in matrix["releases"] if "machine" not in r]
            machines = sorted(
                {
                    f"{r['machine']['cpu']} ({r['machine']['cores']} cores)"
                    for r in matrix["releases"]
                    if "machine" in r
                }
            )
            this = next((d.jax for d in home.values()), None)
            linked = [LINKED] if set(app.config.book_site_versions) - {this} else []
            intro = nodes.paragraph(
                text=f"Recorded {recorded}"
                + (f", on {', '.join(machines)}" if machines else "")
                + (
                    f"; the records of {', '.join(unknown)} do not say on which machine"
                    if unknown
                    else ""
                )
                + ". In a release's column:"
            )
            legend = [intro, _lines([*LEGEND, *linked]), *_backend_legend()]
            runs = recorded_runs(app.config.book_backends) if app.config.book_backends else []
            table = _matrix_table(app, docname, matrix, home, runs)
            node.replace_self([*legend, table, *_differences(app, docname, home, runs)])


def setup(app):
    app.add_config_value("book_claims_matrix", "", "env", types=[str])
    app.add_directive("claims-matrix", NeedsEveryPage)
    app.add_directive("claim-checks", NeedsEveryPage)
    app.add_directive("version-note", VersionNote)
    app.add_node(every_page)
    app.add_node(note_release)
    app.connect("doctree-resolved", fill_pages)
    return SERIAL
