"""Section numbers that start with the chapter's: 2.1, 2.2, ... for the pages of chapter 2.

A numbered toctree numbers its pages 1, 2, 3 and their sections 1.1, 1.2; the book is the
second chapter of a course, so every number gets the chapter number in front. The number
of a page is its place in the toctree: nothing types it. And when a toctree changes, every
page is written again: Sphinx would keep the old previous and next links of the pages it
did not read.
"""

from sphinx import addnodes
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _prefixed(chapter: int, number):
    return (chapter, *number) if number else number


def strip_chapter(app, env) -> list[str]:
    """`env-get-updated`, before Sphinx numbers the toctree: take the chapter number off the
    numbers of the last build, so Sphinx finds them unchanged and rewrites no page for it."""
    chapter = app.config.book_chapter
    for docname, numbers in env.toc_secnumbers.items():
        env.toc_secnumbers[docname] = {
            a: n[1:] if n and n[0] == chapter else n for a, n in numbers.items()
        }
    return []


def prefix_chapter(app, env) -> list[str]:
    """`env-get-updated`, after Sphinx numbered the toctree: put the chapter in front."""
    chapter = app.config.book_chapter
    for docname, numbers in env.toc_secnumbers.items():
        env.toc_secnumbers[docname] = {a: _prefixed(chapter, n) for a, n in numbers.items()}
        for ref in env.tocs[docname].findall(addnodes.compact_paragraph):
            for node in ref.children:
                if node.get("secnumber"):
                    node["secnumber"] = list(_prefixed(chapter, node["secnumber"]))
        if env.titles[docname].get("secnumber"):
            title = env.titles[docname]
            title["secnumber"] = list(_prefixed(chapter, title["secnumber"]))
    return []


def note_read(app, env, docnames: list[str]) -> None:
    """`env-before-read-docs`: remember which pages this build reads."""
    env.book_read_now = set(docnames)


def rewrite_after_toctree_change(app, env) -> list[str]:
    """`env-get-updated`: every page, when a page holding a toctree was read again (its
    entries, and so every page's previous and next links, may have changed)."""
    if getattr(env, "book_read_now", set()) & set(env.toctree_includes):
        return sorted(env.found_docs)
    return []
