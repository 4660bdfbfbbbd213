"""Even work for `sphinx-build -j N`: Sphinx cuts the list of pages to read into contiguous
chunks (`sphinx.util.parallel.make_chunks`; 19 pages on 2 workers make chunks of 9, 9 and 1)
and hands them to its workers as they free up, so the order of the list decides which pages
execute side by side.

The chunks the workers start with get even shares, the heaviest page first onto the lightest
chunk with room; the chunks that run last get the lightest pages. A page weighs what its last
execution took (myst-nb records it); a page never executed weighs its number of code cells,
a timing or a fresh process counting five. `-D book_balance=0` keeps Sphinx's own order
(the build benchmark compares the two).
"""

import re
from pathlib import Path

from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.util.parallel import make_chunks


def weight(env, docname: str) -> float:
    data = NbMetadataCollector.get_exec_data(env, docname)
    if data and data.get("runtime"):
        return float(data["runtime"])
    source = Path(env.doc2path(docname))
    text = source.read_text() if source.exists() else ""
    timed = re.findall(r"\bbench(?:_together)?\(|run_probe\(", text)
    return text.count("```{code-cell}") + 5 * len(timed)


def deal(docnames: list[str], weights: dict[str, float], workers: int) -> list[str]:
    """The pages ordered so that the first `workers` chunks Sphinx makes carry even weight,
    and the chunks after them the lightest pages."""
    sizes = [len(chunk) for chunk in make_chunks(docnames, workers)]
    ranked = sorted(docnames, key=lambda d: -weights[d])
    cut = len(ranked) - sum(sizes[workers:])
    piles: list[list[str]] = [[] for _ in sizes[:workers]]
    for docname in ranked[:cut]:
        room = [i for i, pile in enumerate(piles) if len(pile) < sizes[i]]
        lightest = min(room, key=lambda i: sum(weights[d] for d in piles[i]))
        piles[lightest].append(docname)
    return [docname for pile in piles for docname in pile] + ranked[cut:]


def balance(app, env, docnames: list[str]) -> None:
    """`env-before-read-docs`: reorder the pages to read, in place, for parallel reading."""
    if app.config.book_balance and app.parallel > 1 and len(docnames) > 1:
        weights = {d: weight(env, d) for d in docnames}
        docnames[:] = deal(docnames, weights, app.parallel)
