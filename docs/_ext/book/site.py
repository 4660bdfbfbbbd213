"""The book as each JAX release runs it: one site, one folder per release, a version switcher.

`nox -s site -- 0.10.2 0.11.2` builds the baseline book and a drift build under each release
(BOOK_SITE_VERSIONS names them all, the baseline first), then `python -m book.site` puts
each build in its folder of one site, `jax-<version>/`, beside `switcher.json` (the version
switcher of pydata-sphinx-theme reads it) and an `index.html` that opens the baseline.

In a drift build (BOOK_DRIFT_CLAIMS names the claims JSON of its JAX) every page opens with
a banner: which JAX built it, how many of the claims the page states differ there, and a
link to the page `drift-report`, which renders that release's drift report (BOOK_DRIFT_REPORT)
in the build itself. A verify cell whose claim drifted shows its verdict in place; its
`ClaimDrift` traceback, which says the same, is left out of the page. In the baseline build
the page `drift-report` summarises every committed report (data/drift/jax-*/report.json).
"""

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from chapter2.claims.drift import cause_sentence, counted, to_markdown

REPORT_PAGE = "drift-report"


def folder(version: str) -> str:
    """The site folder of the build under JAX `version`."""
    return f"jax-{version}"


def _read_json(path: str) -> dict | None:
    return json.loads(Path(path).read_text()) if path and Path(path).is_file() else None


def banner(app, doctree, docname) -> None:
    """`doctree-resolved`: in a drift build, the banner at the top of every page: the claims
    it shows that no longer hold there, its cells that failed, and a link to the report."""
    claims = _read_json(app.config.book_drift_claims)
    if claims is None:
        return
    jax, versions = claims["jax"], app.config.book_site_versions
    baseline = versions[0] if versions else "the baseline"
    shown = list(app.env.book_verdicts.get(docname, {}).values())
    differ = [v for v in shown if v["status"] == "drifted"]
    if not shown:
        said = "This page shows no claim."
    elif differ:
        said = (
            f"Under it, {counted(len(differ), 'claim')} of the {len(shown)} this page shows "
            f"no longer {'holds' if len(differ) == 1 else 'hold'} (marked ✗)."
        )
    else:
        said = f"Every claim this page shows holds under it ({len(shown)})."
    report = _read_json(app.config.book_drift_report)
    if report is not None and report["jax"] == jax:
        failed = [c for c in report["failing_cells"] if c["page"] == docname]
        if failed:
            what = "what it prints" if len(failed) == 1 else "what they print"
            said += (
                f" {counted(len(failed), 'cell')} of this page failed: {what}, and the numbers "
                "they give the prose, are missing."
            )
    text = nodes.paragraph(
        "", "", nodes.Text(f"This page was built with JAX {jax}, not the baseline JAX {baseline}. ")
    )
    text += nodes.Text(said)
    if docname != REPORT_PAGE:
        uri = app.builder.get_relative_uri(docname, REPORT_PAGE)
        text += nodes.Text(" What changed, cause by cause: this release's ")
        text += nodes.reference("", "drift report", refuri=uri)
        text += nodes.Text(".")
    box = nodes.container("", text, classes=["drift-banner"], ids=["drift-banner"])
    sections = list(doctree.findall(nodes.section))
    target = sections[0] if sections else doctree
    title = next(iter(target.findall(nodes.title)), None)
    target.insert(target.index(title) + 1 if title is not None else 0, box)


def drop_drift_tracebacks(app, doctree, docname) -> None:
    """`doctree-resolved`: in a drift build, the ClaimDrift traceback of a cell whose verdict
    is shown above it goes (the verdict says what JAX did)."""
    if not app.config.book_drift_claims:
        return
    for block in list(doctree.findall(nodes.literal_block)):
        if "traceback" in block["classes"] and "ClaimDrift" in block.astext():
            cell = block.parent
            while cell is not None and "cell" not in cell.get("classes", []):
                cell = cell.parent
            marks = cell is not None and any(
                "claim-drifted" in n.get("classes", []) for n in cell.findall(nodes.Element)
            )
            if marks:
                block.parent.remove(block)


