"""The chapter's paragraphs on what the recorded TPU run did ("On the TPU."): every number in
them is glued from the record, none typed (the vendor's figures are glued from their file too)."""

import pytest
from conftest import DOCS, myst_tokens

# The sections that say what the TPU did, each in one self-contained paragraph.
TPU_PAGES = [
    "profiling",
    "memory-layout",
    "fusion",
    "async-dispatch",
    "pairwise-distances",
    "cpu-case-study",
    "numpy-to-jax",
]
CONTAINER = "{container} on-the-tpu"


def tpu_paragraphs(text: str) -> list[str]:
    """The Markdown of each "On the TPU" paragraph of a page."""
    return [
        token.content
        for token in myst_tokens(text)
        if token.type in ("fence", "colon_fence") and token.info.strip() == CONTAINER
    ]


def typed_numbers(markdown: str) -> list[str]:
    """The words of running text that are numbers: roles (a glued value, a link), inline code,
    math and words that also hold letters (bfloat16, v5e) are not."""
    found = []
    for token in myst_tokens(markdown):
        for child in token.children or []:
            if child.type == "text":
                words = [w.strip(".,;:()") for w in child.content.replace("×", " ").split()]
                found += [
                    w
                    for w in words
                    if any(c.isdigit() for c in w) and not any(c.isalpha() for c in w)
                ]
    return found


@pytest.mark.parametrize("page", TPU_PAGES)
def test_each_tpu_paragraph_glues_every_number(page):
    paragraphs = tpu_paragraphs((DOCS / f"{page}.md").read_text())
    assert len(paragraphs) == 1, page
    [paragraph] = paragraphs
    assert paragraph.lstrip().startswith("**On the TPU.**"), paragraph[:40]
    assert "{glue" in paragraph
    assert typed_numbers(paragraph) == [], page


def test_a_typed_number_is_found_and_a_glued_one_is_not():
    assert typed_numbers("It reached 173 TFLOP/s at 8192 × 8192.") == ["173", "8192", "8192"]
    assert typed_numbers("It reached {glue:text}`rate` in bfloat16 on a v5e.") == []
    assert typed_numbers("A `1024` in code, $2n^3$ in math.") == []
    assert typed_numbers("Up 1.9 times, or 12%.") == ["1.9", "12%"]
    assert typed_numbers("At $d = 64$ and {glue:text}`side` × {glue:text}`side`.") == []
