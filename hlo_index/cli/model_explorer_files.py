"""Model Explorer files from HLO paths: the graph file (``graph``) and the node data (``analyze``).

Shared by both commands so that graph ids and node ids agree: both number the modules of
PATH... the same way (``report.graph.graph_id_prefixes``).
"""

from __future__ import annotations

import os
import sys

import click

EXIT_OK, EXIT_UNREADABLE = 0, 2


def load_modules(paths) -> tuple[list, bool]:
    """Every readable module of ``paths`` (diagnostics of the others on stderr), and whether one was not."""
    from ..hlo import load
    from ..hlo.diagnostics import format_diagnostic

    modules, failed = [], False
    for path in paths:
        for result in load(path):
            for d in result.diagnostics:
                if d.severity == "error" or result.module is None:
                    click.echo(format_diagnostic(d), err=True)
            if result.module is None:
                failed = True
                continue
            if not result.module.source:
                result.module.source = result.path
            modules.append(result.module)
    return modules, failed


def collection_label(paths) -> str:
    names = [os.path.basename(p.rstrip("/")) or p for p in paths]
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"


def write_graph_file(paths, output: str | None) -> int:
    from ..render.model_explorer import write_graph
    from ..report.graph import graph_id_prefixes, module_graphs

    modules, failed = load_modules(paths)
    graphs = [module_graphs(m, p) for m, p in zip(modules, graph_id_prefixes(modules))]
    if not _write(output, lambda out: write_graph(graphs, collection_label(paths), out)):
        return EXIT_UNREADABLE
    return EXIT_UNREADABLE if failed or not modules else EXIT_OK


def analysed_module(module, fusion, target: str):
    """``analyze``'s report of ``module`` with its per-operand figures, in the current analysis context."""
    from ..report.build import module_report

    return module_report(module, fusion=fusion, options={"analyses": True, "target": target}, own_context=False)


def write_node_data_files(paths, prefix: str | None, fusion, target: str) -> int:
    """``PREFIX.<figure>.json`` for every figure some module has; without a prefix, bytes read on stdout."""
    from ..context import current
    from ..render.model_explorer import write_node_data
    from ..report.graph import graph_id_prefixes, module_graphs
    from ..report.node_figures import NodeFigures, add_module_figures

    modules, failed = load_modules(paths)
    figures = NodeFigures()
    for module, graph_prefix in zip(modules, graph_id_prefixes(modules)):
        graphs = module_graphs(module, graph_prefix)
        with current().child():
            report = analysed_module(module, fusion, target)
            add_module_figures(figures, module, graphs, report)
        for d in report.diagnostics:
            if d.severity == "error":
                click.echo(f"{d.path or module.source}:{d.line}:{d.column}: error: {d.message}", err=True)
                failed = True
    if prefix is None:
        if not _write(None, lambda out: write_node_data(figures, "bytes-read", out)):
            return EXIT_UNREADABLE
    else:
        for figure in figures.figures():
            path = f"{prefix}.{figure}.json"
            if not _write(path, lambda out, f=figure: write_node_data(figures, f, out)):
                return EXIT_UNREADABLE
            click.echo(f"wrote {path}", err=True)
    return EXIT_UNREADABLE if failed or not modules else EXIT_OK


def _write(path: str | None, write) -> bool:
    if path is None or path == "-":
        write(sys.stdout)
        sys.stdout.flush()
        return True
    try:
        with open(path, "w", encoding="utf-8") as out:
            write(out)
    except OSError as exc:
        click.echo(f"{path}: error: cannot write: {exc.strerror}", err=True)
        return False
    return True
