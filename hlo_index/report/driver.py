"""Load inputs and produce module reports, in this process or in worker processes.

Shared by ``analyze`` and ``check``. Returns data only; the commands render and pick exit codes.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace

from .model import DiagnosticReport, ModuleReport, TargetReport


@dataclass(frozen=True, slots=True)
class AnalyzeOptions:
    """What ``analyze_path`` reports on: the direction, the targets, verification, extensions."""

    direction: str = "out2in"
    fusion: str | tuple[str, ...] | None = None  # names or globs
    computation: str | None = None
    instruction: str | None = None
    verify: bool = False
    verify_samples: int = 8
    seed: int | None = None  # --verify: base of the sampling seeds (None: 0)
    fusions_only: bool = False  # check: never fall back to the ENTRY computation
    # worker processes also encode each report with this (a module-level function, so it pickles):
    # the parent then only copies text out; ``encode(report, out)`` writes the text to ``out``
    encode: Callable[..., str] | None = None
    # where worker processes write the encoded text, as they make it, for the parent to read back
    # (a module of ~10^6 rows has ~10^8 bytes of it: made whole and sent down a pipe, it cost the
    # worker several times that in memory); None: sent back whole
    spill_dir: str | None = None
    # processes sharing one module's targets (``build.module_report``'s ``workers``; 0: auto), and
    # what makes the function each of them encodes its targets with (as ``encode``: the JSON
    # document only)
    target_workers: int = 1
    target_encoder: Callable[[], Callable[[TargetReport], str]] | None = None
    extra: dict = field(default_factory=dict)  # flags for registered report extensions


def _unreadable(path: str, message: str, diagnostics=()) -> ModuleReport:
    report = ModuleReport(os.path.basename(path.rstrip("/")) or path, path, unreadable=True)
    report.diagnostics = [
        DiagnosticReport(d.severity, d.message, d.line, d.column, d.path or path, d.source_line) for d in diagnostics
    ]
    if not report.diagnostics:
        report.diagnostics.append(DiagnosticReport("error", message, path=path))
    return report


def _results_of(path: str, defer_bodies: bool = False):
    """(module or None, source, diagnostics, error message) for every module the loader finds,
    a file at a time (``defer_bodies``: see ``hlo.loader.parse_checked``)."""
    from ..hlo import iter_load

    for r in iter_load(path, defer_bodies):
        yield _result(r)


def _result(r):
    message = r.diagnostics[0].message if r.diagnostics else "could not be loaded"
    return r.module, r.path, list(r.diagnostics), message


def analyze_path(
    path: str, options: AnalyzeOptions, on_target: Callable[[ModuleReport], None] | None = None
) -> list[ModuleReport]:
    """Reports for every module in ``path``; unreadable inputs become reports flagged ``unreadable``."""
    return list(iter_path_reports(path, options, on_target))


def iter_path_reports(
    path: str, options: AnalyzeOptions, on_target: Callable[[ModuleReport], None] | None = None
) -> Iterator[ModuleReport]:
    """``analyze_path``'s reports, each as soon as it is made: a directory's modules are handed on
    one by one, as files named one by one are (their text, each module's cost line after it, is
    then the same), and the next file is read after."""
    from ..hlo.deferred import DeferredBodyProblem

    for module, source, diags, message in _results_of(path, _defers_bodies(options)):
        if module is None:
            yield _unreadable(source, message, diags)
            continue
        if not module.source:
            module.source = source
        if not has_named_target(module, options):
            # Not an error here: the command says so once if no module has it.
            yield ModuleReport(module.name, module.source, missing_target=True)
            continue
        try:
            report = _module_report(module, options, on_target)
        except DeferredBodyProblem:  # not as a whole read gives it: read whole, as without deferring
            from ..hlo.loader import parse_checked

            (again,) = parse_checked(module.deferred.read_again(), source)
            module, source, diags, message = _result(again)
            if module is None:
                yield _unreadable(source, message, diags)
                continue
            report = _module_report(module, options, on_target)
        yield report


def _defers_bodies(options: AnalyzeOptions) -> bool:
    """Whether a big module's bodies may be read by the processes that analyse them
    (``hlo.deferred``): where its targets are all its fusions, shared among processes."""
    if options.target_workers == 1 or options.verify or options.fusions_only or options.extra.get("fusion_candidate"):
        return False
    if options.fusion or options.computation or options.instruction:
        return False
    from .split_targets import usable_workers

    return usable_workers(options.target_workers) > 1


def _module_report(module, options: AnalyzeOptions, on_target) -> ModuleReport:
    from .build import module_report

    return module_report(
        module,
        options.direction,
        options.fusion,
        options.computation,
        options.instruction,
        options.extra,
        on_target,
        verify=options.verify,
        verify_samples=options.verify_samples,
        seed=options.seed,
        fusions_only=options.fusions_only,
        workers=options.target_workers,
        target_encoder=options.target_encoder,
    )


def has_named_target(module, options: AnalyzeOptions) -> bool:
    """Whether the fusion patterns / computation / instruction the options name exist in ``module``."""
    from ..api import _bare, _find_instruction, matching_fusions

    if options.fusion:
        return bool(matching_fusions(module, options.fusion))
    if options.computation:
        return _bare(options.computation) in module.by_name
    if options.instruction:
        return _find_instruction(module, _bare(options.instruction)) is not None
    return True


def _collect_if_paused() -> None:
    """With the collector paused (the CLI does), free one file's cyclic garbage before the next."""
    if not gc.isenabled():
        gc.collect()


