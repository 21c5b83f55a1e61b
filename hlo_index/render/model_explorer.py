"""Model Explorer files: the graph JSON its built-in JSON adapter opens, and node-data JSON.

Field names are those of ``model_explorer.graph_builder`` (``Graph``, ``GraphNode``,
``IncomingEdge``, ``KeyValue``, ``MetadataItem``) and ``model_explorer.node_data_builder``
(``GraphNodeData``, ``NodeDataResult``, ``ThresholdItem``, ``GradientItem``); the package itself
is not needed to write them. A graph file is one collection, ``{"label": ..., "graphs": [...]}``;
a node-data file is one series, ``{graph id: {"name", "results": {node id: {"value"}},
"thresholds" | "gradient"}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from ..report.graph import ComputationGraph, GraphNode, ModuleGraphs
from ..report.node_figures import FIGURES, NodeFigures


def _key_values(pairs) -> list[dict]:
    return [{"key": k, "value": v} for k, v in pairs]


def _node(node: GraphNode) -> dict:
    out: dict[str, object] = {
        "id": node.id,
        "label": node.label,
        "namespace": node.namespace,
        "subgraphIds": node.subgraphs,
        "attrs": _key_values(node.attrs),
        "incomingEdges": [
            {"sourceNodeId": e.source, "sourceNodeOutputId": e.source_output, "targetNodeInputId": e.target_input}
            for e in node.edges
        ],
        "outputsMetadata": [{"id": i, "attrs": _key_values([("shape", s)])} for i, s in node.outputs],
        "inputsMetadata": [{"id": i, "attrs": _key_values([("__tensor_tag", name)])} for i, name in node.inputs],
    }
    if node.pinned:
        out["config"] = {"pinToGroupTop": True}
    return out


def _graph(graph: ComputationGraph) -> dict:
    out: dict = {"id": graph.id, "nodes": [_node(n) for n in graph.nodes]}
    if graph.layers:
        out["groupNodeAttributes"] = {ns: dict(attrs) for ns, attrs in graph.layers.items()}
    return out


def graph_document(modules: Iterable[ModuleGraphs], label: str) -> dict:
    """One graph collection holding every module's graphs (ENTRY graphs first within a module)."""
    return {"label": label, "graphs": [_graph(g) for m in modules for g in m.graphs]}


# Compact: a 40,000-instruction dump is tens of megabytes even so. Written with the C encoder a
# node at a time: ``json.dump`` to a stream takes the pure-Python encoder (a GPU training step's
# graph 5.4 s), and one string of the whole takes ~3x its size in memory.
_encode_compact = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_NODES_PER_WRITE = 1024


def write_graph(modules: Iterable[ModuleGraphs], label: str, out: TextIO) -> None:
    """``graph_document``'s text, as ``json.dump`` with compact separators writes it."""
    out.write(f'{{"label":{_encode_compact(label)},"graphs":[')
    separator = ""
    for m in modules:
        for g in m.graphs:
            out.write(f'{separator}{{"id":{_encode_compact(g.id)},"nodes":[')
            nodes = g.nodes
            for start in range(0, len(nodes), _NODES_PER_WRITE):
                chunk = ",".join(_encode_compact(_node(n)) for n in nodes[start : start + _NODES_PER_WRITE])
                out.write(f",{chunk}" if start else chunk)
            out.write("]")
            if g.layers:
                out.write(',"groupNodeAttributes":' + _encode_compact({ns: dict(a) for ns, a in g.layers.items()}))
            out.write("}")
            separator = ","
    out.write("]}\n")


# Verdict levels (``FIGURES[...].levels``: 0 good, 1 unknown, 2 bad) and the bytes-like gradients.
_LEVEL_COLOURS = ("#4caf50", "#bdbdbd", "#e53935")
_GRADIENT = (
    {"stop": 0, "bgColor": "#fff5f0"},
    {"stop": 0.5, "bgColor": "#fb6a4a"},
    {"stop": 1, "bgColor": "#67000d", "textColor": "#ffffff"},
)
_FRACTION_THRESHOLDS = (
    {"value": 0.25, "bgColor": "#e53935"},
    {"value": 0.5, "bgColor": "#fb8c00"},
    {"value": 0.99, "bgColor": "#fdd835"},
    {"value": 1, "bgColor": "#4caf50"},
)


def node_data_document(figures: NodeFigures, figure: str) -> dict:
    """The node data of one figure: per graph id, the values of its nodes and the colours."""
    spec = FIGURES[figure]
    out = {}
    for graph_id, values in figures.values.get(figure, {}).items():
        data: dict = {"name": spec.title, "results": {node: {"value": v} for node, v in values.items()}}
        if spec.levels:
            data["thresholds"] = [{"value": level, "bgColor": _LEVEL_COLOURS[level]} for level in range(3)]
        elif spec.scale == "fraction":
            data["thresholds"] = list(_FRACTION_THRESHOLDS)
        else:
            data["gradient"] = list(_GRADIENT)
        out[graph_id] = data
    return out


def write_node_data(figures: NodeFigures, figure: str, out: TextIO) -> None:
    json.dump(node_data_document(figures, figure), out, indent=1)
    out.write("\n")
