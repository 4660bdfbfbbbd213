"""Even work for `sphinx-build -j N`: Sphinx reads the pages in contiguous chunks, one per
worker, so the order of the page list decides which pages execute side by side.

The heaviest pages are dealt out in turn, snake-wise, so every chunk gets a similar share.
A page weighs what its last execution took (myst-nb records it); a page never executed
weighs its number of code cells, a benchmark or a fresh process counting five cells.
"""

import re
from pathlib import Path

from myst_nb.sphinx_ import NbMetadataCollector


def weight(env, docname: str) -> float:
    data = NbMetadataCollector.get_exec_data(env, docname)
    if data and data.get("runtime"):
        return float(data["runtime"])
    source = Path(env.doc2path(docname))
    text = source.read_text() if source.exists() else ""
    return text.count("```{code-cell}") + 5 * len(re.findall(r"\bbench\(|run_example\(", text))


def deal(docnames: list[str], weights: dict[str, float], workers: int) -> list[str]:
    """The pages ordered so that `workers` contiguous, equal-sized chunks carry even weight."""
    piles: list[list[str]] = [[] for _ in range(workers)]
    for i, docname in enumerate(sorted(docnames, key=lambda d: -weights[d])):
        turn, place = divmod(i, workers)
        piles[place if turn % 2 == 0 else workers - 1 - place].append(docname)
    return [docname for pile in piles for docname in pile]


def balance(app, env, docnames: list[str]) -> None:
    """`env-before-read-docs`: reorder the pages to read, in place, for parallel reading."""
    if app.parallel > 1 and len(docnames) > 1:
        weights = {d: weight(env, d) for d in docnames}
        docnames[:] = deal(docnames, weights, app.parallel)
