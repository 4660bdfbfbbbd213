from chapter2.fingerprint import code_fingerprint


def test_fingerprint_follows_the_code(tmp_path):
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "helper.py"
    module.write_text("X = 1\n")
    first = code_fingerprint(tmp_path / "pkg", tmp_path / "missing")
    assert code_fingerprint(tmp_path / "pkg", tmp_path / "missing") == first
    module.write_text("X = 2\n")
    assert code_fingerprint(tmp_path / "pkg") != first
    (tmp_path / "pkg" / "notes.txt").write_text("not code")
    assert code_fingerprint(tmp_path / "pkg") == code_fingerprint(tmp_path / "pkg")


def test_fingerprint_follows_the_installed_jax(tmp_path, monkeypatch):
    import chapter2.fingerprint as fp

    before = fp.code_fingerprint(tmp_path)
    monkeypatch.setattr(fp, "version", lambda name: "0.0.0")
    assert fp.code_fingerprint(tmp_path) != before
