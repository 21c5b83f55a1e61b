"""``report.split_targets``: a module's targets shared among forked workers give the report the
serial loop gives, byte for byte, on real dumps of every kind; a failing worker costs time only."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.analyses.structure_keys import fusion_shape_key
from hlo_index.api import select_targets
from hlo_index.cli import main
from hlo_index.context import AnalysisContext
from hlo_index.hlo import loader
from hlo_index.hlo.loader import load_path
from hlo_index.report import build, split_targets
from hlo_index.report.split_targets import run_split, tickets, usable_workers

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
    """Every module is split, however little it holds; two workers even on one CPU; and its
    bodies are left to the processes that analyse them wherever they can be (``hlo.deferred``)."""
    monkeypatch.setattr(split_targets, "MIN_WORK_TO_SPLIT", 0)
    monkeypatch.setattr(split_targets, "usable_workers", lambda asked: asked)
    monkeypatch.setattr(loader, "DEFER_MIN_CHARS", 0)
    monkeypatch.setattr(loader, "DEFER_MIN_SHARE", 0.0)


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


@pytest.mark.parametrize(
    "path",
    [*DUMPS, SHARED / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"],
    ids=lambda p: p.name[:40],
)
def test_every_fusion_of_a_structure_is_in_its_group(path):
    """A structure is analysed once per process only if all its fusions are in one group: fusions
    with equal structure keys get equal groups, though the groups are read before any structure."""
    if not path.exists():
        pytest.skip(f"{path} not present")
    (module,) = load_path(str(path))
    with AnalysisContext():
        selected = select_targets(module)
        group_of_structure: dict = {}
        groups = set()
        for i, item in enumerate(selected):
            group, _ = split_targets._group(item, i)
            groups.add(group)
            if item.kind == "fusion" and (shapes := fusion_shape_key(item.target)) is not None:
                assert group_of_structure.setdefault(shapes, group) == group, item.target.name
    assert len(group_of_structure) > 5  # many structures, each checked against its fusions' groups
    assert len(groups) > 5


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


def test_tickets_keep_the_order_and_never_exceed_one_write(monkeypatch):
    groups = [[4, 7], [0], [2, 3], [1], [5], [6]]
    assert tickets(groups) == groups  # few groups: a ticket each
    monkeypatch.setattr(split_targets, "MAX_TICKETS", 4)
    # six groups in at most four tickets: runs of two consecutive groups, heaviest first kept
    assert tickets(groups) == [[4, 7, 0], [2, 3, 1], [5, 6]]
    assert split_targets.MAX_TICKETS * 2 <= 4096  # one write within a pipe's smallest capacity


def test_free_processes_take_the_next_group_and_records_come_back_in_order():
    groups = [[3, 9], [0, 1, 2], [4], [5, 6], [7], [8]]
    parent = os.getpid()
    signal_read, signal_write = os.pipe()

    def analyse_one(i):
        if os.getpid() != parent:
            os.write(signal_write, b"x")  # a worker has taken a group
        return i, [f"t{i}"], [], []

    def to_send(record, k):
        i, made, said, _ = record
        return i, made, said, [k]

    # this process's own work first: it waits until a worker has taken a group, so both take some
    records, _ = run_split(groups, 2, analyse_one, to_send, first=lambda: os.read(signal_read, 1))
    os.close(signal_read), os.close(signal_write)
    assert [r[0] for r in records] == list(range(10))
    assert [r[1] for r in records] == [[f"t{i}"] for i in range(10)]
    process_of = {i: r[3][0] for i, r in enumerate(records)}
    assert all(len({process_of[i] for i in group}) == 1 for group in groups)  # a group stays in one process
    assert set(process_of.values()) <= {0, 1} and 1 in process_of.values()


def test_a_worker_that_dies_mid_group_loses_nothing():
    groups = [[0, 1], [2], [3], [4, 5]]
    parent = os.getpid()

    def analyse_one(i):
        if os.getpid() != parent:
            os._exit(3)  # killed while analysing whatever it took
        return i, [i], [], []

    records, _ = run_split(groups, 2, analyse_one)
    assert [r[0] for r in records] == [0, 1, 2, 3, 4, 5]


def test_auto_takes_this_process_and_the_idle_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(split_targets, "runnable_now", lambda: None)  # the load average alone
    for load, workers in ((0.0, 4), (1.0, 4), (2.2, 3), (3.2, 2), (3.8, 1), (9.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert usable_workers(0) == workers, load
    assert usable_workers(3) == 3  # a count asked is honoured whatever the load, up to the CPUs
    assert usable_workers(16) == 4


def test_auto_holds_a_cpu_busy_only_where_it_was_and_is(monkeypatch):
    # (1-minute load average, tasks runnable now with this one) -> processes on 4 CPUs: a run
    # that just ended (a benchmark's previous round) leaves a load but nothing runnable; a task
    # that just woke is runnable on an idle minute; work that goes on is both
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    for load, runnable, workers in ((3.8, 1, 4), (0.0, 4, 4), (3.8, 4, 1), (2.2, 2, 3), (2.2, 3, 3), (9.0, 9, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        monkeypatch.setattr(split_targets, "runnable_now", lambda runnable=runnable: runnable)
        assert usable_workers(0) == workers, (load, runnable)


def test_the_tasks_runnable_now_are_read_where_linux_tells_them():
    now = split_targets.runnable_now()
    if Path("/proc/loadavg").exists():
        assert now is not None and now >= 1  # this process at least
    else:
        assert now is None


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

    monkeypatch.setattr(os, "open", no_room)
    monkeypatch.setattr(tempfile, "TemporaryFile", no_room)
    assert _run(["analyze", str(path), "--format", "json", "-j", "2"]) == serial


def test_without_unnamed_files_the_texts_go_to_the_tempfile_modules_files(always_split, monkeypatch):
    """Where the file system makes no unnamed files, ``tempfile`` makes the files (named, then
    unlinked): the same document."""
    import errno
    import tempfile

    path = DUMPS[1]
    if not path.exists():
        pytest.skip(f"{path} not present")
    serial = _run(["analyze", str(path), "--format", "json", "-j", "1"])
    made = []
    temporary_file, open_file, unnamed = tempfile.TemporaryFile, os.open, getattr(os, "O_TMPFILE", 0)

    def no_unnamed_files(name, flags, *args, **kwargs):
        if unnamed and flags & unnamed == unnamed:
            raise OSError(errno.EOPNOTSUPP, "Operation not supported")
        return open_file(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", no_unnamed_files)
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda: made.append(1) or temporary_file())
    assert _run(["analyze", str(path), "--format", "json", "-j", "2"]) == serial
    assert len(made) == 2  # one file per process


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="unnamed files are Linux's")
def test_the_unnamed_files_are_in_the_temporary_directory_on_disk(tmp_path, monkeypatch):
    """Where ``tempfile`` would put them (``TMPDIR`` first), not in memory: a big module's text
    can be large."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    (file,) = split_targets.spill_files(1)
    with file:
        file.write(b"{}")
        assert os.readlink(f"/proc/self/fd/{file.fileno()}").startswith(str(tmp_path))
        assert os.pread(file.fileno(), 2, 0) == b"{}"
    assert list(tmp_path.iterdir()) == []  # unnamed: nothing left behind


