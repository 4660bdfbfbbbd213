"""Output drift: what each cell of the book printed under another JAX, against the baseline's.

A build publishes every executed page as a notebook (`_sources/<page>.ipynb` of the HTML).
Two builds of the same pages, one under the baseline JAX and one under another, are compared
cell by cell, after masking what is measured rather than decided by JAX (MASKS): versions,
memory addresses, durations, the words a timing comparison chose, the sizes of files
written, decimal numbers (the last digits of a floating-point result depend on the kernels
XLA picked) and numbers glued into the prose (the prose shows whatever number was computed);
whitespace is not compared. Integers (shapes, counts, bytes), names and the
structure of a printout are compared as printed. A cell tagged `measured` (its outputs are
sentences a timing chose) is compared by the kinds of its outputs alone. Verdicts are compared
as claims, timing comparisons are measurements, errors are failing cells: none of them is an
output change here.
"""

import difflib
import json
import re
from pathlib import Path

from chapter2.claims.registry import VERDICT_MIME
from chapter2.timing import COMPARISON_MIME

GLUE_PREFIX = "application/papermill.record/"
MEASURED_TAG = "measured"  # a cell whose outputs a timing chose: compared by their kinds alone
DIFF_LINES = 12  # the longest diff shown for one output; the rest is counted

MASKS: tuple[tuple[str, str, str], ...] = (
    ("address", r"0x[0-9a-fA-F]{6,}", "<address>"),
    ("version", r"(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)*(?![\w.])", "<version>"),
    ("comparison", r"\bran [\d.]+ × faster than\b|\btook [\d.]+ × as long as\b", "<compared with>"),
    (
        "comparison",
        r" and (.+?) could not be told apart: the middle halves of their runs overlap",
        r" <compared with> \1",
    ),
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


def same(before: str, after: str) -> bool:
    """Whether two masked outputs are the same but for whitespace (column padding)."""
    return re.sub(r"\s+", "", before) == re.sub(r"\s+", "", after)


def _joined(value) -> str:
    if isinstance(value, list):
        return "".join(value)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def comparable_outputs(cell: dict) -> dict[str, str]:
    """The outputs of a code cell that can drift unseen, by kind: each stream whole (however
    its text was split), displayed and glued text; a figure by its kind alone, since it and
    its alt text are drawn from measured data. Verdicts, timing comparisons and errors are
    left out (see the module's docstring)."""
    found: dict[str, list[str]] = {}
    measured = MEASURED_TAG in cell.get("metadata", {}).get("tags", [])
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            text = "<measured>" if measured else _joined(output["text"])
            found.setdefault(output["name"], []).append(text)
            continue
        data = output.get("data", {})
        if output["output_type"] == "error" or any(
            k.endswith((VERDICT_MIME, COMPARISON_MIME)) for k in data
        ):
            continue
        if any("image/" in k for k in data):
            data = {k: None for k in data if "image/" in k}
        for glued_kind, value in data.items():
            kind = glued_kind.removeprefix(GLUE_PREFIX)
            text = f"<{kind}>" if value is None or measured else _joined(value)
            if glued_kind != kind and re.fullmatch(r"'?-?[\d.,]+'?", text):
                text = "<glued number>"
            found.setdefault(kind, []).append(text + "\n")
    return {kind: "".join(texts) for kind, texts in found.items()}


def code_cells(path: Path) -> list[dict]:
    """The code cells of a notebook (its setup cell left out), each with the claims that the
    cells after it verify before the next heading: the claims its section checks about it."""
    cells = [
        c
        for c in json.loads(path.read_text())["cells"]
        if "setup" not in c.get("metadata", {}).get("tags", [])
    ]
    checked: list[str] = []
    for cell in reversed(cells):
        source = _joined(cell["source"])
        if cell["cell_type"] == "markdown" and re.search(r"^#+ ", source, re.M):
            checked = []
        elif cell["cell_type"] == "code":
            cell["checked_after"] = list(checked)
            if "verify" in source:
                checked = re.findall(r"""["']([a-z0-9]+(?:-[a-z0-9]+)+)["']""", source) + checked
    return [c for c in cells if c["cell_type"] == "code"]


def _diff(before: str, after: str) -> str:
    """The changed lines, `-` before and `+` after, column padding collapsed."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    shown = [re.sub(r"\s+", " ", line) for line in lines[2:] if not line.startswith("@@")]
    if len(shown) > DIFF_LINES:
        shown = [*shown[:DIFF_LINES], f"... {len(shown) - DIFF_LINES} more lines"]
    return "\n".join(shown)


def changed_outputs(baseline: Path, other: Path) -> list[dict]:
    """Every output of `other` (a notebook) that differs from the same cell's in `baseline`
    once measured parts are masked: page, cell index among code cells, source, kind, diff,
    and the claims its section verifies after it."""
    changes = []
    for index, (before, after) in enumerate(
        zip(code_cells(baseline), code_cells(other), strict=False)
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
                    {
                        "page": other.stem,
                        "cell_index": index,
                        "cell": source,
                        "output": kind,
                        "before": was,
                        "after": now,
                        "diff": _diff(was, now),
                        "checked_after": after["checked_after"],
                    }
                )
    return changes


def compare_builds(baseline: Path, other: Path) -> list[dict]:
    """The changed outputs of every page both folders of notebooks hold, page by page."""
    changes = []
    for notebook in sorted(other.glob("*.ipynb")):
        if (baseline / notebook.name).exists():
            changes += changed_outputs(baseline / notebook.name, notebook)
    return changes