def _worker(args: tuple[str, AnalyzeOptions]) -> list[ModuleReport]:
    path, options = args
    reports = analyze_path(path, options)
    if options.encode is not None:
        # Encoded here, in parallel, instead of one after the other in the parent; the parent
        # then needs the text and the module's status only, so the targets are not sent back
        # (pickling them cost ~0.2 s of CPU on each side for a 20 MB document).
        reports = [_encoded(r, options.encode, options.spill_dir) for r in reports]
    _collect_if_paused()
    return reports


def _encoded(report: ModuleReport, encode: Callable[..., str], directory: str | None) -> ModuleReport:
    """What a worker sends back of ``report``: its status, and its text or the file holding it."""
    head = ModuleReport(report.name, report.source, [], report.diagnostics, report.unreadable, report.missing_target)
    if directory is None:
        head.json_text = encode(report)
        return head
    import tempfile

    fd, head.json_path = tempfile.mkstemp(suffix=".json", dir=directory)
    with open(fd, "w", encoding="utf-8") as out:
        encode(report, out)
    return head


def _opened(reports: list[ModuleReport]) -> list[ModuleReport]:
    """The files workers wrote their texts to, opened for the writer to copy out and unnamed at
    once (gone when closed, or with this process)."""
    for r in reports:
        if r.json_path is not None:
            r.json_file = open(r.json_path, "rb")  # noqa: SIM115  (closed by its writer)
            with suppress(OSError):  # a system that keeps an open file's name: removed at the end
                os.unlink(r.json_path)
            r.json_path = None
    return reports


def _indexed_worker(item: tuple[int, tuple[str, AnalyzeOptions]]) -> tuple[int, list[ModuleReport]]:
    return item[0], _worker(item[1])


def _size_of(path: str) -> int:
    """The text size of a file: for gzip, the uncompressed size its trailer records (mod 2**32),
    so that work is handed out by how much there is to parse, not by how well it compressed."""
    try:
        if path.endswith(".gz"):
            with open(path, "rb") as f:
                f.seek(-4, os.SEEK_END)
                return int.from_bytes(f.read(4), "little")
        return os.path.getsize(path)
    except OSError:
        return 0


def iter_reports(
    paths: list[str],
    options: AnalyzeOptions,
    jobs: int = 1,
    on_file: Callable[[str], None] | None = None,
    on_target: Callable[[ModuleReport], None] | None = None,
) -> Iterator[list[ModuleReport]]:
    """The reports of ``paths``, in the order given, as soon as they (and those before) are ready:
    in this process, a module at a time; from worker processes, a path at a time.

    With ``jobs`` > 1 and several paths, files go to worker processes, largest first; ``-``
    (stdin, which workers cannot read) is analysed here meanwhile. With one path, ``jobs``
    processes share each big module's targets (``build.module_report``'s ``workers``).
    ``jobs`` 0 (``--jobs auto``): files one after another, each big module's targets shared
    among this process and the CPUs idle besides it (``plan_files`` says when files are shared
    out instead).
    """
    with _imports_frozen():
        if jobs > 1 and len(paths) > 1:
            yield from _iter_parallel(paths, options, jobs, on_file)
            return
        if jobs != 1:  # 0 (auto): as many as there are idle CPUs (``split_targets.usable_workers``)
            options = replace(options, target_workers=jobs)
        for i, path in enumerate(paths):
            if i:
                _collect_if_paused()
            for report in iter_path_reports(path, options, on_target):
                yield [report]
            if on_file is not None:
                on_file(path)


