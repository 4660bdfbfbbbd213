"""Claim verdicts on the page, and the table of all of them on the version-notes page.

`chapter2.claims.verify` returns a verdict whose display carries its data under
VERDICT_MIME. This module is the myst-nb renderer for that data (an evidence box coloured by
status, with the check's source in a dropdown), collects every verdict a page showed, and
fills each `{claims-table}` with them once all pages have been read. No claim is checked
twice: the table shows what the pages' own cells found, and, from the measured claim x
release matrix, the oldest JAX release from which each claim holds.
"""

import json
import re
from dataclasses import replace
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from chapter2.claims.registry import VERDICT_MIME

STATUS_TEXT = {
    "holds": "holds",
    "drifted": "DRIFTED",
    "as specified": "as the book describes, on this machine",
    "differs here": "differs on this machine",
}


def escape(text: str) -> str:
    """Text that Markdown shows as it is: `<host>` stays visible, `a*b*c` is not emphasis."""
    return re.sub(r"([\\`*_<>\[\]|{}#~$])", r"\\\1", text)


def status_class(status: str) -> str:
    return "claim-" + status.replace(" ", "-")


def verdict_markdown(data: dict) -> str:
    """The evidence box of one verdict, in MyST."""
    said = STATUS_TEXT[data["status"]]
    source = data["check_source"].rstrip()
    return (
        f"````{{container}} claim-verdict {status_class(data['status'])}\n"
        f"**Checked** `{data['id']}`: **{said}** on JAX {data['jax']}. "
        f"{escape(data['evidence'])}\n\n"
        f"```{{dropdown}} The check behind this verdict\n"
        f":class-container: claim-check\n\n"
        f"~~~python\n{source}\n~~~\n```\n````\n"
    )


class VerdictRenderer:
    """myst-nb mime renderer plugin for VERDICT_MIME outputs (registered as an entry point)."""

    mime_priority_overrides = (("*", VERDICT_MIME, 1),)

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != VERDICT_MIME or inline:
            return None
        env = renderer.renderer.document.settings.env
        verdict = dict(data.content)
        env.book_verdicts.setdefault(env.docname, {})[verdict["id"]] = verdict
        text = replace(data, mime_type="text/markdown", content=verdict_markdown(verdict))
        return renderer.render_markdown(text)


class claims_table(nodes.General, nodes.Element):
    """Placeholder for the table of verdicts, filled when the page is written."""


class ClaimsTable(SphinxDirective):
    """`{claims-table}`: every claim the pages checked, with its status on this JAX."""

    def run(self):
        self.env.book_table_docs.add(self.env.docname)
        if Path(self.config.book_claims_matrix).is_file():  # a new matrix: read again
            self.env.note_dependency(self.config.book_claims_matrix)
        return [claims_table()]


def _row(cells: list[list[nodes.Node]], classes: list[str]) -> nodes.row:
    row = nodes.row(classes=classes)
    for content in cells:
        row += nodes.entry("", *content)
    return row


def _table(rows: list[nodes.row]) -> nodes.table:
    heads = ["Section", "What the book says", "Status", "Holds since", "What this JAX did"]
    group = nodes.tgroup(cols=len(heads))
    group += [nodes.colspec(colwidth=w) for w in (8, 38, 11, 9, 34)]
    group += nodes.thead("", _row([[nodes.paragraph(text=h)] for h in heads], []))
    group += nodes.tbody("", *rows)
    return nodes.table("", group, classes=["claims-table"])


def since_releases(path: str) -> dict[str, str]:
    """From the claim x release matrix (data/matrix/matrix.json), since when each claim holds."""
    if not path or not Path(path).exists():
        return {}
    claims = json.loads(Path(path).read_text())["claims"]
    return {claim_id: entry["since"] or "none measured" for claim_id, entry in claims.items()}


def fill_tables(app, doctree, docname) -> None:
    """`doctree-resolved`: replace each placeholder with the verdicts of every page."""
    env = app.env
    since = since_releases(app.config.book_claims_matrix)
    home = {}
    for page, found in sorted(env.book_verdicts.items()):
        for claim_id, data in found.items():
            if data["section"] == page or claim_id not in home:
                home[claim_id] = data
    labels = env.get_domain("std").anonlabels
    rows = []
    numbers = {page: env.toc_secnumbers.get(page, {}).get("", ()) for page in env.all_docs}
    for data in sorted(home.values(), key=lambda d: numbers.get(d["section"]) or (999,)):
        page = data["section"]
        number = ".".join(map(str, numbers.get(page) or ()))
        title = env.titles[page].astext() if page in env.titles else page
        target, anchor = labels.get(data["label"], (page, ""))
        uri = app.builder.get_relative_uri(docname, target) + (f"#{anchor}" if anchor else "")
        link = nodes.reference("", number or title, refuri=uri, reftitle=title)
        said = nodes.paragraph(text=data["statement"])
        rows.append(
            _row(
                [
                    [nodes.paragraph("", "", link)],
                    [said],
                    [nodes.paragraph(text=STATUS_TEXT[data["status"]])],
                    [nodes.paragraph(text=since.get(data["id"], "not measured"))],
                    [nodes.paragraph(text=data["evidence"])],
                ],
                [status_class(data["status"])],
            )
        )
    for node in doctree.findall(claims_table):
        node.replace_self(_table(rows))


def init_env(app, env, docnames) -> None:
    """`env-before-read-docs`: the stores this module keeps in the environment, and whether
    this build reads any page (a page removed from the toctree re-reads the index too)."""
    if not hasattr(env, "book_verdicts"):
        env.book_verdicts = {}
        env.book_table_docs = set()
    env.book_pages_read = bool(docnames)


def purge(app, env, docname) -> None:
    env.book_verdicts.pop(docname, None)
    env.book_table_docs.discard(docname)


def merge(app, env, docnames, other) -> None:
    for docname in docnames:
        if docname in other.book_verdicts:
            env.book_verdicts[docname] = other.book_verdicts[docname]
    env.book_table_docs |= other.book_table_docs & set(docnames)


def rewrite_tables(app, env) -> list[str]:
    """`env-get-updated`: when any page was read, pages with a table are written again, so
    they show the latest verdicts; a build that read nothing has nothing new to show."""
    return sorted(env.book_table_docs) if getattr(env, "book_pages_read", True) else []
