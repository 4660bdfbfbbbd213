"""The programs of examples/ run as a reader runs them: --quick, and bad input."""

import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from chapter2 import cli

EXAMPLES = ROOT / "examples"


def run(name: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


def test_every_example_is_tested_here():
    tested = {"pairwise_distances", "why_recompile", "fusion_report", "roofline", "step_audit"}
    assert {p.stem for p in EXAMPLES.glob("*.py")} == tested


def test_pairwise_distances_checks_and_times_every_version():
    done = run("pairwise_distances", "--quick")
    assert done.returncode == 0, done.stderr
    row = re.compile(r"^(v[0-3]|X @ Y\.T)\s+(\S+)\s+\S+ to \S+\s+\S+$", re.M)
    medians = dict(row.findall(done.stdout))
    assert set(medians) == {"v0", "v1", "v2", "v3", "X @ Y.T"}
    assert all(float(ms) > 0 for ms in medians.values())
    errors = dict(re.findall(r"^(v[0-3])\s+\S+\s+\S+ to \S+\s+(\S+)$", done.stdout, re.M))
    assert all(float(e) < 1e-3 for e in errors.values()), errors


def test_far_from_the_origin_v2_loses_digits_that_v3_keeps():
    done = run("pairwise_distances", "--n", "50", "--m", "60", "--d", "8", "--offset", "1000")
    errors = dict(re.findall(r"^(v[0-3])\s+\S+\s+\S+ to \S+\s+(\S+)$", done.stdout, re.M))
    assert float(errors["v2"]) > 10 * float(errors["v3"]), errors


def test_why_recompile_counts_and_explains_each_call():
    done = run("why_recompile", "--quick")
    assert done.returncode == 0, done.stderr
    assert [int(n) for n in re.findall(r"^call \d: .*: (\d) compilation", done.stdout, re.M)] == [
        1,
        0,
        1,
        1,
    ]
    assert "at x, now f32[4] and before f32[3]" in done.stdout


def test_fusion_report_compares_with_the_fusion_pass_off():
    done = run("fusion_report", "--quick")
    assert done.returncode == 0, done.stderr
    table = {
        key: (float(a.replace(",", "")), float(b.replace(",", "")))
        for key, a, b in re.findall(
            r"^(kernels|bytes accessed)\s+([\d,]+)\s+([\d,]+)$", done.stdout, re.M
        )
    }
    assert table["kernels"][0] < table["kernels"][1]
    assert table["bytes accessed"][0] < table["bytes accessed"][1]


def test_roofline_places_the_pages_v2_as_the_page_counts_it():
    import json

    import jax

    from chapter2.cases.distances import distances_v2, evidence
    from chapter2.roofline import Pattern, Placement, Roofs

    done = run("roofline", "--quick", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    kx, ky = jax.random.split(jax.random.key(0))  # the page's points; only their shapes count
    x, y = jax.random.normal(kx, (1000, 64)), jax.random.normal(ky, (1500, 64))
    page = evidence(distances_v2, x, y)
    assert (found["flops"], found["bytes"]) == (page.flops, page.bytes_accessed)
    assert found["intensity"] == page.flops / page.bytes_accessed
    seconds = found["seconds"]
    assert seconds["low"] <= seconds["median"] <= seconds["high"]
    assert found["runs"] >= 5
    roofs = Roofs(**found["roofs"])
    assert found["pattern"] == Pattern.NEW_OUTPUT  # D is a new array
    again = Placement(
        found["flops"], found["bytes"], seconds["median"], roofs, 0.0, found["footprint"],
        Pattern(found["pattern"]), found["fresh bytes per call"],
    )  # fmt: skip
    assert found["bandwidth"] == again.bandwidth
    assert found["footprint"] == 4 * (1000 * 64 + 1500 * 64 + 1000 * 1500)  # X, Y and D
    assert (found["verdict"], found["share"]) == (str(again.bound), again.share)


@pytest.mark.parametrize(("fresh", "named"), [(64 * 2**20, True), (8 * 2**10, False)])
def test_the_roofline_report_names_page_faults_and_donation_where_they_count(fresh, named):
    fresh_pages = runpy.run_path(str(EXAMPLES / "roofline.py"))["fresh_pages"]
    said = fresh_pages(fresh, 0.02)
    assert ("page faults" in said and "donate_argnums" in said) == named
    assert said.startswith("fresh pages")


@pytest.mark.parametrize(
    ("name", "args", "said"),
    [
        ("pairwise_distances", ["--n", "-3"], "a size must be a positive integer, got '-3'"),
        (
            "why_recompile",
            ["nosuchmodule:f", "--call", "1.0"],
            "cannot import module 'nosuchmodule'",
        ),
        ("why_recompile", ["math", "--call", "1.0"], "expected MODULE:FUNCTION, got 'math'"),
        ("fusion_report", ["math:nothing", "--args", "1.0"], "module 'math' has no function"),
        ("roofline", ["math:sin", "--args", "1.0"], "cannot jit math:sin for these arguments"),
        ("fusion_report", ["math:sin", "--args", "1 +"], "cannot evaluate the arguments"),
        ("step_audit", ["math:pi"], "module 'math' has no function 'pi'"),
        ("step_audit", ["math:sin"], "math:sin() failed: TypeError"),
        ("step_audit", ["math:nan"], "module 'math' has no function 'nan'"),
    ],
)
def test_bad_input_is_one_line_and_status_two(name, args, said, capsys, monkeypatch):
    """In this process (a program's exit status is what `run` returns, `sys.exit(run(main))`);
    a second process per case would spend its time importing JAX."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # a program may add its folder
    main = runpy.run_path(str(EXAMPLES / f"{name}.py"))["main"]
    assert cli.run(main, args) == 2
    stderr = capsys.readouterr().err
    assert stderr.strip().splitlines() == [stderr.strip()]
    assert said in stderr


def test_a_readers_module_is_found_in_the_folder_the_program_runs_in(tmp_path):
    (tmp_path / "mystep.py").write_text("def factory():\n    return 'not a workload'\n")
    done = run("step_audit", "mystep:factory", cwd=tmp_path)
    assert done.returncode == 2
    assert "mystep:factory should return (update, state, batches" in done.stderr


WAITING_STEP = """
import jax
import jax.numpy as jnp

@jax.jit
def step(w, x):
    return w - 0.01 * (x.T @ (x @ w)), jnp.mean(x @ w)

def waits_inside(w, x):  # device arrays only, but it waits for them
    return jax.block_until_ready(step(w, x))

def waits_not(w, x):
    return step(w, x)

def factory(update):
    return update, jnp.ones((256, 256)), [(jnp.ones((512, 256)),)] * 3

def waiting():
    return factory(waits_inside)

def not_waiting():
    return factory(waits_not)
"""


def test_step_audit_sees_a_wait_that_returns_no_host_value(tmp_path):
    (tmp_path / "mystep.py").write_text(WAITING_STEP)
    found = {
        name: json.loads(run("step_audit", f"mystep:{name}", "--json", cwd=tmp_path).stdout)[
            f"mystep:{name}"
        ]
        for name in ("waiting", "not_waiting")
    }
    assert {name: (a["waits"], a["host_results"]) for name, a in found.items()} == {
        "waiting": (True, 0),
        "not_waiting": (False, 0),
    }


def test_step_audit_finds_the_first_loops_waits_and_extra_compilation_not_the_last():
    done = run("step_audit", "--quick", "--json")
    assert done.returncode == 0, done.stderr
    first, last, model = json.loads(done.stdout).values()
    # The transformer's step: one compilation, donated, and on the CPU, whose vendor peak the
    # audit does not know, a share of the measured peak rather than an MFU.
    assert (model["compilations_first"], model["compilations_later"]) == (1, 0)
    assert model["donated"] > 0
    assert not model["waits"]
    assert model["mfu"] is None
    assert 0 < model["share of measured peak"] < 1
    assert first["mfu"] is first["share of measured peak"] is None  # no model flops given
    assert first["waits"]
    assert first["host_results"] >= 1  # float(loss)
    assert first["numpy_inputs"] == 2
    assert first["compilations_later"] >= 1  # the smaller last batch
    assert first["share"] is None  # op by op: no one program to place
    assert not last["waits"]
    assert (last["host_results"], last["numpy_inputs"]) == (0, 0)
    assert (last["compilations_first"], last["compilations_later"]) == (1, 0)
    assert last["donated"] > 0
    assert last["share"] > 0
