"""The built book (docs/_build/html, made by `nox -s docs`) as a reader receives it."""

import re
from pathlib import Path

import pytest

from chapter2.claims import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "docs" / "_build" / "html"
PAGES = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))


@pytest.fixture(scope="module")
def site() -> dict[str, str]:
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML.relative_to(ROOT)}: run `nox -s docs` first")
    return {p.relative_to(HTML).as_posix(): p.read_text() for p in HTML.rglob("*.html")}


def test_every_page_was_built(site):
    missing = [page for page in PAGES if f"{page}.html" not in site]
    assert not missing


def test_no_path_of_the_build_machine_is_published(site):
    leaks = {
        name: sorted(set(re.findall(r"(?:/tmp/|/root/|/home/)[^\s\"'<]*", text)))[:3]
        for name, text in site.items()
    }
    assert not {name: found for name, found in leaks.items() if found}


def test_every_claim_shows_its_evidence_on_its_page(site):
    shown = {
        claim_id
        for text in site.values()
        for claim_id in re.findall(
            r'class="claim-verdict"[^>]*><strong>Checked</strong> \[([\w-]+)\]', text
        )
    }
    assert shown == set(REGISTRY)


def test_no_claim_is_published_as_drifted(site):
    assert not any("DRIFTED on JAX" in text for text in site.values())


def test_figures_are_embedded(site):
    images = re.findall(r'<img [^>]*src="(_images/[^"]+\.png)"', site["profiling.html"])
    assert images and all((HTML / src).stat().st_size > 10_000 for src in images)
