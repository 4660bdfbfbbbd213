"""What a build learned, as data: each page's statements, verdicts, failing cells and timed
comparisons, and every problem Sphinx logged.

The `book` domain keeps it with the environment (cleared when a page is read again); the
collector fills it as each page is read. `build_record` gathers it when the build ends, for
RECORD beside the pages (what the failure summary, book.failures, reads) and a drift build's
report (book.drift_page); a drift build's banner reads the domain.
"""

import datetime as dt
import importlib.metadata
import logging as stdlib_logging
import platform
import re
from dataclasses import replace
from pathlib import Path

from docutils import nodes
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.domains import Domain
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging
from sphinx.util.nodes import get_node_line, get_node_source

from book import SERIAL, build_folder
from book.cache import opened
from book.notebooks import executed_notebook
from book.outputs import output_kind, shown_verdicts
from chapter2.claims.registry import LABEL_PREFIX
from chapter2.records import (
    BuildRecord,
    ComparisonRecord,
    FailingCell,
    PageRecord,
    Problem,
    Statement,
    VerdictRecord,
)
from chapter2.timing import COMPARISON_MIME

logger = logging.getLogger(__name__)
RECORD = "record.json"
VERDICT_ATTRIBUTE = "book_verdict"  # set by book.verdicts.VerdictRenderer on a verdict's node
CELL_FAILED = ("book", "cell")  # a failing cell's warning: recorded as data, not as a problem


class BookDomain(Domain):
    """The book's per-page data, pickled with the environment: `pages` maps a page to what
    its last reading found (`PageRecord`)."""

    name, label = "book", "Optimizing JAX Code for Performance"
    initial_data = {"pages": {}}  # noqa: RUF012 - Sphinx's

    @property
    def pages(self) -> dict[str, PageRecord]:
        return self.data["pages"]

    def page(self, docname: str) -> PageRecord:
        """What `docname` found so far in this reading."""
        return self.pages.setdefault(docname, PageRecord())

    def clear_doc(self, docname: str) -> None:
        self.pages.pop(docname, None)


def book_data(env) -> BookDomain:
    return env.get_domain("book")


class BookCollector(EnvironmentCollector):
    """Fills the `book` domain as each page is read, and names the pages to read again. It
    lives as long as its application, one build in `python -m book build`, so it knows
    whether this build read a page."""

    def __init__(self) -> None:
        super().__init__()
        self.read_a_page = False

    def clear_doc(self, app, env, docname: str) -> None:
        """The domain clears its own data. (No merge: the layer reads pages one at a time.)"""

    def process_doc(self, app, doctree: nodes.document) -> None:
        """The page's statements and verdicts (from the nodes the renderer made) and, from its
        executed notebook, its failing cells (each one a warning at its line) and comparisons."""
        env = app.env
        self.read_a_page = True
        page = book_data(env).page(env.docname)
        page.statements = statements(doctree)
        for node in doctree.findall(lambda n: isinstance(n, nodes.Element)):
            if VERDICT_ATTRIBUTE in node:
                page.verdicts[node[VERDICT_ATTRIBUTE].id] = node[VERDICT_ATTRIBUTE]
        build = build_folder(app)
        notebook = executed_notebook(build, app.config.nb_execution_cache_path, env.docname)
        if notebook is None:
            return
        facts = notebook_facts(notebook, env.docname, source_path(env, env.docname))
        page.failing_cells, page.comparisons, page.checked_claims = facts
        for failure in page.failing_cells:
            logger.warning(
                "\n".join(failure_lines(failure)),
                location=(env.docname, failure.line),
                type=CELL_FAILED[0],
                subtype=CELL_FAILED[1],
            )

    def get_updated_docs(self, app, env) -> list[str]:
        """After any page was read, the pages with a note or matrix (they show every page's
        verdicts) are written again."""
        if not self.read_a_page:
            return []
        pages = book_data(env).pages
        return sorted(name for name, page in pages.items() if page.needs_every_page)

    def get_outdated_docs(self, app, env, added, changed, removed) -> list[str]:
        """The pages the last record names, with a failing cell or a problem: read again."""
        record = read_record(build_folder(app))
        if record is None:
            return []
        named = {cell.page for cell in record.failing_cells}
        named |= {p.page for p in record.problems}
        return sorted(named & env.found_docs)


