"""Output drift: what each cell printed under another JAX, against the baseline build's,
with what is measured rather than decided by JAX masked (MASKS); a cell tagged `measured` is
compared by its outputs' kinds alone."""

import difflib
import json
import re
from pathlib import Path

from markdown_it import MarkdownIt
from myst_nb.ext.glue import GLUE_PREFIX

from book.notebooks import SETUP_TAG
from chapter2.claims.registry import VERDICT_MIME
from chapter2.records import ChangedOutput, VerdictRecord
from chapter2.timing import COMPARISON_MIME

MEASURED_TAG = "measured"  # a cell whose outputs a timing chose: compared by their kinds alone
DIFF_LINES = 12  # the longest diff shown for one output; the rest is counted

MASKS: tuple[tuple[str, str, str], ...] = (
    ("address", r"0x[0-9a-fA-F]{6,}", "<address>"),
    ("version", r"(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)*(?![\w.])", "<version>"),
    ("runs", r"\b\d+ runs\b", "<n> runs"),  # how many runs a timing took, whoever says it
    (
        "duration",
        r"(?<![\w.])(?:\d[\d,.]* to )?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
        r"\s?(?:ns|µs|us|ms|s|seconds)\b",
        "<time>",
    ),
    ("file size", r"(\S\.\w+\s+)\d[\d,]* bytes\b", r"\1<file size>"),
    (
        "decimal",
        r"(?<![\w.])-?\d+\.\d+(?:e[+-]?\d+)?(?!\w|\.\d)|(?<![\w.])\d+e[+-]?\d+\b",
        "<decimal>",
    ),
)


def mask(text: str) -> str:
    """`text` with what is measured replaced by a placeholder (MASKS, in order)."""
    for _, pattern, replacement in MASKS:
        text = re.sub(pattern, replacement, text)
    return text


def _joined(value) -> str:
    if isinstance(value, list):
        return "".join(value)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def output_kind(key: str) -> str:
    """An output's MIME type, a glued output's as its own (myst-nb prefixes it)."""
    return key.removeprefix(GLUE_PREFIX)


def comparable_outputs(cell: dict) -> dict[str, str]:
    """A code cell's outputs that can drift unseen, by kind (a figure by its kind alone)."""
    found: dict[str, list[str]] = {}
    measured = MEASURED_TAG in cell.get("metadata", {}).get("tags", [])
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            text = "<measured>" if measured else _joined(output["text"])
            found.setdefault(output["name"], []).append(text)
            continue
        data = output.get("data", {})
        kinds = {output_kind(k) for k in data}
        if output["output_type"] == "error" or {VERDICT_MIME, COMPARISON_MIME} & kinds:
            continue
        if any("image/" in k for k in data):
            data = {k: None for k in data if "image/" in k}
        for glued_kind, value in data.items():
            kind = output_kind(glued_kind)
            text = f"<{kind}>" if value is None or measured else _joined(value)
            if glued_kind != kind and re.fullmatch(r"'?-?[\d.,]+'?", text):
                text = "<glued number>"
            found.setdefault(kind, []).append(text + "\n")
    return {kind: "".join(texts) for kind, texts in found.items()}


def same(before: str, after: str) -> bool:
    """Whether two masked outputs are the same but for whitespace (column padding)."""
    return re.sub(r"\s+", "", before) == re.sub(r"\s+", "", after)


def shown_verdicts(cell: dict) -> list[str]:
    """The claims whose verdicts a cell's outputs show (a verdict shows itself, never glued)."""
    return [
        VerdictRecord.from_dict(output["data"][VERDICT_MIME]).id
        for output in cell.get("outputs", [])
        if VERDICT_MIME in output.get("data", {})
    ]


COMMONMARK = MarkdownIt("commonmark")


def _opens_a_section(markdown: str) -> bool:
    """Whether Markdown holds a heading (a `#` line in a fenced block is not one)."""
    return any(token.type == "heading_open" for token in COMMONMARK.parse(markdown))


def cells_with_their_claims(notebook: dict) -> list[dict]:
    """A notebook's code cells, each with the claims whose verdicts its section shows after
    it."""
    cells = [
        dict(c) for c in notebook["cells"] if SETUP_TAG not in c.get("metadata", {}).get("tags", [])
    ]
    checked: list[str] = []
    for cell in reversed(cells):
        source = _joined(cell["source"])
        if cell["cell_type"] == "markdown" and _opens_a_section(source):
            checked = []
        elif cell["cell_type"] == "code":
            cell["checked_after"] = list(checked)
            checked = shown_verdicts(cell) + checked
    return [c for c in cells if c["cell_type"] == "code"]


def _diff(before: str, after: str) -> str:
    """The changed lines, `-` before and `+` after, column padding collapsed."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    shown = [re.sub(r"\s+", " ", line) for line in lines[2:] if not line.startswith("@@")]
    if len(shown) > DIFF_LINES:
        shown = [*shown[:DIFF_LINES], f"... {len(shown) - DIFF_LINES} more lines"]
    return "\n".join(shown)


def changed_outputs(baseline: dict, other: dict, page: str) -> list[ChangedOutput]:
    """Every output of `other` that differs, masked, from the same cell's in `baseline`."""
    changes = []
    for index, (before, after) in enumerate(
        zip(cells_with_their_claims(baseline), cells_with_their_claims(other), strict=False)
    ):
        source = _joined(after["source"]).strip()
        if _joined(before["source"]).strip() != source:
            continue  # built from different pages: nothing to compare
        old = {k: mask(t) for k, t in comparable_outputs(before).items()}
        new = {k: mask(t) for k, t in comparable_outputs(after).items()}
        for kind in dict.fromkeys([*old, *new]):
            was, now = old.get(kind, ""), new.get(kind, "")
            if not same(was, now):
                changes.append(
                    ChangedOutput(
                        page=page,
                        cell_index=index,
                        cell=source,
                        output=kind,
                        diff=_diff(was, now),
                        checked_after=after["checked_after"],
                    )
                )
    return changes


def compare_builds(baseline: Path, notebooks: dict[str, dict]) -> list[ChangedOutput]:
    """The changed outputs of each page of `notebooks` against the baseline's folder."""
    changes = []
    for page, notebook in sorted(notebooks.items()):
        if (baseline / f"{page}.ipynb").exists():
            before = json.loads((baseline / f"{page}.ipynb").read_text())
            changes += changed_outputs(before, notebook, page)
    return changes
