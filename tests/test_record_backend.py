"""tools/record_backend.py: the folder prepared here records, on a machine with JAX alone,
what `chapter2.claims.backends` reads. Run here on the CPU, with the notebook modules
missing as they are on the GPU machine (their stand-ins take over)."""

import importlib.util
import json

import jax
import pytest
import record_backend  # tools/ is on pytest's pythonpath (pyproject.toml)

from chapter2.claims import claims
from chapter2.claims.__main__ import main
from chapter2.claims.backends import recorded_runs, status_there

pytestmark = pytest.mark.slow


def test_a_prepared_folder_records_claims_and_pages_where_only_jax_is_installed(
    tmp_path, monkeypatch
):
    work, out = tmp_path / "work", tmp_path / "runs" / "cpu-here"
    record_backend.prepare(work, ["numpy-to-jax"])  # a page with a figure and glue
    assert sorted(p.name for p in (work / "pages").iterdir()) == ["numpy-to-jax.py"]
    # where nothing is installed, the package reads its baseline pin beside its source
    releases = work / "src" / "chapter2" / "releases.py"
    assert (releases.parents[2] / "pyproject.toml").exists()
    (work / "pages" / "broken.py").write_text("print('before')\n1 / 0\n")

    real = importlib.util.find_spec
    missing = {"myst_nb", "IPython"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in missing else real(name, *a)
    )
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    record = record_backend.run(work, out, claims_page="jaxprs")  # claims of a page not prepared

    assert (record["platform"], record["device"], record["jax"]) == ("cpu", "cpu", jax.__version__)
    assert sorted((work / "shims-used").iterdir()) == sorted(
        work / "shims-used" / m for m in missing
    )
    pages = {p["page"]: p for p in json.loads((out / "pages.json").read_text())}
    assert pages["numpy-to-jax"]["rc"] == 0, pages  # Matplotlib beside IPython's stand-in
    assert "[glue] " in (out / "pages.log").read_text()  # myst_nb's stand-in glued
    assert pages["broken"]["rc"] == 1
    assert pages["broken"]["last"] == "ZeroDivisionError: division by zero"
    assert "1 of 2 pages ran to the end" in record["made"]

    with pytest.raises(SystemExit, match="is not empty"):
        record_backend.run(work, out)  # a record is never mixed with an older one
    with pytest.raises(SystemExit, match="no such page: no-such-page"):
        record_backend.prepare(tmp_path / "other", ["jaxprs", "no-such-page"])

    [run] = recorded_runs(out.parent)
    home = {i for i, c in claims().items() if c.page == "jaxprs"}
    assert set(run["by_id"]) == home
    for claim_id in home:
        assert status_there(claims()[claim_id], run)["status"] == "holds", claim_id


def test_the_claims_cli_names_a_page_without_claims(capsys):
    with pytest.raises(SystemExit):
        main(["--page", "no-such-page"])
    assert "no claim's home is the page 'no-such-page'" in capsys.readouterr().err