def statements(doctree: nodes.document) -> dict[str, Statement]:
    """What the page says under each `(claim-<id>)=` label (the paragraph or box that holds the
    label's id), as a reader reads it, and its line."""
    found = {}
    for node in doctree.findall(nodes.Element):
        for name in node["ids"]:
            if name.startswith(LABEL_PREFIX) and not isinstance(node, nodes.target):
                text = " ".join(node.astext().split())
                found[name.removeprefix(LABEL_PREFIX)] = Statement(text, node.line)
    return found


def source_path(env, docname: str) -> str:
    """A page's source, from the folder above the sources ("docs/fusion.md")."""
    return str(Path(env.doc2path(docname)).relative_to(Path(env.srcdir).parent))


def notebook_facts(
    notebook, page: str, path: str
) -> tuple[list[FailingCell], list[ComparisonRecord], list[str]]:
    """The executed notebook of `page` (whose source is `path`): its failing cells (with the
    claims whose verdicts they show), timed comparisons (shown or glued), and the claims whose
    checks it ran."""
    lines = notebook.metadata.get("source_map", [])
    failing, comparisons, checks, earlier = [], [], [], False
    for index, cell in enumerate(notebook.cells):
        outputs = cell.get("outputs", [])
        data = [o.get("data", {}) for o in outputs]
        shown = shown_verdicts(cell)
        checks += shown
        comparisons += [
            ComparisonRecord.from_dict(v)
            for d in data
            for k, v in d.items()
            if output_kind(k) == COMPARISON_MIME
        ]
        for output in outputs:
            if output.get("output_type") == "error":
                failing.append(
                    FailingCell(
                        page=page,
                        path=path,
                        line=lines[index] if index < len(lines) else None,
                        cell=cell.source.strip(),
                        error=f"{output['ename']}: {output['evalue']}",
                        error_type=output["ename"],
                        claim_ids=shown,
                        after_a_failure=earlier,
                    )
                )
                earlier = True
    return failing, comparisons, checks


AFTER_A_FAILURE = "(after a failing cell of this page: it may follow from it)"


def failure_lines(failure: FailingCell, said: tuple[str, ...] | list[str] = ()) -> list[str]:
    """A failing cell's message, line by line: the error, what the book says of each claim it
    found drifted (`said`), then the cell's last lines, indented below the first."""
    head = [AFTER_A_FAILURE] if failure.after_a_failure else []
    first, *rest = [*head, *failure.error.splitlines(), *said]
    cell = [f"  | {line}" for line in failure.cell.splitlines() if line.strip()][-2:]
    return [first, *(f"  {line}" for line in [*rest, *cell])]