@pytest.mark.parametrize(
    "path, machine, imported, not_imported",
    [
        (DUMPS[3], "cpu", "analyses.cpu_access", "analyses.gpu_coalescing"),
        (DUMPS[1], "gpu", "analyses.gpu_coalescing", "analyses.cpu_access"),
        (DUMPS[2], "tpu", "analyses.target_figures", "analyses.gpu_coalescing"),
    ],
    ids=["cpu", "gpu", "tpu"],
)
def test_before_the_fork_only_what_the_dumps_machine_reads_is_imported(
    path, machine, imported, not_imported, always_split, monkeypatch
):
    """What both processes would import is imported once before the fork: the analyses of the
    dump's machine, not the other machines' (a CPU dump never needs the GPU emitters)."""
    import importlib

    if not path.exists():
        pytest.skip(f"{path} not present")
    preload, import_module = split_targets.preload, importlib.import_module
    asked: list[str] = []
    names: list[str] = []
    monkeypatch.setattr(split_targets, "preload", lambda m: asked.append(m) or preload(m))
    monkeypatch.setattr(
        importlib, "import_module", lambda name, package=None: names.append(name) or import_module(name, package)
    )
    code, _, _ = _run(["analyze", str(path), "--format", "json", "-j", "2"])
    assert code in (0, 1)
    assert asked == [machine]
    preloaded = {name.lstrip(".") for name in names if name.startswith("..")}
    assert imported in preloaded
    assert not_imported not in preloaded


def test_the_totals_add_the_rows_made_where_each_fusion_was_costed(always_split, monkeypatch):
    """Split, the module's totals make no fusion's figures again: each worker gives the rows of the
    fusions it costed, and the totals (equal to the serial ones, above) add them as given."""
    from hlo_index.analyses.cost import target_cost

    path = DUMPS[1]
    if not path.exists():
        pytest.skip(f"{path} not present")
    summed = target_cost.computation_totals_under
    made_again: list[str] = []
    given: list[int] = []

    def watched(costs, comp, rows_of=None, known=None):
        known = known or {}
        given.append(len(known))
        made_again.extend(i.name for i in comp.instructions if i.opcode == "fusion" and id(i) not in known)
        return summed(costs, comp, rows_of, known)

    monkeypatch.setattr(target_cost, "computation_totals_under", watched)
    code, out, _ = _run(["analyze", str(path), "--format", "json", "-j", "2"])
    assert code in (0, 1) and '"cost_totals"' in out
    assert given and given[0] > 10
    assert made_again == []


def test_a_cost_row_that_fails_fails_the_split_totals_as_the_serial_ones(always_split, monkeypatch):
    """A failing figure of one entry instruction: the split run's report (the totals' diagnostic
    included) is the serial one, whichever process met the failure first."""
    from hlo_index.analyses.cost import hlo_cost

    path = DUMPS[0]
    if not path.exists():
        pytest.skip(f"{path} not present")
    figures = hlo_cost.HloCost._all_figures

    def failing(self, instr):
        # by what fusions equal in structure share (their figures are shared too)
        reduces = instr.opcode == "fusion" and instr.fused_computation.root.opcode == "reduce"
        if instr.opcode == "get-tuple-element" or reduces:
            raise ArithmeticError(f"no figure for %{instr.name}")
        return figures(self, instr)

    monkeypatch.setattr(hlo_cost.HloCost, "_all_figures", failing)
    serial = _run(["analyze", str(path), "--format", "json", "-j", "1"])
    split = _run(["analyze", str(path), "--format", "json", "-j", "2"])
    assert "no figure for %" in serial[1]
    assert split == serial
