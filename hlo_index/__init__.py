"""hlo-index: XLA's indexing analysis for HLO text, outside XLA.

    import hlo_index
    [module] = hlo_index.load("jit_f.after_optimizations.hlo.txt")
    fusion = module.fusions[0]
    for row in hlo_index.output_to_input(fusion):      # also: a computation, any instruction
        print(row.operand, row.output, [str(m) for m in row.maps], row.deduplicated)

Caches and budgets belong to an analysis context (``hlo_index.context``):
``with hlo_index.Session() as s: ...`` scopes them; plain calls use the thread's default context.

Names are resolved lazily so that ``import hlo_index`` (and the CLI's startup) stays cheap.
"""

from __future__ import annotations

_API = {
    "load",
    "output_to_input",
    "input_to_output",
    "select_targets",
    "SelectedTarget",
    "TargetNotFound",
    "OperandIndexing",
    "Session",
    "Budgets",
    "AnalysisContext",
}

__all__ = [
    "AnalysisContext",
    "Budgets",
    "OperandIndexing",
    "SelectedTarget",
    "Session",
    "TargetNotFound",
    "__version__",
    "input_to_output",
    "load",
    "output_to_input",
    "select_targets",
]


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name == "__version__":  # from the installed distribution's metadata, the one source of truth
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("hlo-index")
        except PackageNotFoundError:
            return "0+unknown"
    raise AttributeError(f"module 'hlo_index' has no attribute {name!r}")
