"""What a recorded run on another backend did beside a fact of the page: `{backend-note}`;
and `{runs-on-cpu}`, on a page that runs on the CPU whatever the machine's default device.

    ```{backend-note} gram-cancellation-centring-shrinks
    Optional Markdown after the generated sentence, where {{key/subkey|.3g}} is a number the
    run recorded (its `numbers` file), formatted: never typed.
    ```

Each run recorded under `book_backends` (data/backends/) that holds something to say about
the claim adds a compact line: the device and JAX it ran, why the claim is not the CPU's
there, and what its check recorded, judged by the claim as it is now
(`chapter2.claims.backends`). It is filled once every page has been read, from this build's
verdict of the claim (the values its check names), as the version notes are.
"""

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from book.verdicts import NeedsEveryPage, home_verdicts
from chapter2.claims.backends import claim_of, recorded_runs, status_there

SAID = {
    "holds": "the claim held",
    "drifted": "the claim did not hold",
    "cannot check": "this fact of the CPU does not apply",
    "as specified": "the machine behaved as the book describes",
    "differs here": "the machine behaved otherwise",
    None: "the claim has no verdict: the run predates this form of its check",
}


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


# The line a page's setup cell holds when the page is about the CPU: `{runs-on-cpu}` says so.
PIN_CPU = 'jax.config.update("jax_default_device", jax.devices("cpu")[0])'


class RunsOnCpu(SphinxDirective):
    """`{runs-on-cpu}` with a sentence saying why the page is about the CPU: the reader learns
    that its cells run on the CPU by name, wherever the book is built."""

    has_content = True

    def run(self):
        why = " ".join(self.content).strip()
        text = (
            f"{why} So its code runs on the CPU even where the default device is a GPU: the "
            f"setup cell calls `{PIN_CPU}` (delete it to see what a GPU does), and processes "
            "the page starts get `JAX_PLATFORMS=cpu`. {doc}`claims-matrix` shows what a "
            "recorded GPU run did with each claim."
        )
        box = nodes.container(classes=["runs-on-cpu"])
        box += self.parse_text_to_nodes(text.strip())
        return [box]


class backend_note(nodes.General, nodes.Element):
    """Placeholder for the recorded runs' line, filled when the page is written."""


class BackendNote(NeedsEveryPage):
    """`{backend-note} claim-id`: what each recorded backend did with the claim."""

    required_arguments = 1
    has_content = True

    def run(self):
        self.note_page()
        for path in Path(self.config.book_backends).glob("*/*.json"):
            self.env.note_dependency(str(path))
        box = nodes.container(classes=["backend-note"])
        box += backend_note(claim=self.arguments[0])
        if self.content:
            runs = recorded_runs(self.config.book_backends)
            text = "\n".join(self.content)
            for run in runs:  # the body speaks of the runs that recorded numbers
                text = with_numbers(text, run) if "numbers" in run else text
            box += self.parse_text_to_nodes(text)
        return [box]


def with_numbers(text: str, run: dict) -> str:
    """`text` with each {{key/subkey|format}} replaced by the number `run` recorded there."""
    numbers = json.loads((Path(run["path"]) / run["numbers"]).read_text())

    def number(found: re.Match) -> str:
        value = numbers
        for key in found[1].split("/"):
            value = value[key]
        return format(value, found[2] or "")

    return re.sub(r"\{\{([^|}]+)(?:\|([^}]+))?\}\}", number, text)


def note_text(run: dict, data: dict) -> str:
    """One recorded run's sentences about a claim: what it did there, why, what it saw."""
    there = status_there(claim_of(data), run, list(data["expected"] or {}) or None)
    said = SAID[there["status"]]
    if there["status"] == "holds" and there["why"]:
        said = "the GPU did what the book expects of it, not what this claim says of the CPU"
    why = f" {there['why'][0].upper()}{there['why'][1:]}." if there["why"] else ""
    which = "An earlier check" if there["status"] is None else "Its check"
    seen = f" {which} recorded: {there['recorded']}." if there["recorded"] else ""
    return (
        f"On the {run['device']} run (JAX {run['jax']}, recorded {run['recorded']}), "
        f"{said}.{why}{seen}"
    )


def fill(app, doctree, docname) -> None:
    """`doctree-resolved`: each backend note, from the recorded runs and this build's verdict."""
    placeholders = list(doctree.findall(backend_note))
    if not placeholders:
        return
    home, runs = home_verdicts(app.env), recorded_runs(app.config.book_backends)
    for node in placeholders:
        data = home.get(node["claim"])
        if data is None:
            node.replace_self([])
            continue
        lines = [nodes.paragraph(text=note_text(run, data)) for run in runs]
        node.replace_self(lines)
