"""The publishing recipe (.github/workflows) runs what the README says; it cannot run here."""

import re
from pathlib import Path

import pytest
import yaml
from book.notebooks import NOTEBOOKS_BRANCH
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def steps(workflow: str) -> list[dict]:
    jobs = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"]
    return [step for job in jobs.values() for step in job.get("steps", [])]


def test_the_book_is_built_with_the_ci_command_and_published_as_the_site():
    book = steps("book.yml")
    runs = [step.get("run", "").split("#")[0].strip() for step in book]
    assert runs.index("bash .ci/run") < runs.index("nox -s site")
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
    for session in ("docs", "benchmark", "drift", "standin_gpu"):
        body = noxfile.split(f"def {session}(", 1)[1].split("\n@nox.session", 1)[0]
        assert '_install(session, "' in body, session
        assert "upgrade" not in body, session
    tests = noxfile.split("def tests(", 1)[1].split("\n@nox.session", 1)[0]
    assert "DOCS_PYTHON" in tests  # in the pinned environment of `docs`
    assert '_install(session, "baseline,docs,test")' in noxfile.split("def docs(", 1)[1]
    install = noxfile.split("def _install(", 1)[1].split("\ndef ", 1)[0]
    assert 'pins = ["--upgrade"] if upgrade else CONSTRAINTS' in install
    for session in ("lint", "matrix"):
        assert "*CONSTRAINTS" in noxfile.split(f"def {session}(", 1)[1].split("\n@nox", 1)[0]
    toolchain = noxfile.split("def toolchain(", 1)[1]
    assert '_install(session, "baseline,docs,test", upgrade=True)' in toolchain


def test_every_workflow_that_deploys_to_pages_publishes_the_same_assembled_site():
    """One address: whichever workflow ran last, readers get the baseline at the root and
    each other release in its folder (nox -s site), and its notebooks know where the wheel
    is (BOOK_BASEURL, which conf.py makes html_baseurl)."""
    deploying = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        jobs = yaml.safe_load(path.read_text())["jobs"]
        for job in jobs.values():
            job_steps = job.get("steps", [])
            uploads = [s for s in job_steps if "upload-pages-artifact" in s.get("uses", "")]
            if not uploads:
                continue
            deploying.append(path.name)
            assert [s["with"]["path"] for s in uploads] == ["docs/_build/site"], path.name
            runs = [s.get("run", "").split("#")[0].strip() for s in job_steps]
            assert "nox -s site" in runs, path.name
            address = job["env"]["BOOK_BASEURL"]
            assert address.startswith("https://"), path.name
            assert address.endswith("/"), path.name
    assert sorted(deploying) == ["book.yml", "drift.yml"]
    conf = (ROOT / "docs/conf.py").read_text()
    assert 'html_baseurl = os.environ.get("BOOK_BASEURL", "")' in conf


def test_what_ci_tries_on_a_page_or_two_runs_on_every_page_each_week():
    """CI runs each page's code once (the build); the whole book again, as a reader and as a
    script with a stand-in GPU, is the scheduled workflow's."""
    jobs = yaml.safe_load((WORKFLOWS / "drift.yml").read_text())["jobs"]
    runs = {
        step.get("run", "").split("#")[0].strip() for job in jobs.values() for step in job["steps"]
    }
    assert {"nox -s reader", "nox -s scripts"} <= runs
    ci = re.search(r"^nox -s [\w ]+$", (ROOT / ".ci" / "run").read_text(), re.M)[0]
    assert {"reader", "scripts"}.isdisjoint(ci.split())


@pytest.mark.parametrize("workflow", ["book.yml", "drift.yml"])
def test_each_publishing_workflow_pushes_the_notebooks_its_pages_open_in_colab(workflow):
    text = (WORKFLOWS / workflow).read_text()
    assert "BOOK_NOTEBOOKS_REPOSITORY: ${{ github.repository }}" in text
    assert text.index("nox -s site") < text.index("bash .ci/publish-notebooks")
    assert "contents: write" in text
    script = (ROOT / ".ci" / "publish-notebooks").read_text()
    assert re.search(rf"git push -qf \S+ {NOTEBOOKS_BRANCH}$", script, re.M)


