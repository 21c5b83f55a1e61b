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


def test_auto_shares_files_unless_one_holds_nearly_all_the_text():
    from hlo_index.report.driver import ALONE_SHARE, share_files

    assert share_files([600, 400])  # a dump's before and after optimizations: one each
    assert share_files([int(ALONE_SHARE * 1000), 1000 - int(ALONE_SHARE * 1000)])
    assert not share_files([990, 5, 5])  # a training step and two tiny modules: its targets shared instead
    assert not share_files([1000])  # one file: its targets shared, as ever


def _modules(tmp_path, count=4):
    from fusion import hlo_samples as s  # tests/ is on sys.path

    texts = [s.TRANSPOSE_ADD, s.SOFTMAX, s.NESTED]
    directory = tmp_path / "dump"
    directory.mkdir()
    for i in range(count):
        (directory / f"module_{i:04d}.m.after_optimizations.txt").write_text(texts[i % len(texts)])
    return directory


def test_auto_over_a_directory_is_byte_identical_to_one_process(tmp_path, monkeypatch):
    """``--jobs auto`` with an idle CPU shares a directory's files among worker processes: the
    document and the exit code are the ones a single process gives, and no worker file is left."""
    import tempfile

    from click.testing import CliRunner

    from hlo_index.cli import main
    from hlo_index.report import split_targets

    directory = _modules(tmp_path)
    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    runner = CliRunner()
    serial = runner.invoke(main, ["analyze", str(directory), "--format", "json", "--jobs", "1"])
    asked = []
    monkeypatch.setattr(split_targets, "usable_workers", lambda n: asked.append(n) or (2 if n == 0 else n))
    shared = runner.invoke(main, ["analyze", str(directory), "--format", "json"])
    assert asked == [0]  # auto asked how many CPUs are idle, and got two
    assert serial.exit_code == shared.exit_code == 0
    assert shared.stdout == serial.stdout
    assert serial.stdout.count('"source"') == 4
    assert list(spill.iterdir()) == []  # the workers' texts, read and removed


def test_a_worker_writes_its_text_to_a_file_that_the_writer_copies_out(tmp_path):
    """A worker's JSON text goes to a file as it is made (not one string down a pipe: a whole
    ENTRY's text is ~10^8 bytes), which the parent opens, unnames and copies out."""
    import io

    from hlo_index.render.json_out import encode_module, write_json
    from hlo_index.report.driver import AnalyzeOptions, _encoded, _opened, analyze_path

    path = _modules(tmp_path, 1) / "module_0000.m.after_optimizations.txt"
    (report,) = analyze_path(str(path), AnalyzeOptions())
    whole = encode_module(report)
    sent = _encoded(report, encode_module, str(tmp_path))
    assert sent.json_text is None and sent.targets == []
    from pathlib import Path

    assert Path(sent.json_path).read_text(encoding="utf-8") == whole
    (opened,) = _opened([sent])
    assert opened.json_path is None and not any(p.suffix == ".json" for p in tmp_path.iterdir())
    out = io.StringIO()
    write_json([opened], out)
    direct = io.StringIO()
    write_json([report], direct)
    assert out.getvalue() == direct.getvalue()
    assert opened.json_file is None  # closed: the text was copied once


def test_plan_files_keeps_one_process_unless_files_are_worth_sharing(tmp_path, monkeypatch):
    from hlo_index.report import split_targets
    from hlo_index.report.driver import plan_files

    directory = _modules(tmp_path, 3)
    files = sorted(str(p) for p in directory.iterdir())
    assert plan_files([str(directory)], 1) == ([str(directory)], 1)
    assert plan_files([str(directory)], 2) == (files, 2)
    monkeypatch.setattr(split_targets, "usable_workers", lambda n: 1)  # a busy machine
    assert plan_files([str(directory)], 0) == ([str(directory)], 0)
    monkeypatch.setattr(split_targets, "usable_workers", lambda n: 2)
    assert plan_files([str(directory)], 0) == (files, 2)
    (directory / "module_0009.big.after_optimizations.txt").write_text("HloModule big\n" + "// x\n" * 20_000)
    assert plan_files([str(directory)], 0) == ([str(directory)], 0)  # one file holds nearly all the text


def test_text_of_a_directory_is_the_same_however_it_is_shared(tmp_path, monkeypatch):
    """A directory read by one process, its files shared among workers, and the files named one
    by one: the same text, each module's cost line right after the module."""
    from click.testing import CliRunner

    from hlo_index.cli import main
    from hlo_index.report import split_targets

    directory = _modules(tmp_path)
    files = sorted(str(p) for p in directory.iterdir())
    runner = CliRunner()

    def text(*args):
        out = runner.invoke(main, ["analyze", *args, "--color", "never", "--no-pager"])
        assert out.exit_code == 0
        return out.stdout

    monkeypatch.setattr(split_targets, "usable_workers", lambda n: 1 if n == 0 else n)  # a busy machine
    whole = text(str(directory))
    assert whole == text(str(directory), "--jobs", "1") == text(str(directory), "--jobs", "2") == text(*files)
    lines = whole.splitlines()
    modules = [i for i, line in enumerate(lines) if line.startswith("module ")]
    costs = [i for i, line in enumerate(lines) if line.startswith("cost of ")]
    assert len(modules) == len(costs) == 4
    assert all(m < c < n for m, c, n in zip(modules, costs, [*modules[1:], len(lines)]))
