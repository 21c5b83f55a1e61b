"""``stats``' report: modules, computations, instructions, fusions by kind, opcode histogram."""

from __future__ import annotations

from collections import Counter


def module_stats(module) -> dict:
    """Counts of one module, as plain data (the JSON output and the table are made from this)."""
    opcodes = Counter(i.opcode for i in module.instructions)
    kinds = Counter(str(f.attrs.get("kind", "")) for f in module.fusions)
    return {
        "module": module.name,
        "computations": len(module.computations),
        "instructions": sum(len(c.instructions) for c in module.computations),
        "fusions": sum(kinds.values()),
        "fusion_kinds": dict(sorted(kinds.items())),
        "opcodes": dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def stats_of(path: str) -> tuple[list[dict], list[str], bool]:
    """(stats of each module, formatted diagnostics, whether some module failed) for one path."""
    from ..hlo import format_diagnostic, load

    results: list[dict] = []
    messages: list[str] = []
    failed = False
    for loaded in load(path):
        messages.extend(format_diagnostic(d) for d in loaded.diagnostics)
        if loaded.module is None:
            failed = True
            continue
        results.append({"path": loaded.path, **module_stats(loaded.module)})
    return results, messages, failed


def stats_of_paths(paths: list[str], jobs: int):
    """``stats_of`` for every path in order; with ``jobs`` > 1 files go to worker processes (stdin here)."""
    if jobs > 1 and len(paths) > 1:
        import multiprocessing
        import os

        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        files = [p for p in paths if p != "-"]
        with ctx.Pool(max(1, min(jobs, len(files)))) as pool:
            results = iter(pool.imap(stats_of, files))
            for path in paths:
                yield stats_of(path) if path == "-" else next(results)
        return
    for path in paths:
        yield stats_of(path)
