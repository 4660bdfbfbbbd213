"""Other backends on the page: what a recorded GPU run did, and which pages run on the CPU.

A `{backend-note} <claim-id>` is a sentence about each run recorded on another backend that
checked the claim (data/backends/), its `{{key/subkey|format}}` values filled from the run
(`{{device}}`, `{{<claim-id>/<observed name>|len}}`, a path in its numbers file).
"""

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from chapter2.claims.backends import recorded_runs

# The line of a page's setup cell that runs it on the CPU whatever the default device.
PIN_CPU = 'jax.config.update("jax_default_device", jax.devices("cpu")[0])'
MATRIX_PAGE = "claims-matrix"
ON_THE_CPU = "This page's code and checks run on the CPU, whatever the machine's default device."


class BackendRuns(SphinxDirective):
    """`{backend-runs}`: a sentence naming every backend the claims were recorded on."""

    def run(self):
        runs = recorded_runs(self.config.book_backends)
        for path in Path(self.config.book_backends).glob("*/run.json"):
            self.env.note_dependency(str(path))
        if not runs:
            return self.parse_text_to_nodes("The claims have been run on the CPU alone.")
        named = "; ".join(
            f"the {r['device']} ({r['platform'].upper()}) with JAX {r['jax']}, recorded "
            f"{r['recorded']}"
            for r in runs
        )
        return self.parse_text_to_nodes(
            "Every build runs the book's pages on the machine that builds it; the pages about "
            "the CPU choose its CPU explicitly. The book's claims were also run "
            f"on {named}: {{doc}}`claims-matrix` shows the result, and a note beside a claim "
            "says where that backend did otherwise."
        )


def recorded_value(run: dict, key: str, spec: str = ""):
    """The value `run` recorded under `key`, formatted by `spec` ("len", "join" or a format)."""
    numbers = (
        json.loads((Path(run["path"]) / run["numbers"]).read_text()) if "numbers" in run else {}
    )
    observed = {claim_id: c.get("observed") or {} for claim_id, c in run["by_id"].items()}
    value = {**numbers, **observed, **{k: run[k] for k in ("device", "jax", "recorded")}}
    for part in key.split("/"):
        value = value[part]
    if spec == "len":
        return len(value)
    return ", ".join(map(str, value)) if spec == "join" else format(value, spec)


def with_recorded(text: str, run: dict) -> str:
    """`text` with each {{key|format}} replaced by what `run` recorded there."""
    return re.sub(
        r"\{\{([^|}]+)(?:\|([^}]+))?\}\}", lambda m: str(recorded_value(run, *m.groups(""))), text
    )


class BackendNote(SphinxDirective):
    """`{backend-note} claim-id`: the note's sentence for each run that recorded the claim."""

    required_arguments = 1
    has_content = True

    def run(self):
        for path in Path(self.config.book_backends).glob("*/*.json"):
            self.env.note_dependency(str(path))
        text = " ".join(self.content).strip()
        if not text:
            return [self.state.document.reporter.warning("a backend note needs its sentence")]
        runs = [
            r for r in recorded_runs(self.config.book_backends) if self.arguments[0] in r["by_id"]
        ]
        if not runs:
            return []
        box = nodes.container(classes=["backend-note"])
        for run in runs:
            sentence = with_recorded(text, run)
            if MATRIX_PAGE in self.env.found_docs:  # the page that lists the recorded runs
                sentence = f"{sentence.rstrip('.')} (a {{doc}}`recorded run <{MATRIX_PAGE}>`)."
            box += self.parse_text_to_nodes(sentence)
        return [box]


def mark_runs_on_cpu(app, doctree) -> None:
    """`doctree-read`: a page whose code pins the CPU says so in one line under its title."""
    pinned = PIN_CPU in Path(app.env.doc2path(app.env.docname)).read_text()
    section = doctree.next_node(nodes.section)
    if pinned and section is not None:
        line = nodes.paragraph(text=ON_THE_CPU, classes=["runs-on-cpu"])
        section.insert(section.first_child_matching_class(nodes.title) + 1, line)
