"""The publishing recipe (.github/workflows) runs what the README says; it cannot run here."""

import re

import yaml
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def steps(workflow: str) -> list[dict]:
    jobs = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"]
    return [step for job in jobs.values() for step in job.get("steps", [])]


def test_the_book_is_built_with_the_ci_command_and_its_html_published():
    book = steps("book.yml")
    assert any(step.get("run") == "bash .ci/run" for step in book)
    uploads = [s for s in book if s.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert [s["with"]["path"] for s in uploads] == ["docs/_build/html"]
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in book)
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^nox -s [\w ]+$", ci, re.M)[0]
    assert f"```bash\n{command}\n```" in readme, "README's test command is not what CI runs"


def test_the_drift_job_runs_on_a_schedule_and_keeps_its_report_even_when_it_fails():
    workflow = yaml.safe_load((WORKFLOWS / "drift.yml").read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert on["schedule"][0]["cron"]
    drift = steps("drift.yml")
    runs = [step.get("run", "").split("#")[0].strip() for step in drift]
    assert runs.index("nox -s docs") < runs.index("nox -s drift -- latest")
    (keep,) = [s for s in drift if s.get("uses", "").startswith("actions/upload-artifact")]
    assert keep["if"] == "always()"
    assert keep["with"]["path"] == "docs/_build/drift-*/report.*"


def test_the_toolchain_job_tries_the_newest_releases_weekly_and_keeps_what_broke():
    workflow = yaml.safe_load((WORKFLOWS / "toolchain.yml").read_text())
    on = workflow.get("on", workflow.get(True))
    assert on["schedule"][0]["cron"]
    toolchain = steps("toolchain.yml")
    assert any(step.get("run") == "nox -s toolchain" for step in toolchain)
    (keep,) = [s for s in toolchain if s.get("uses", "").startswith("actions/upload-artifact")]
    assert keep["if"] == "always()"
    assert keep["with"]["path"] == "docs/_build/toolchain/"


def test_every_session_but_the_toolchain_installs_the_pinned_toolchain():
    noxfile = (ROOT / "noxfile.py").read_text()
    assert (ROOT / "constraints.txt").exists()
    for session in ("docs", "tests", "benchmark", "drift", "standin_gpu"):
        body = noxfile.split(f"def {session}(", 1)[1].split("\n@nox.session", 1)[0]
        assert '_install(session, "' in body, session
        assert "upgrade" not in body, session
    install = noxfile.split("def _install(", 1)[1].split("\ndef ", 1)[0]
    assert 'pins = ["--upgrade"] if upgrade else CONSTRAINTS' in install
    for session in ("lint", "matrix"):
        assert "*CONSTRAINTS" in noxfile.split(f"def {session}(", 1)[1].split("\n@nox", 1)[0]
    toolchain = noxfile.split("def toolchain(", 1)[1]
    assert '_install(session, "baseline,docs,test", upgrade=True)' in toolchain


def test_the_published_site_tells_notebooks_where_the_wheel_is():
    """The publishing workflow names the site's address; conf.py makes it html_baseurl, from
    which a downloaded notebook installs the book's wheel."""
    workflow = yaml.safe_load((ROOT / ".github/workflows/book.yml").read_text())
    address = workflow["jobs"]["build"]["env"]["BOOK_BASEURL"]
    assert address.startswith("https://")
    assert address.endswith("/")
    conf = (ROOT / "docs/conf.py").read_text()
    assert 'html_baseurl = os.environ.get("BOOK_BASEURL", "")' in conf