class DriftReport(SphinxDirective):
    """`{drift-report}`: this build's drift report, or, in the baseline, what each committed
    report found (data/drift/jax-*/report.json)."""

    def run(self):
        config = self.env.config
        own = _read_json(config.book_drift_report)
        if config.book_drift_report:
            self.env.note_dependency(config.book_drift_report)
        if own is not None:  # its headings one level down, under the page's title
            lines = to_markdown(own).splitlines()
            return self._parsed([f"#{line}" if line.startswith("#") else line for line in lines])
        reports = sorted(
            Path(config.book_drift_reports).glob("jax-*/report.json"),
            key=lambda p: [int(n) for n in p.parent.name[4:].split(".")],
        )
        if not reports:
            return self._parsed(["No drift report has been recorded."])
        found = []
        for path in reversed(reports):
            self.env.note_dependency(str(path))
            report = json.loads(path.read_text())
            lines = [f"## JAX {report['jax']}", "", _summary(report), ""]
            lines += [f"{n}. {cause_sentence(c)}" for n, c in enumerate(report["causes"], 1)]
            lines += ["", *_unexplained(report), ""]
            full = os.path.relpath(
                path.parent / "report.md", Path(self.env.doc2path(self.env.docname)).parent
            )
            lines.append(f"{{download}}`The full report <{full}>`.")
            found += self._parsed(lines)
            if report["jax"] in config.book_site_versions:  # the site holds that build
                uri = f"../{folder(report['jax'])}/{REPORT_PAGE}.html"
                link = nodes.reference("", "The full report", refuri=uri)
                section = next(
                    s
                    for s in self.state.document.findall(nodes.section)
                    if s[0].astext() == f"JAX {report['jax']}"
                )
                section += nodes.paragraph("", "", link, nodes.Text(", in that build."))
        return found

    def _parsed(self, lines: list[str]) -> list[nodes.Node]:
        """`lines` of Markdown as nodes; a heading among them opens a section of the page
        (MyST places it in the document itself, not among the nodes returned)."""
        box = nodes.container()
        self.state.nested_parse(StringList(lines), self.content_offset, box, match_titles=True)
        return box.children


def _unexplained(report: dict) -> list[str]:
    """What no claim explains, listed apart: each failing cell and changed output by page."""
    items = [("failing cell", c) for c in report["unexplained_cells"]]
    items += [("changed output", c) for c in report.get("unexplained_outputs", [])]
    if not items:
        return ["Nothing unexplained."]
    lines = ["Explained by no claim:", ""]
    for what, item in items:
        first = item["cell"].strip().splitlines()[0]
        lines.append(f"- a {what} of {{doc}}`{item['page']}`, the cell starting `{first}`")
    return lines


def _summary(report: dict) -> str:
    if not any(report[k] for k in ("changed_claims", "failing_cells", "changed_outputs")):
        return (
            f"Recorded {report['recorded']}: every claim holds, every cell ran, and no output "
            "changed."
        )
    return (
        f"Recorded {report['recorded']}: {counted(len(report['changed_claims']), 'claim')} "
        f"changed, in {counted(len(report['causes']), 'cause')}; "
        f"{counted(len(report['failing_cells']), 'failing cell')}; "
        f"{counted(len(report['changed_outputs']), 'changed output')}."
    )


def assemble(site: Path, builds: dict[str, Path], baseline: str) -> None:
    """Put each build (JAX version -> HTML folder) in its folder of `site`, with the switcher's
    JSON (baseline first, then newest first) and an index that opens the baseline."""
    site.mkdir(parents=True, exist_ok=True)
    for version, html in builds.items():
        target = site / folder(version)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(html, target)
    others = sorted(
        (v for v in builds if v != baseline),
        key=lambda v: [int(n) for n in v.split(".")],
        reverse=True,
    )
    switcher = [
        {
            "name": f"JAX {baseline} (baseline)",
            "version": baseline,
            "url": f"../{folder(baseline)}/",
            "preferred": True,
        },
        *({"name": f"JAX {v}", "version": v, "url": f"../{folder(v)}/"} for v in others),
    ]
    (site / "switcher.json").write_text(json.dumps(switcher, indent=2) + "\n")
    start = f"{folder(baseline)}/index.html"
    (site / "index.html").write_text(
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0; url={start}">'
        f"<title>Optimizing JAX Code for Performance</title></head>"
        f'<body><a href="{start}">The book, built with JAX {baseline}</a></body></html>\n'
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m book.site", description=__doc__)
    parser.add_argument("site", type=Path, help="the site's folder")
    parser.add_argument("baseline", help="the baseline JAX version")
    parser.add_argument("builds", nargs="+", help="VERSION=HTML_FOLDER, one per build")
    args = parser.parse_args(argv)
    builds = dict(b.split("=", 1) for b in args.builds)
    if args.baseline not in builds:
        parser.error(f"no build of the baseline JAX {args.baseline}")
    assemble(args.site, {v: Path(p) for v, p in builds.items()}, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
