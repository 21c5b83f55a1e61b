"""One module's targets shared among forked worker processes, reports merged in target order.

A training step's dump holds thousands of fusions; after the (serial) parse, analysing them is
about half of a run, and each fusion's analysis reads only the module. So the targets are split
into groups, each holding every fusion of its structures (a structure is analysed once per
process: its repeats take the first one's figures, ``build._Twin``), ordered by their estimated
work, heaviest first, and ``workers`` processes take the next group whenever they are free; each
group's targets are analysed in the module's order, as the serial loop would. A worker is forked after the
module is read (its memory shared until written) and sends back, per target, what the serial
loop would have added to the module report: the target report, its diagnostics and the cost
state's entries. In JSON runs each process writes its targets' JSON text to a temporary file of
its own (``spilled``) and the report says where, so the parent copies the texts in order when it
writes the document and never holds them whole.

The merged report is the serial one: every figure depends on its target and the module only,
and the first fusion of each structure is the same in a group as in the whole list (tests
compare the two on every corpus and field dump). A worker that fails (killed, out of memory)
costs only time: its targets are analysed here afterwards.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING

from ..analyses.gpu_target import CPU, GPU, TPU
from ..fusion import callee_of
from ..fusion.fingerprint import shape_token
from ..hlo.model import Computation
from .model import EncodedElsewhere, TargetReport

if TYPE_CHECKING:
    from ..api import SelectedTarget

_OPCODE = attrgetter("opcode")

# Below this estimated work (``estimated_work``: ~0.1 ms a unit), what a split costs (the fork,
# the pages both processes then copy, each process's first GPU target, the reports' way back) is
# more than a second process saves. Measured on 2 cores, whole processes, interleaved: the TF
# BERT backward dump (~1,300 units) ran in 0.88x the wall time split, gpt12 (~5,100) in 0.95x,
# each for ~15% more CPU time; a module of a few hundred units gains nothing.
MIN_WORK_TO_SPLIT = 1_000
# A target's estimated work, in units of ~0.1 ms: fitted on three dumps' fusions, the Pax step's
# (742 structures, 6,857 fused instructions: 0.79 s), gpt12's (159, 28,706: 0.40 s) and BERT's
# backward pass (100, 3,192: 0.28 s): 1.0 ms a structure and 0.009 ms a fused instruction.
STRUCTURE_WORK = 10
INSTRUCTIONS_PER_WORK = 11
REPEAT_WORK = 1  # a repeat of an analysed structure (~0.07 ms)


def estimated_work(instructions: int) -> int:
    """The estimated work of analysing a structure of ``instructions`` fused instructions."""
    return STRUCTURE_WORK + instructions // INSTRUCTIONS_PER_WORK


# What one target added to the module report: (its index, the target reports (none when it
# failed), diagnostics, module state entries, what the module's totals add for it (None: made
# where they are summed)).
Record = tuple[int, list, list, list, "tuple | None"]
AnalyseOne = Callable[[int], Record]


def usable_workers(asked: int) -> int:
    """``asked`` processes, or with 0 (``--jobs auto``) this one and one per idle CPU; bounded by
    the CPUs this process may run on, and 1 where that is not known (Linux alone tells it) or
    processes cannot fork."""
    if asked == 1 or not hasattr(os, "fork") or not hasattr(os, "sched_getaffinity"):
        return 1
    cpus = len(os.sched_getaffinity(0))
    if asked == 0:
        asked = int(cpus - busy_elsewhere() + 0.5)
    return max(1, min(asked, cpus))


def busy_elsewhere() -> float:
    """CPUs busy with other work: a busy machine gains nothing from a worker that waits for a core.
    The 1-minute load average (less this process, which it counts once it has run a while) says
    what ran over the last minute, and so counts a run that just ended (the previous file of a
    script, the previous round of a benchmark) as busy; the tasks runnable right now besides this
    one (Linux's ``/proc/loadavg``) say what runs. A CPU is busy where both say so: a load that
    has gone is not held against the worker, and neither is a task that just woke."""
    over_the_minute = max(os.getloadavg()[0] - 1, 0.0)
    now = runnable_now()
    return over_the_minute if now is None else min(over_the_minute, max(now - 1, 0))


def runnable_now() -> int | None:
    """Tasks runnable at this instant, this process included (``/proc/loadavg``'s fourth field,
    ``runnable/total``); None where it cannot be read."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


# The most tickets ``run_split`` hands out: two bytes each, all written into the pipe at once in
# one write no longer than the smallest capacity a pipe has (a page), so it never blocks.
MAX_TICKETS = 2048


def tickets(groups: list[list[int]]) -> list[list[int]]:
    """``groups`` (heaviest first) cut into at most ``MAX_TICKETS`` runs of consecutive groups,
    each run's indices in the order given: what a process takes at a time."""
    per = -(-len(groups) // MAX_TICKETS)
    return [[i for g in groups[k : k + per] for i in g] for k in range(0, len(groups), per)]


# What the analyses of each machine's targets import on first use: imported once before the fork
# instead of once per process, and only what that machine's figures read (a CPU dump never loads
# the GPU emitters: 11-18 ms before the fork on gpt12). Not numpy (nor the TPU tile figures, which
# import it): most GPU and CPU dumps never need it, and where they do, each process importing it
# on an idle CPU costs no more time than one import before the fork (the A100 Pax step: 3.7%
# faster without it).
_PRELOAD_ANY = ("..affine.compose", "..analyses.target_figures", "..analyses.physical_order", "..ops.windows")
PRELOAD = {
    CPU: (*_PRELOAD_ANY, "..analyses.cpu_access"),
    GPU: (*_PRELOAD_ANY, "..analyses.gpu_coalescing", "..analyses.warp_reads", "..analyses.cost.op_profiles"),
    TPU: _PRELOAD_ANY,
}
_PRELOAD_ALL = tuple(dict.fromkeys(name for names in PRELOAD.values() for name in names))  # machine unknown


def preload(machine: str) -> None:
    """Import what the targets of a dump for ``machine`` read (``cpu``, ``gpu``, ``tpu``; for any
    other, what the targets of every machine read)."""
    import importlib

    for name in PRELOAD.get(machine, _PRELOAD_ALL):
        importlib.import_module(name, __package__)


def run_split(
    groups: list[list[int]],
    processes: int,
    analyse_one: AnalyseOne,
    to_send: Callable[[Record, int], Record] | None = None,
    first: Callable[[], None] | None = None,
    machine: str = "",
    after: Callable[[], object] | None = None,
) -> tuple[list[Record], list]:
    """Every target's record, in target order: ``groups`` (heaviest first) analysed by this
    process and ``processes - 1`` forked workers, each taking the next group whenever it is free
    (a pipe of tickets, written before the fork: a process that dies loses only what it took).
    ``to_send(record, k)``: what process ``k`` (0 this one, 1, 2, ... the workers) makes of each
    record as it is made (writes its JSON text to a file of its own, say). ``first()``: what this
    process does alone before it takes a group (what the module's totals add for the instructions
    no target costs); the workers take more groups meanwhile. A worker's groups that never come
    back are analysed here afterwards. ``machine``: the dump's (``preload``). ``after()``: what
    each worker says once its groups are done (what it found as it read the module's deferred
    bodies: ``hlo.deferred``), given back beside the records, one per worker that ended well."""
    import pickle  # here: a module too small to split never needs it

    preload(machine)
    runs = tickets(groups)
    read_end, write_end = os.pipe()
    os.write(write_end, b"".join(k.to_bytes(2, "little") for k in range(len(runs))))
    os.close(write_end)  # all written: a process finds the pipe empty when every ticket is taken

    def take(k: int) -> list[Record]:
        made: list[Record] = []
        while ticket := os.read(read_end, 2):
            for i in runs[int.from_bytes(ticket, "little")]:
                record = analyse_one(i)
                made.append(to_send(record, k) if to_send is not None else record)
        return made

    children: list[tuple[int, int]] = []  # (pid, read end of its records)
    for k in range(1, processes):
        records_read, records_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: its records down the pipe, then gone without cleanup
            code = 1
            try:
                os.close(records_read)
                made = take(k)
                data = pickle.dumps((made, after() if after is not None else None), pickle.HIGHEST_PROTOCOL)
                with os.fdopen(records_write, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)  # never the parent's exit handlers, buffers or stdout
        os.close(records_write)
        children.append((pid, records_read))
    try:
        if first is not None:
            first()
        records = take(0)
    finally:
        os.close(read_end)
    said = []
    for pid, records_read in children:
        with os.fdopen(records_read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            with contextlib.suppress(Exception):  # a truncated stream: its groups are analysed below
                made, says = pickle.loads(data)
                records.extend(made)
                said.append(says)
    done = {r[0] for r in records}
    for i in sorted(i for g in groups for i in g if i not in done):  # a failed worker's, done here
        record = analyse_one(i)
        records.append(to_send(record, 0) if to_send is not None else record)
    records.sort(key=lambda r: r[0])
    return records, said


def spill_files(count: int) -> list:
    """One unnamed temporary file per process (this one first), for its targets' JSON text; none
    where there is no place for them (the reports then come back whole)."""
    try:
        return [_unnamed_file() for _ in range(count)]
    except OSError:
        return []


def _unnamed_file():
    """An unnamed file in the temporary directory, made as ``tempfile.TemporaryFile`` makes it on
    Linux (``O_TMPFILE``), without importing ``tempfile`` (with ``shutil``, ``bz2``, ``lzma`` and
    ``random``: 5-10 ms before the fork); ``tempfile`` where the system or the directory has no
    unnamed files. On disk, not in memory: the text of a big module's targets can be large."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag:
        named = (os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP"))
        directory = next((d for d in named if d and os.path.isdir(d)), "/tmp")
        with contextlib.suppress(OSError):
            return os.fdopen(os.open(directory, flag | os.O_RDWR, 0o600), "w+b", buffering=0)
    import tempfile

    return tempfile.TemporaryFile()


def spilled(target: TargetReport, encode: Callable[[TargetReport], str], worker: int, file) -> TargetReport:
    """In process ``worker`` (0: this one): ``target``'s JSON text appended to ``file``, and the
    header of the target that says where."""
    data = memoryview(encode(target).encode())
    fd = file.fileno()
    offset = os.lseek(fd, 0, os.SEEK_END)
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    t = target
    return TargetReport(
        t.kind, t.name, t.opcode, t.computation, t.fusion_kind, [], encoded=EncodedElsewhere(worker, offset, len(data))
    )


def plan(selected: list[SelectedTarget], options: dict | None, workers: int) -> tuple[list[list[int]], int] | None:
    """The targets' groups, heaviest first (each group's indices in the module's order), and how
    many processes share them (this one included): ``run_split``'s arguments. None: too little
    work to share out, or one process asked or usable."""
    workers = usable_workers(workers)
    if workers <= 1 or (options or {}).get("fusion_candidate"):
        return None
    groups: dict[object, tuple[int, list[int]]] = {}
    total = 0
    for i, item in enumerate(selected):
        key, work = _group(item, i)
        hit = groups.get(key)
        if hit is None:
            groups[key] = (work, [i])
            total += work
        else:
            hit[1].append(i)
            groups[key] = (hit[0] + REPEAT_WORK, hit[1])
            total += REPEAT_WORK
    if total < MIN_WORK_TO_SPLIT or len(groups) < 2:
        return None
    ordered = [indices for work, indices in sorted(groups.values(), key=lambda g: -g[0])]
    return ordered, min(workers, len(ordered))


def _group(item: SelectedTarget, index: int) -> tuple[object, int]:
    """The group a target is analysed in and its estimated work (``estimated_work``).
    Fusions of one fused computation structure share more than their twins (its composed maps,
    its emitter's thread maps), so they must be one group: a group is an outline of the structure
    that equal structures share (``_outline``); any other target is a group alone."""
    target = item.target
    if isinstance(target, Computation):
        return ("alone", index), estimated_work(_size(target))
    callee = callee_of(target)
    size = _size(callee) if callee is not None else 1
    comp = target.fused_computation if item.kind == "fusion" else None
    if comp is None:
        return ("alone", index), estimated_work(size)
    return _outline(target, comp, size if comp is callee else None), estimated_work(size)


def _size(comp: Computation) -> int:
    """``comp``'s instruction count, from its text's lines where its body may be unread
    (``hlo.deferred``: the same count, which ``read_body`` makes sure of)."""
    bodies = comp.module.deferred if comp.module is not None else None
    lines = bodies.lines_of(comp) if bodies is not None else None
    return len(comp.instructions) if lines is None else lines


def _outline(fusion, comp: Computation, size: int | None = None) -> tuple:
    """What every fusion of one structure has in common and a quick look at each fusion reads:
    its fused computation's opcodes in order (where bodies are read on first use, its instruction
    count: no body is read here), and its result's and operands' shapes. Equal structures
    (``structure_keys.fusion_shape_key``) have equal outlines; the structures themselves (a walk
    over every fused instruction, most of the analysis's fingerprinting) are then computed by the
    processes that analyse them, not all here before the fork. Two structures with one outline
    share a group: analysed by one process, no less exactly. ``size``: ``_size(comp)`` where the
    caller has it."""
    deferred = comp.module is not None and comp.module.deferred is not None
    if deferred and size is None:
        size = _size(comp)
    return (
        size if deferred else tuple(map(_OPCODE, comp.instructions)),
        shape_token(fusion.shape),
        tuple([shape_token(o.shape) for o in fusion.operands]),
    )
