"""The build benchmark's and the Lighthouse run's reports, and MAINTAINING.md showing the
recorded ones (not typed numbers)."""

import json
import os
import sys

import build_benchmark  # tools/ is on pytest's pythonpath (pyproject.toml)
import lighthouse
import pytest
from book import book_commit
from conftest import READING_ORDER, ROOT

from chapter2.environment import cpu_model
from chapter2.records import BuildRecord, PageRecord
from chapter2.releases import baseline_jax

RECORDED = json.loads((ROOT / "data" / "benchmarks" / "build.json").read_text())
MAINTAINING = (ROOT / "MAINTAINING.md").read_text()


def test_maintaining_shows_the_recorded_benchmark():
    table = build_benchmark.markdown(RECORDED)
    assert table in MAINTAINING, "paste the table `nox -s benchmark` printed (after nox -s record)"


def test_maintaining_shows_the_versioned_sites_recorded_time():
    site = json.loads((ROOT / "data" / "benchmarks" / "site.json").read_text())
    assert build_benchmark.site_markdown(site, RECORDED) in MAINTAINING
    assert site["versions"][0] == baseline_jax()


def test_the_site_is_set_beside_a_clean_build_of_its_own_day_only():
    site = {"versions": [baseline_jax(), "0.10.2"], "seconds": 300.0, "cores": 2}
    clean = RECORDED["runs"][build_benchmark.CLEAN]["seconds"]
    same_day = build_benchmark.site_markdown(site | {"recorded": RECORDED["recorded"]}, RECORDED)
    assert f"took 300.0 s, {300.0 / clean:.1f} times the clean build above (" in same_day
    other_day = build_benchmark.site_markdown(site | {"recorded": "2000-01-01"}, RECORDED)
    assert "took 300.0 s (2 cores, recorded 2000-01-01)." in other_day


def test_a_benchmark_outside_a_git_checkout_names_no_commit():
    said = build_benchmark.markdown(RECORDED | {"commit": ""})
    assert f"{RECORDED['cpu']}, recorded {RECORDED['recorded']})." in said


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


def made_record(seconds: dict[str, float]) -> BuildRecord:
    """A clean build's record whose pages ran for `seconds`, page by page."""
    pages = {page: PageRecord(seconds=s) for page, s in seconds.items()}
    return BuildRecord("", "", "", "", pages, [])


def test_a_missed_target_fails_the_benchmark_and_keeps_the_times(tmp_path, monkeypatch, capsys):
    runs = RECORDED["runs"].items()
    builds = {name: (r["seconds"], r["executed"]) for name, r in runs}
    builds[build_benchmark.CODE] = (5.0, ["fusion", "profiling"])  # one page too many
    record = made_record({"fusion": 5.0})
    monkeypatch.setattr(build_benchmark, "measure", lambda: (builds, record, 0.0))
    out = tmp_path / "build.json"
    assert build_benchmark.main(["--out", str(out)]) == 1
    report = json.loads(out.read_text())
    assert not report["runs"][build_benchmark.CODE]["met"]
    assert report["runs"][build_benchmark.CLEAN]["seconds"] == builds[build_benchmark.CLEAN][0]
    assert report["clean build, seconds per page"] == {"fusion": 5.0}
    assert "| (e) code edit in fusion | 5.0 | fusion, profiling | fusion only: **missed** |" in (
        capsys.readouterr().out
    )


LIGHTHOUSE = json.loads((ROOT / "data" / "benchmarks" / "lighthouse.json").read_text())


def test_maintaining_shows_the_recorded_lighthouse_run():
    table = lighthouse.markdown(LIGHTHOUSE)
    assert table in MAINTAINING, "paste the table `nox -s lighthouse` printed (after nox -s record)"


def test_the_recorded_lighthouse_run_measured_every_reader_page_three_times_and_met_each_target():
    assert list(LIGHTHOUSE["pages"]) == lighthouse.reader_pages(ROOT / "docs")
    assert sorted(LIGHTHOUSE["pages"]) == sorted(READING_ORDER)
    for page, result in LIGHTHOUSE["pages"].items():
        assert len(result["runs"]) == LIGHTHOUSE["runs"] >= 3, page
        assert result["median"] == lighthouse.median(result["runs"]), page
        assert result["missed"] == lighthouse.missed(result) == [], page


def report(performance: float, lcp: float, tbt: float, seo: float = 1.0) -> dict:
    """A Lighthouse JSON report holding what tools/lighthouse.py reads of one."""
    sizes = [
        {"resourceType": "script", "transferSize": 70_000},
        {"resourceType": "font", "transferSize": 0},
    ]
    return {
        "lighthouseVersion": "12.2.3",
        "configSettings": {"formFactor": "mobile", "throttlingMethod": "simulate"},
        "environment": {"benchmarkIndex": 1500},
        "categories": {c: {"score": 1.0} for c in lighthouse.CATEGORIES}
        | {"performance": {"score": performance}, "seo": {"score": seo}},
        "audits": {
            "largest-contentful-paint": {"numericValue": lcp},
            "total-blocking-time": {"numericValue": tbt},
            "total-byte-weight": {"numericValue": 300_000},
            "resource-summary": {"details": {"items": sizes}},
        },
    }


