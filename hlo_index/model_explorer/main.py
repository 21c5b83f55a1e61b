"""The adapter Model Explorer finds for HLO text files (``.txt``, ``.hlo``, and ``.gz`` dumps).

Model Explorer matches a file to an adapter by the last dot-separated part of its name only, so a
``module.after_optimizations.txt`` is offered to this adapter through ``txt`` and a gzipped dump
through ``gz``. The graphs are those of ``hlo-index graph`` (``report.graph``), as the package's
own ``Graph`` objects.
"""

from __future__ import annotations

from dacite import from_dict
from model_explorer import Adapter, AdapterMetadata, ModelExplorerGraphs, graph_builder

from ..hlo import load
from ..hlo.diagnostics import format_diagnostic
from ..render.model_explorer import graph_document
from ..report.graph import graph_id_prefixes, module_graphs


class HloTextAdapter(Adapter):
    """XLA HLO text (``*.after_optimizations.txt`` and other dumps) as Model Explorer graphs."""

    metadata = AdapterMetadata(
        id="hlo_index_hlo_text",
        name="XLA HLO text (hlo-index)",
        description="XLA HLO text dumps: one graph per computation, each fusion a layer of its fused ops.",
        source_repo="https://pypi.org/project/hlo-index/",
        fileExts=["txt", "hlo", "gz"],
    )

    def __init__(self):
        super().__init__()

    def convert(self, model_path: str, settings: dict) -> ModelExplorerGraphs:
        results = load(model_path)
        failed = [d for r in results if r.module is None for d in r.diagnostics]
        if failed:
            # The server shows an exception's text to the user as the conversion error.
            raise ValueError("\n".join(format_diagnostic(d) for d in failed[:5]))
        modules = [r.module for r in results if r.module is not None]  # all of them: none failed
        graphs = [module_graphs(m, p) for m, p in zip(modules, graph_id_prefixes(modules))]
        document = graph_document(graphs, model_path)
        return {"graphs": [from_dict(graph_builder.Graph, g) for g in document["graphs"]]}
