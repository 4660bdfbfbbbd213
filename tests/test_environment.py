import os
import tomllib

import jax
from conftest import ROOT

from chapter2.environment import (
    bfloat16_flags,
    cpu_model,
    cpus,
    environment,
    last_level_cache,
    transparent_hugepages,
    xla_cores,
)
from chapter2.releases import baseline_jax, release_key


def test_environment_reports_this_process():
    env = environment()
    assert env["JAX"] == jax.__version__
    assert env["backend"] == jax.default_backend()
    assert str(jax.devices()[0]) in env["devices"]
    assert env["CPU"].startswith(cpu_model())
    assert f"({cpus(os.cpu_count(), xla_cores())})" in env["CPU"]


def test_the_cpu_count_names_the_cores_this_process_may_use_where_fewer():
    assert cpus(8, 8) == "8 CPUs"
    assert cpus(8, 2) == "8 CPUs, 2 usable by this process"


def test_the_baseline_is_the_pinned_jax_from_the_source_tree_or_the_installed_metadata(tmp_path):
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pin = next(r for r in extra["optional-dependencies"]["baseline"] if r.startswith("jax=="))
    assert baseline_jax() == pin.removeprefix("jax==")
    assert baseline_jax(tmp_path / "no-source-tree.toml") == pin.removeprefix("jax==")


def test_releases_sort_by_number_not_by_text():
    assert sorted(["0.10.2", "0.4.38", "0.12.0.1", "0.9.2"], key=release_key) == [
        "0.4.38",
        "0.9.2",
        "0.10.2",
        "0.12.0.1",
    ]


def test_the_last_level_cache_is_the_highest_level_sysfs_lists(tmp_path):
    for index, (level, size) in enumerate([(1, "48K"), (2, "2048K"), (3, "32768K"), (1, "32K")]):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "size").write_text(f"{size}\n")
    assert last_level_cache(tmp_path) == 32 * 2**20
    assert last_level_cache(tmp_path / "nothing-here") is None


def test_bfloat16_flags_are_read_from_the_cpus_flags_or_not_at_all(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("model name\t: X\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile\n")
    assert bfloat16_flags(info) == ["avx512_bf16"]
    info.write_text("Features\t: fp asimd bf16 i8mm\n")  # an Arm CPU
    assert bfloat16_flags(info) == ["bf16"]
    info.write_text("flags\t\t: fpu avx2 avx512f\n")
    assert bfloat16_flags(info) == []
    info.write_text("model name\t: X\n")  # no flags line
    assert bfloat16_flags(info) is None
    assert bfloat16_flags(tmp_path / "absent") is None


def test_the_transparent_hugepage_mode_is_the_bracketed_word_or_none(tmp_path):
    setting = tmp_path / "enabled"
    setting.write_text("always [madvise] never\n")
    assert transparent_hugepages(setting) == "madvise"
    setting.write_text("[always] madvise never\n")
    assert transparent_hugepages(setting) == "always"
    setting.write_text("always madvise never\n")
    assert transparent_hugepages(setting) is None
    assert transparent_hugepages(tmp_path / "nothing-here") is None
