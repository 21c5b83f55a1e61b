"""``report.split_targets``: a module's targets shared among forked workers give the report the
serial loop gives, byte for byte, on real dumps of every kind; a failing worker costs time only."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.report import build, split_targets
from hlo_index.report.split_targets import deal, usable_workers

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
FIELD = SHARED / "field"

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="splits only where CPUs are known")

# Dumps whose fusions split into many groups: a GPU training step's backward pass, a GPU ResNet,
# a TPU attention (tiled layouts), a CPU sample with a while loop; each small enough for a test.
DUMPS = [
    FIELD / "gpu" / "HLO_breakdown.tf_bert_fp16_baseline_bw.gpu_after_optimizations.txt",
    FIELD / "gpu" / "xla_hlo_dump_parse.tf_resnet.module_0039.gpu_after_optimizations.txt",
    FIELD / "tpu" / "hlo-visualizer.v6e-2x2.attention.after_optimizations.hlo",
    ROOT / "samples" / "cond_switch_while.after_optimizations.hlo.txt",
]


@pytest.fixture
def always_split(monkeypatch):
    """Every module is split, however little it holds; two workers even on one CPU."""
    monkeypatch.setattr(split_targets, "MIN_WORK_TO_SPLIT", 0)
    monkeypatch.setattr(split_targets, "usable_workers", lambda asked: asked)


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name[:40])
@pytest.mark.parametrize("extra", [["--format", "json", "--direction", "both"], []], ids=["json-both", "text"])
def test_split_report_is_the_serial_report(path, extra, always_split):
    if not path.exists():
        pytest.skip(f"{path} not present")
    serial = _run(["analyze", str(path), "-j", "1", "--no-pager", *extra])
    split = _run(["analyze", str(path), "-j", "3", "--no-pager", *extra])
    assert serial[0] in (0, 1)
    assert split == serial
    assert serial[1].count("fusion") > 10  # many targets were compared, not an empty report


def test_check_with_verification_splits_the_same(always_split):
    path = DUMPS[1]
    if not path.exists():
        pytest.skip(f"{path} not present")
    serial = _run(["check", str(path), "--verify", "--format", "json", "-j", "1"])
    split = _run(["check", str(path), "--verify", "--format", "json", "-j", "2"])
    assert split == serial
    assert '"fusions_checked"' in serial[1] or serial[1].count("fusion") > 10


def test_a_failing_worker_costs_only_time(always_split, monkeypatch):
    path = DUMPS[1]
    if not path.exists():
        pytest.skip(f"{path} not present")
    serial = _run(["analyze", str(path), "--format", "json", "-j", "1"])

    def broken(*args, **kwargs):  # a worker that cannot send its reports back exits non-zero
        raise MemoryError("worker out of memory")

    monkeypatch.setattr(pickle, "dumps", broken)
    analysed_here = []
    analyse = build._report_target
    monkeypatch.setattr(build, "_report_target", lambda item, *a: analysed_here.append(item) or analyse(item, *a))
    split = _run(["analyze", str(path), "--format", "json", "-j", "2"])
    assert split == serial
    # this process analysed every target: its own share, then the failed worker's
    assert len(analysed_here) == serial[1].count('"kind": "fusion"') > 10


def test_groups_are_dealt_heaviest_first_onto_the_lightest_worker():
    groups = [("a", 10, [0, 5]), ("b", 7, [1]), ("c", 4, [2, 4]), ("d", 3, [3])]
    bins = deal(groups, 2)
    # 10 -> w0; 7 -> w1; 4 -> w1 (7 < 10); 3 -> w0 (10 < 11): loads 13 and 11
    assert bins == [[0, 3, 5], [1, 2, 4]]
    assert deal(groups[:1], 3) == [[0, 5]]  # no empty worker


def test_auto_takes_this_process_and_the_idle_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    for load, workers in ((0.0, 4), (1.0, 4), (2.2, 3), (3.2, 2), (3.8, 1), (9.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert usable_workers(0) == workers, load
    assert usable_workers(3) == 3  # a count asked is honoured whatever the load, up to the CPUs
    assert usable_workers(16) == 4


def test_one_worker_asked_or_no_fork_means_no_split(monkeypatch):
    assert usable_workers(1) == 1
    assert usable_workers(64) <= len(os.sched_getaffinity(0))
    monkeypatch.delattr(os, "fork")
    assert usable_workers(8) == 1


def test_jobs_rejects_what_is_not_a_count():
    code, _, err = _run(["analyze", str(DUMPS[3]), "-j", "0"])
    assert code == 2 and "'0' is not a count of processes" in err


def test_without_a_temporary_file_the_reports_come_back_whole(always_split, monkeypatch):
    """JSON runs have the workers write their targets' text to temporary files; where none can be
    made, the reports themselves come back and are encoded here: the same document."""
    import tempfile

    path = DUMPS[1]
    if not path.exists():
        pytest.skip(f"{path} not present")
    serial = _run(["analyze", str(path), "--format", "json", "-j", "1"])

    def no_room(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_room)
    assert _run(["analyze", str(path), "--format", "json", "-j", "2"]) == serial
