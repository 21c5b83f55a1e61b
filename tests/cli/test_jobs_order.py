"""--jobs hands out files by the size of their text: a gzip file counts as what it holds."""

from __future__ import annotations

import gzip

from hlo_index.report.driver import _size_of


def test_gzip_files_count_their_uncompressed_text(tmp_path):
    text = ("HloModule m\n" + "// " + "x" * 5000 + "\n") * 20
    plain = tmp_path / "a.hlo"
    plain.write_text(text)
    packed = tmp_path / "b.hlo.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert packed.stat().st_size < len(text) // 10
    assert _size_of(str(packed)) == len(text.encode()) == _size_of(str(plain))
    assert _size_of(str(tmp_path / "missing.hlo")) == 0


def test_worker_encoded_json_is_byte_identical_to_serial(tmp_path):
    """Workers encode their reports' JSON (``AnalyzeOptions.encode``); the parent writes that text as is."""
    from click.testing import CliRunner
    from fusion import hlo_samples as s  # tests/ is on sys.path

    from hlo_index.cli import main

    paths = []
    for i, text in enumerate([s.TRANSPOSE_ADD, s.SOFTMAX, s.NESTED]):
        path = tmp_path / f"m{i}.hlo"
        path.write_text(text)
        paths.append(str(path))
    runner = CliRunner()
    serial = runner.invoke(main, ["analyze", *paths, "--format", "json"])
    parallel = runner.invoke(main, ["analyze", *paths, "--format", "json", "--jobs", "2"])
    assert serial.exit_code == parallel.exit_code == 0
    assert parallel.stdout == serial.stdout
    assert serial.stdout.count('"name"') > 3  # several modules and targets, not an empty document