# Under ``--jobs auto``, the largest of several files is analysed alone (its targets shared
# among the processes) rather than whole by one of them beside the others, where it holds more
# than this share of all their text: the others are then too little to keep a second process busy.
ALONE_SHARE = 0.9


def share_files(sizes: list[int]) -> bool:
    """Whether files whose texts have ``sizes`` (bytes) are better shared out whole among worker
    processes than analysed one after another, each big module's targets shared (``ALONE_SHARE``)."""
    total = sum(sizes)
    return len(sizes) > 1 and max(sizes) <= ALONE_SHARE * total


def plan_files(paths: list[str], jobs: int) -> tuple[list[str], int]:
    """The paths to read and ``iter_reports``' ``jobs`` for ``--jobs`` ``jobs``: with more than one
    process, a directory's files are shared out like files given one by one; ``--jobs auto`` (0)
    does so with the CPUs idle besides this process where ``share_files`` says so, and otherwise
    keeps to one process, a big module's targets shared."""
    if jobs == 1:
        return paths, 1
    files = expand_paths(paths)
    if jobs > 1:
        return files, jobs
    if len(files) > 1:
        from .split_targets import usable_workers

        processes = usable_workers(0)
        if processes > 1 and share_files([_size_of(p) if p != "-" else 0 for p in files]):
            return files, processes
    return paths, 0


@contextmanager
def _imports_frozen():
    """With the collector paused (the CLI), move what is alive before the first file (imported
    modules, grammar tables) out of the collector's sight (``gc.freeze``): the collection between
    files then scans only what the files left, not ~10^5 import-time objects each time (3 s over the
    89 corpus files), and forked workers leave those pages shared."""
    if gc.isenabled():
        yield
        return
    from . import build  # noqa: F401  (the analysis modules: imported now, frozen with the rest)

    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _iter_parallel(paths, options, jobs, on_file) -> Iterator[list[ModuleReport]]:
    import multiprocessing

    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    files = [i for i, p in enumerate(paths) if p != "-"]
    # Largest files first, so one big module does not start last and leave a worker idle.
    order = sorted(files, key=lambda i: -_size_of(paths[i]))
    done: dict[int, list[ModuleReport]] = {}
    spill_dir = None
    if options.encode is not None and files:
        import tempfile

        spill_dir = tempfile.mkdtemp(prefix="hlo-index-")
    sent = replace(options, spill_dir=spill_dir)
    try:
        with ctx.Pool(max(1, min(jobs, len(files)))) as pool:
            results = pool.imap_unordered(_indexed_worker, [(i, (paths[i], sent)) for i in order], chunksize=1)
            for i, path in enumerate(paths):
                if path == "-":
                    reports = analyze_path(path, options)
                else:
                    while i not in done:
                        k, got = next(results)
                        done[k] = got
                    reports = _opened(done.pop(i))
                if on_file is not None:
                    on_file(path)
                yield reports
    finally:
        if spill_dir is not None:
            import shutil

            shutil.rmtree(spill_dir, ignore_errors=True)  # what a failed worker left


def analyze_paths(
    paths: list[str],
    options: AnalyzeOptions,
    jobs: int = 1,
    on_file: Callable[[str], None] | None = None,
    on_target: Callable[[ModuleReport], None] | None = None,
) -> list[ModuleReport]:
    """Reports for every path, in the order given (workers when ``jobs`` > 1 and several paths)."""
    return [r for reports in iter_reports(paths, options, jobs, on_file, on_target) for r in reports]


def expand_paths(paths: list[str]) -> list[str]:
    """Directories become their HLO files (sorted), so worker processes can share them out."""
    from ..hlo import hlo_files_in

    out = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            out.extend(hlo_files_in(p) or [p])
        else:
            out.append(p)
    return out
