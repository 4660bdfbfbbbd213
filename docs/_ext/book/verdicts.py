"""Claim verdicts on the page (a box for a warning at home, else a mark that opens to what
the check found and its code), and, once every page is read, the page of checks: each claim,
what its check tests and found, and its code. Pages that wait for every page's verdicts
(this one, the claims matrix, book.matrix) start here."""

from dataclasses import replace

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from book import SERIAL
from book.markdown import quoted, with_code
from book.record import VERDICT_ATTRIBUTE, book_data, home_verdicts
from chapter2.claims.registry import VERDICT_MIME
from chapter2.records import Kind, Status, VerdictRecord, compared


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
    described = "the book describes" if data.kind is Kind.OBSERVED else "the book expects"
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


def checkslink(data: VerdictRecord) -> str:
    return f"{CHECKS_PAGE}.html#{check_anchor(data)}"


def panel(data: VerdictRecord) -> str:
    """The body of a verdict's panel: what was run and what JAX did, in words (where the check
    only ran again what the page shows, only that), and a link to how it is checked, on the
    page of checks."""
    said = reran_words(data) if only_reran(data) else with_code(evidence_words(data))
    if data.status is Status.DRIFTED:
        said += " The book says otherwise."
    return f'{said}\n\n<a href="{checkslink(data)}">How this is checked</a>\n'


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


def is_boxed(verdict: VerdictRecord, page: str) -> bool:
    """Whether a verdict shows as a box on `page`: a warning, on its own page (elsewhere, and
    any other claim, it is a mark)."""
    return bool(verdict.warning) and verdict.page == page


class VerdictRenderer:
    """myst-nb mime renderer plugin for VERDICT_MIME outputs (registered as an entry point)."""

    mime_priority_overrides = (("*", VERDICT_MIME, 1),)

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != VERDICT_MIME or inline:
            return None
        verdict = VerdictRecord.from_dict(data.content)
        boxed = is_boxed(verdict, renderer.renderer.sphinx_env.docname)
        if only_reran(verdict) and not boxed:
            rendered = [reran_node(verdict)]
        else:
            content = verdict_markdown(verdict, boxed)
            rendered = renderer.render_markdown(
                replace(data, mime_type="text/markdown", content=content)
            )
        rendered[0][VERDICT_ATTRIBUTE] = verdict  # the collector (book.record) finds it there
        return rendered


# --- pages filled once every page has been read --------------------------------------------


class every_page(nodes.General, nodes.Element):
    """Placeholder for the claims matrix or the list of checks (`fill`: its directive's
    name), filled when the page is written."""


class NeedsEveryPage(SphinxDirective):
    """A directive whose output waits for every page's verdicts: `{claims-matrix}`, every
    claim and its status under each measured release and here (book.matrix);
    `{claim-checks}`, each claim, what this build's check found and the check's code."""

    def note_page(self) -> None:
        book_data(self.env).page(self.env.docname).needs_every_page = True

    def run(self):
        self.note_page()
        return [every_page(fill=self.name)]


def link(app, docname: str, data: VerdictRecord, text: str, titled: bool = True) -> nodes.reference:
    """A link from `docname` to the claim's place on its page (titled with its statement)."""
    target, anchor = app.env.get_domain("std").anonlabels.get(data.label, (data.page, ""))
    uri = app.builder.get_relative_uri(docname, target) + (f"#{anchor}" if anchor else "")
    title = {"reftitle": data.statement} if titled and data.statement else {}
    return nodes.reference("", text, refuri=uri, **title)


def section_number(env, page: str) -> str:
    """A page's number (2.3), or for an unnumbered page the head of its title (Case study)."""
    number = env.toc_secnumbers.get(page, {}).get("", ())
    title = env.titles[page].astext() if page in env.titles else page
    return ".".join(map(str, number)) or title.split(":")[0]


def in_reading_order(env, home: dict) -> list[VerdictRecord]:
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
    for data in in_reading_order(app.env, home):
        section = nodes.section(ids=[check_anchor(data)])
        section += nodes.title(text=f"{section_number(app.env, data.page)}: {data.id}")
        said = nodes.paragraph()
        said += link(app, docname, data, "The book says")
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
    """`doctree-resolved`: fill the list of checks with every page's verdicts."""
    for node in doctree.findall(every_page):
        if node["fill"] == "claim-checks":
            node.replace_self(_checks(app, docname, home_verdicts(book_data(app.env).pages)))


def setup(app):
    app.add_directive("claim-checks", NeedsEveryPage)
    app.add_node(every_page)
    app.connect("doctree-resolved", fill_pages)
    return SERIAL
