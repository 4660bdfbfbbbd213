"""The build benchmark's report, and MAINTAINING.md showing the recorded one (not typed
numbers)."""

import json

import build_benchmark  # tools/ is on pytest's pythonpath (pyproject.toml)
import pytest
from conftest import ROOT

from chapter2.releases import baseline_jax

RECORDED = json.loads((ROOT / "data" / "benchmarks" / "build.json").read_text())
MAINTAINING = (ROOT / "MAINTAINING.md").read_text()


def test_maintaining_shows_the_recorded_benchmark():
    table = build_benchmark.markdown(RECORDED)
    assert table in MAINTAINING, "paste the table `nox -s benchmark` printed (after nox -s record)"


def test_maintaining_shows_the_versioned_sites_recorded_time_beside_a_clean_build():
    site = json.loads((ROOT / "data" / "benchmarks" / "site.json").read_text())
    assert build_benchmark.site_markdown(site, RECORDED) in MAINTAINING
    assert site["versions"][0] == baseline_jax()


def test_a_missed_target_reads_missed():
    report = json.loads(json.dumps(RECORDED))
    report["runs"][build_benchmark.NOTHING] |= {"seconds": 9.9, "met": False}
    assert "| (c) nothing changed | 9.9 | none | no page, at most 3 s: **missed** |" in (
        build_benchmark.markdown(report)
    )


def test_an_edit_that_no_longer_applies_is_an_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Another title\n")
    _, _, change = build_benchmark.EDITS[0]
    with pytest.raises(ValueError, match=r"no longer applies to page\.md"):
        build_benchmark.edited(page, change)
    assert page.read_text() == "# Another title\n"


def test_a_missed_target_fails_the_benchmark_and_keeps_the_times(tmp_path, monkeypatch, capsys):
    runs = RECORDED["runs"].items()
    builds = {name: (r["seconds"], r["executed"]) for name, r in runs}
    builds[build_benchmark.CODE] = (5.0, ["fusion", "profiling"])  # one page too many
    record = {"pages": {"fusion": {"seconds": 5.0, "comparisons": []}}}
    monkeypatch.setattr(build_benchmark, "measure", lambda: (builds, record))
    out = tmp_path / "build.json"
    assert build_benchmark.main(["--out", str(out)]) == 1
    report = json.loads(out.read_text())
    assert not report["runs"][build_benchmark.CODE]["met"]
    assert report["runs"][build_benchmark.CLEAN]["seconds"] == builds[build_benchmark.CLEAN][0]
    assert report["clean build, seconds per page"] == {"fusion": 5.0}
    assert "| (e) code edit in fusion | 5.0 | fusion, profiling | fusion only: **missed** |" in (
        capsys.readouterr().out
    )
