"""Other backends and older releases on the page: what a recorded run did.

A `{backend-note} <claim-id>` with `:run: <name>` is a sentence about what the run recorded
in data/backends/<name>/ did, shown where that run checked the claim, its
`{{key/subkey|format}}` values filled from the run (`{{device}}`,
`{{<claim-id>/<observed name>|len}}`, a path in its numbers file). A
`{release-note} <claim-id> <release>` is a sentence about what the claims matrix recorded for
the claim under another JAX release (data/matrix/jax-<release>.json), filled the same way.
"""

from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from book import SERIAL
from book.dependencies import claim_modules
from book.markdown import with_recorded
from book.matrix import claims_matrix
from chapter2.records import ClaimsMatrix, ClaimsReport
from chapter2.releases import baseline_jax
from chapter2.runs import recorded_run


class BackendNote(SphinxDirective):
    """`{backend-note} claim-id` with `:run: <name>`: the note's sentence about what the run
    recorded in `data/backends/<name>/` did, shown where that run recorded the claim."""

    required_arguments = 1
    has_content = True
    option_spec: ClassVar[dict] = {"run": directives.unchanged_required}

    def run(self):
        reporter = self.state.document.reporter
        text = " ".join(self.content).strip()
        if not text or "run" not in self.options:
            return [
                reporter.warning("a backend note needs :run: and its sentence", line=self.lineno)
            ]
        try:
            run = recorded_run(self.config.book_backends, self.options["run"])
        except FileNotFoundError as err:
            return [reporter.warning(str(err), line=self.lineno)]
        for path in run.folder.glob("*.json"):
            self.env.note_dependency(str(path))
        if self.arguments[0] not in claim_modules(Path(self.config.book_engine_src)):
            message = f"a backend note names {self.arguments[0]!r}, which no claims module states"
            return [reporter.warning(message, line=self.lineno)]
        if self.arguments[0] not in run.verdicts:  # a claim that run did not record
            return []
        try:
            sentence = with_recorded(text, run.value)
        except KeyError as err:
            return [reporter.warning(err.args[0], line=self.lineno)]
        matrix = claims_matrix(self.config)
        cause = release_or_backend(matrix, self.arguments[0], run.jax, baseline_jax())
        box = nodes.container(classes=["backend-note"])
        box += self.parse_text_to_nodes(f"{sentence} ({cause}.)" if cause else sentence)
        return [box]


def release_or_backend(matrix: ClaimsMatrix, claim_id: str, release: str, baseline: str):
    """Why a run's other release, as well as its backend, may explain what it did: how the
    claims matrix found the claim on the CPU under the run's release and under the book's.
    None where the two agree (the overview says the GPU then made the difference)."""
    statuses = []
    for version in (release, baseline):
        recorded = matrix.report_of(version)
        by_id = recorded.by_id if recorded else {}
        statuses.append(by_id[claim_id].status if claim_id in by_id else None)
    if None in statuses:
        return f"JAX {release} is not measured on the CPU for this"
    if statuses[0] == statuses[1]:
        return None
    return (
        f"on the CPU too, JAX {release} ({statuses[0]}) differs here from JAX {baseline} "
        f"({statuses[1]}): the release and the backend both differ"
    )


def release_note_problem(
    recorded: ClaimsReport | None, claim_id: str, release: str, status: str | None
) -> str | None:
    """Why a release note's words would not describe `recorded`, the record of `release`, or
    None when they do."""
    verdict = recorded.by_id.get(claim_id) if recorded else None
    if verdict is None:
        return f"the claims matrix holds no {claim_id!r} under JAX {release}"
    if status is None:
        return f"a release note on {claim_id!r} needs :status:, the status its words describe"
    if verdict.status != status:
        return (
            f"this release note on {claim_id!r} is written for a claim that was {status!r} "
            f"under JAX {recorded.jax}; the claims matrix recorded {str(verdict.status)!r}: "
            "its words no longer describe the record"
        )
    return None


class ReleaseNote(SphinxDirective):
    """`{release-note} claim-id release`: the note's sentence filled from the claim's record
    under that release; `:status:` is the recorded status the sentence is written for."""

    required_arguments = 2
    has_content = True
    option_spec: ClassVar[dict] = {"status": directives.unchanged_required}

    def run(self):
        claim_id, release = self.arguments
        recorded = claims_matrix(self.config).report_of(release)
        problem = release_note_problem(recorded, claim_id, release, self.options.get("status"))
        if problem:
            return [self.state.document.reporter.warning(problem, line=self.lineno)]
        box = nodes.container(classes=["release-note"])
        try:
            sentence = with_recorded(" ".join(self.content).strip(), recorded.value)
        except KeyError as err:
            return [self.state.document.reporter.warning(err.args[0], line=self.lineno)]
        box += self.parse_text_to_nodes(sentence)
        return [box]


def setup(app):
    app.add_config_value("book_backends", "", "env", types=[str])
    app.add_directive("backend-note", BackendNote)
    app.add_directive("release-note", ReleaseNote)
    return SERIAL