# Each run of the stand-in Lighthouse: the page it is asked for and its run gives the report.
RUNS = {
    "fast": [report(0.99, 1200, 10), report(0.80, 3100, 40), report(0.98, 1300, 20)],
    "heavy": [report(0.95, 1900, 250), report(0.95, 2000, 300), report(0.95, 2100, 350)],
    "unreadable": [report(1.0, 900, 0), report(1.0, 900, 0, seo=0.9), report(1.0, 900, 0)],
}


def test_a_lighthouse_run_keeps_every_run_and_judges_each_pages_medians(tmp_path, monkeypatch):
    """A slow run among fast ones moves no verdict; a page whose median misses a target, or a
    run whose category scores less than 1.0, is named, and the command fails."""
    (tmp_path / "runs.json").write_text(json.dumps(RUNS))
    stand_in = tmp_path / "lighthouse"  # asked as Lighthouse is: its URL first
    stand_in.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        f"folder = pathlib.Path({str(tmp_path)!r})\n"
        "page = sys.argv[1].rsplit('/', 1)[1].removesuffix('.html')\n"
        "done = folder / f'{page}.count'\n"
        "n = int(done.read_text()) if done.exists() else 0\n"
        "done.write_text(str(n + 1))\n"
        "print(json.dumps(json.loads((folder / 'runs.json').read_text())[page][n]))\n"
    )
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\necho 'Chromium 156.0.1.2 built on Debian'\n")
    for program in (stand_in, chromium):
        program.chmod(0o755)
    monkeypatch.setenv("CHROME_PATH", str(chromium))
    out = tmp_path / "lighthouse.json"
    argv = [str(tmp_path), str(out), "--lighthouse", str(stand_in), *RUNS]
    assert lighthouse.main(argv) == 1
    record = json.loads(out.read_text())
    assert record["browser"] == "Chromium 156.0.1.2 built on Debian"
    assert [len(r["runs"]) for r in record["pages"].values()] == [3, 3, 3]
    fast, heavy, unreadable = (record["pages"][page] for page in RUNS)
    assert (fast["median"]["performance"], fast["median"]["lcp_ms"]) == (0.98, 1300)
    assert fast["missed"] == []
    assert heavy["missed"] == ["tbt_ms 300"]
    assert unreadable["missed"] == ["seo 0.9"]
    table = lighthouse.markdown(record)
    assert "| fast | 0.98 | 1.3 s | 20 ms | 293 KiB | 1.00 | 1.00 | 1.00 |" in table
    assert "Missed: heavy: tbt_ms 300; unreadable: seo 0.9." in table


@pytest.mark.parametrize("over", [-1, 1])
def test_the_clean_builds_overhead_is_held_to_its_target(tmp_path, monkeypatch, capsys, over):
    """The wall time a clean build spends outside its pages' execution and its roofs' probe
    (the pages' work): within the target the benchmark passes, past it the benchmark fails
    and says missed."""
    builds = {name: (r["seconds"], r["executed"]) for name, r in RECORDED["runs"].items()}
    # every other target met, whatever the recorded run met
    builds[build_benchmark.FLOOR] = (
        builds[build_benchmark.CLEAN][0],
        builds[build_benchmark.FLOOR][1],
    )
    builds |= {build_benchmark.NOTHING: (1.0, []), build_benchmark.PROSE: (1.0, [])}
    builds[build_benchmark.CODE] = (1.0, ["fusion"])
    probe = 3.0
    executing = builds[build_benchmark.CLEAN][0] - build_benchmark.OVERHEAD - over - probe
    record = made_record({"fusion": executing / 2, "profiling": executing / 2})
    monkeypatch.setattr(build_benchmark, "measure", lambda: (builds, record, probe))
    out = tmp_path / "build.json"
    assert build_benchmark.main(["--out", str(out)]) == (1 if over > 0 else 0)
    written = json.loads(out.read_text())
    said = written["clean build, seconds outside the pages' execution"]
    assert said["seconds"] == pytest.approx(build_benchmark.OVERHEAD + over)
    printed = capsys.readouterr().out
    assert ("**missed**" in printed) == (over > 0)
    # the machine and the book it measured
    assert (written["cpu"], written["commit"]) == (cpu_model(), book_commit(ROOT))
    assert f"{os.cpu_count()} cores, {cpu_model()}, at {book_commit(ROOT)}, recorded" in printed
