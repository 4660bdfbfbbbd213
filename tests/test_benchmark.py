"""The build benchmark's report, and README.md showing the recorded one (not typed numbers)."""

import json
import os
import re
import subprocess
import sys

import build_benchmark  # tools/ is on pytest's pythonpath (pyproject.toml)
import pytest
from conftest import ROOT

RECORDED = json.loads((ROOT / "data" / "benchmarks" / "build.json").read_text())
RECORDED_BASELINE = re.search(r'"jax==([\w.]+)"', (ROOT / "pyproject.toml").read_text())[1]


def test_readme_shows_the_recorded_benchmark():
    table = build_benchmark.markdown(RECORDED)
    assert table in (ROOT / "README.md").read_text(), "paste `nox -s benchmark`'s table"


def test_readme_shows_the_versioned_sites_recorded_time_beside_a_clean_build():
    site = json.loads((ROOT / "data" / "benchmarks" / "site.json").read_text())
    line = build_benchmark.site_markdown(site, RECORDED)
    assert line in (ROOT / "README.md").read_text(), "paste the line nox -s site's time gives"
    assert site["versions"][0] == RECORDED_BASELINE


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


def test_the_test_suite_row_counts_tests_against_its_target():
    report = json.loads(json.dumps(RECORDED))
    report["runs"][build_benchmark.TESTS] = {
        "seconds": 150.0,
        "tests": 472,
        "cores busy": 0.9,
        "target": "at most 60 s",
        "met": False,
    }
    row = (
        "| (g) pytest, without the book build | 150.0 "
        "| no page (472 tests passed; cores busy 90% of the time) |"
    )
    assert f"{row} at most 60 s: **missed** |" in build_benchmark.markdown(report)


@pytest.mark.parametrize(("body", "passed", "failed"), [("True", 1, False), ("False", 0, True)])
def test_the_test_suite_is_timed_passing_or_failing(tmp_path, body, passed, failed):
    (tmp_path / "test_one.py").write_text(f"def test_one():\n    assert {body}\n")
    command = f"{sys.executable} -m pytest {tmp_path / 'test_one.py'}"
    run = build_benchmark.run_tests(command, tmp_path)
    assert (run.passed, run.failed) == (passed, failed)
    assert ("1 failed" in run.summary) == failed
    assert run.seconds > 0
    assert 0 < run.busy <= 1


def test_a_failing_test_suite_keeps_the_build_times_and_fails_the_benchmark(
    tmp_path, monkeypatch, capsys
):
    runs = RECORDED["runs"].items()
    builds = {name: (r["seconds"], r["executed"]) for name, r in runs if "executed" in r}
    failing = build_benchmark.TestRun(99.0, "1 failed, 625 passed in 99.00s", 1, 0.8, "E boom")
    monkeypatch.setattr(build_benchmark, "measure", lambda jobs, pytest: (builds, failing))
    out = tmp_path / "build.json"
    status = build_benchmark.main(
        ["--jobs", str(RECORDED["jobs"]), "--pytest", "x", "--out", str(out)]
    )
    printed = capsys.readouterr().out
    assert status == 1
    assert "pytest failed (1 failed, 625 passed in 99.00s)" in printed
    assert printed.index("| (b) clean build, -j 1 |") < printed.index("pytest failed")
    report = json.loads(out.read_text())
    assert report["runs"][build_benchmark.SERIAL]["seconds"] == builds[build_benchmark.SERIAL][0]
    tests_row = report["runs"][build_benchmark.TESTS]
    assert tests_row["failed"] == "1 failed, 625 passed in 99.00s"
    assert not tests_row["met"]
    assert "| no page (pytest failed: 1 failed, 625 passed in 99.00s) |" in printed


def test_cpu_per_test_ranks_the_costly_test_first(tmp_path):
    (tmp_path / "test_two.py").write_text(
        "def test_idle():\n    pass\n\n\ndef test_busy():\n    sum(range(20_000_000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "cpu_per_test", "-p", "no:cacheprovider", "."],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
        capture_output=True,
        text=True,
        check=False,
    )
    table = done.stdout.split("CPU seconds per test function")[1].splitlines()[2:4]
    assert [line.split()[-1] for line in table] == [
        "test_two.py::test_busy",
        "test_two.py::test_idle",
    ]