class ProblemLog(logging.WarningStreamHandler):
    """Every warning Sphinx logs, as data: a warning stream handler (so Sphinx holds it back
    and hands it on as it does its own) that writes nowhere and keeps path, line, message."""

    def __init__(self, app) -> None:
        super().__init__(None)
        self.app, self.problems = app, []
        self.setLevel(stdlib_logging.WARNING)
        self.addFilter(self.shown)

    def shown(self, record) -> bool:
        """Whether Sphinx shows the warning (not in `suppress_warnings`). Sphinx's own
        WarningSuppressor would count it a second time in the build's closing line."""
        kind = (getattr(record, "type", ""), getattr(record, "subtype", ""))
        return not logging.is_suppressed_warning(*kind, self.app.config.suppress_warnings)

    def emit(self, record) -> None:
        if (getattr(record, "type", None), getattr(record, "subtype", None)) == CELL_FAILED:
            return
        path, line, page = self.where(record)
        message = stdlib_logging.LogRecord.getMessage(record)  # without Sphinx's location prefix
        problem = Problem(path, line, page, message)
        if not (getattr(record, "once", False) and problem in self.problems):  # as Sphinx shows
            self.problems.append(problem)

    def where(self, record) -> tuple[str, int, str | None]:
        """The problem's file (from the folder above the sources), its line (0 for none) and
        its page (None for a file that is not one)."""
        location, env = getattr(record, "location", None), getattr(self.app, "env", None)
        path, line = "", 0
        if env is None:  # a warning of the configuration: Sphinx makes `env` after it
            return path, line, None
        if isinstance(location, tuple):
            path, line = (env.doc2path(location[0]) if location[0] else ""), location[1] or 0
        elif isinstance(location, nodes.Node):
            path, line = get_node_source(location) or "", get_node_line(location) or 0
        elif isinstance(location, str):  # a page's name, or docutils' "path:line" or "path:"
            # (Sphinx hands docutils' reports on as the text docutils wrote)
            found = re.fullmatch(r"(.*?)(?::(\d*))?", location)
            path, line = found[1], int(found[2] or 0)
            if path.startswith("<"):  # docutils' "<unknown>", "<string>": no file
                path = ""
            elif not Path(path).is_absolute():
                path = str(env.doc2path(path))
        page = env.path2doc(str(path)) if path else None
        root = Path(self.app.srcdir).parent
        if path and Path(path).is_relative_to(root):
            path = str(Path(path).relative_to(root))
        return str(path), int(line), page

    def attach(self, app, config) -> None:
        """`config-inited`, first: listen before Sphinx's own warning stream, whose filter
        writes a warning's location into text, and before any extension warns (intersphinx
        of an inventory it cannot read, at builder-inited)."""
        stdlib_logging.getLogger(logging.NAMESPACE).handlers.insert(0, self)

    def write(self, app, exception) -> None:
        """`build-finished`: the record, beside the HTML (failures.py evicts failed pages)."""
        stdlib_logging.getLogger(logging.NAMESPACE).removeHandler(self)
        build_record(app.env, self.problems).dump(build_folder(app) / RECORD)


def cached_runs(env) -> dict[float, float]:
    """When each cached notebook ran: as myst-nb reports it, keyed, and as it was. The cache
    stores the time in UTC without its zone; myst-nb reads it back as local time."""
    if not Path(env.config.nb_execution_cache_path).is_dir():
        return {}
    with opened(env.config.nb_execution_cache_path) as cache:
        created = [record.created for record in cache.list_cache_records()]
    return {when.timestamp(): when.replace(tzinfo=dt.UTC).timestamp() for when in created}


def build_record(env, problems: list[Problem]) -> BuildRecord:
    """What this build knows: versions, each page's facts and seconds, the problems."""
    pages, runs = {}, cached_runs(env)
    for docname, page in sorted(book_data(env).pages.items()):
        executed = NbMetadataCollector.get_exec_data(env, docname) or {}
        ran = executed.get("mtime")  # when it ran, in this build or, cached, before
        pages[docname] = replace(
            page,
            path=source_path(env, docname),
            seconds=executed.get("runtime"),
            executed_at=runs.get(ran, ran),
        )
    return BuildRecord(
        jax=importlib.metadata.version("jax"),
        jaxlib=importlib.metadata.version("jaxlib"),
        python=platform.python_version(),
        recorded=dt.date.today().isoformat(),
        pages=pages,
        problems=sorted(problems, key=lambda p: (p.path, p.line)),
    )


def read_record(build: Path) -> BuildRecord | None:
    """The last record written in `build` (None when none)."""
    path = build / RECORD
    return BuildRecord.load(path) if path.exists() else None


def home_verdicts(pages: dict[str, PageRecord]) -> dict[str, VerdictRecord]:
    """Each claim's verdict as the pages found it, preferring its own page's, with what its
    page says ("" where it says nothing)."""
    home = {}
    for page, found in sorted(pages.items()):
        for claim_id, data in found.verdicts.items():
            if data.page == page or claim_id not in home:
                home[claim_id] = data
    return {
        claim_id: replace(data, statement=statement(pages, data.page, claim_id).text)
        for claim_id, data in home.items()
    }


def statement(pages: dict[str, PageRecord], page: str, claim_id: str) -> Statement:
    """What `page` says of `claim_id` and its line (empty where it says nothing)."""
    return pages[page].statement(claim_id) if page in pages else Statement()


def setup(app):
    app.add_domain(BookDomain)
    app.add_env_collector(BookCollector)
    problems = ProblemLog(app)
    app.connect("config-inited", problems.attach, priority=0)
    app.connect("build-finished", problems.write)
    return {**SERIAL, "env_version": 3}  # 3: a page's record is typed (PageRecord)