def test_the_per_push_build_keeps_the_execution_cache_keyed_by_the_lock():
    cached = [s for s in steps("book.yml") if s.get("uses", "").startswith("actions/cache@")]
    (cache,) = cached
    assert cache["with"]["path"] == "docs/_build/.jupyter_cache"
    lock = "hashFiles('constraints.txt', 'pyproject.toml')"
    assert lock in cache["with"]["key"]
    assert lock in cache["with"]["restore-keys"]
    order = [s.get("run") or s.get("uses") for s in steps("book.yml")]
    assert order.index(cache["uses"]) < order.index("bash .ci/run")


def noxfile_function(name: str, **scope):
    """One function of the noxfile, run alone (the noxfile imports nox, which the tests'
    environment lacks), with `Path`, a stand-in `nox` and `scope` as its globals."""
    import ast
    from types import SimpleNamespace

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    [found] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    scope |= {"Path": Path, "nox": SimpleNamespace(Session=object)}
    exec(compile(ast.Module([found], []), "noxfile.py", "exec"), scope)
    return scope[name]


def test_every_session_that_builds_the_book_gives_the_build_its_source_and_folder(monkeypatch):
    """Each nox session builds through the noxfile's `book_build`, whose command is the one
    `python -m book build` reads: the source folder, then the HTML folder."""

    from book import __main__ as entry
    from book import build

    noxfile = (ROOT / "noxfile.py").read_text()
    command = noxfile_function("book_build")(Path("out/html"))
    assert command[:3] == ["python", "-m", "book"]
    seen = []
    monkeypatch.setattr(build, "main", lambda argv: seen.append(argv) or 0)
    assert entry.main(command[3:]) == 0
    assert seen == [["docs", "out/html"]]
    assert noxfile.count('"-m", "book", "build"') == 1  # no session spells it again


def test_the_noxfile_reads_the_jax_of_a_sessions_environment_from_its_metadata():
    """The drift and matrix sessions name their files by the JAX installed in their own
    environment, read from its package metadata (here: the environment running the tests)."""
    import importlib.metadata
    import sys
    from types import SimpleNamespace

    import jax

    jax_version = noxfile_function("_jax_version", importlib=importlib)
    session = SimpleNamespace(virtualenv=SimpleNamespace(location=sys.prefix))
    assert jax_version(session) == jax.__version__


def test_the_site_plan_the_noxfile_writes_is_the_one_the_builds_read(tmp_path):
    """`nox -s site` writes its plan itself (it runs before the book's environment exists);
    the file reads back, as chapter2.records.SitePlan, as the plan it means."""
    import json

    from chapter2.records import SitePlan

    path, builds = noxfile_function("site_plan", json=json)(["0.12.0.1", "0.11.2"], tmp_path)
    plan = SitePlan.load(path)
    assert plan.versions == ["0.12.0.1", "0.11.2"]
    assert plan.builds == {"0.12.0.1": tmp_path / "html", "0.11.2": tmp_path / "drift-0.11.2/html"}
    assert {v: Path(p) for v, p in builds.items()} == plan.builds


def test_the_layers_command_answers_a_wrong_call_with_its_usage_and_status_2(capsys):
    """Not drift's 1 ("the book drifted") nor a traceback: an unknown command or a wrong
    number of arguments prints the usage and exits 2."""
    from book import __main__ as entry

    for argv in ([], ["nothing"], ["drift"], ["drift", "a", "b"], ["site", "x"], ["build", "d"]):
        assert entry.main(argv) == 2, argv
        assert "python -m book COMMAND ARGS" in capsys.readouterr().err
