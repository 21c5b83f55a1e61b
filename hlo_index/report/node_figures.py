"""hlo-index's per-operand figures as values of graph nodes (``report.graph``'s node ids).

Model Explorer gives a layer no value of its own, only aggregates (sum, min, max, mean) of the
nodes inside it. So an operand's figures go on the node that stands for it inside the layer:
the fused ``parameter`` of a fusion (the parameter itself when a whole computation is analysed),
and a fusion's own figure is its layer's aggregate: the *sum* of its parameters for bytes read
and duplicated reads (exactly the fusion's total), the *max* for a verdict (its worst operand).
The fusion instruction node carries no per-operand value, so a layer's sum counts each operand
once.

A multi-output fusion reads an operand once per output; the operand's bytes read and
utilization are over all outputs, the union of the elements read (``analyses.read_union``),
its duplicated reads the reads of every output less that union, its verdict the worst of its
outputs'.

Figures (one Model Explorer node-data series each, ``FIGURES``):

* ``bytes-read``: bytes of the operand holding an element some output reads;
* ``utilization``: distinct elements read / elements of the operand (0..1);
* ``duplicated-reads``: element reads beyond the first of each element;
* ``coalescing`` (GPU modules) / ``contiguity`` (CPU modules): the verdict as a level,
  0 coalesced or contiguous, 1 unknown, 2 uncoalesced or not contiguous;
* ``tpu-walk`` (TPU modules): how the output's minor dimension walks the operand's tiles
  (``analyses.tpu_tiles``) as a level, 0 along lanes (or one element throughout), 1 along
  sublanes, mixed or unknown, 2 across tiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..hlo.model import Module
from .graph import ModuleGraphs, fused_parameter


@dataclass(frozen=True, slots=True)
class FigureSpec:
    title: str
    scale: str  # bytes | fraction | count | level
    levels: bool = False  # values are verdict levels 0 good, 1 unknown, 2 bad


FIGURES = {
    "bytes-read": FigureSpec("hlo-index bytes read", "bytes"),
    "utilization": FigureSpec("hlo-index distinct elements read / elements", "fraction"),
    "duplicated-reads": FigureSpec("hlo-index element reads beyond the first", "count"),
    "coalescing": FigureSpec("hlo-index GPU coalescing (0 coalesced, 1 unknown, 2 uncoalesced)", "level", True),
    "contiguity": FigureSpec("hlo-index CPU contiguity (0 contiguous, 1 unknown, 2 not contiguous)", "level", True),
    "tpu-walk": FigureSpec(
        "hlo-index TPU minor walk (0 lanes, 1 sublanes, mixed or unknown, 2 across tiles)", "level", True
    ),
}

# a verdict's level: GPU coalescing, CPU contiguity (``analyses.cpu_access``); any other is unknown
_LEVELS = {"coalesced": 0, "vectorisable": 0, "uncoalesced": 2, "not contiguous": 2}
_TPU_LEVELS = {"lanes": 0, "invariant": 0, "across tiles": 2}  # any other walk: 1


@dataclass(slots=True)
class NodeFigures:
    # figure -> graph id -> node id -> value
    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def put(self, figure: str, graph_node: tuple[str, str], value) -> None:
        graph_id, node_id = graph_node
        self.values.setdefault(figure, {}).setdefault(graph_id, {})[node_id] = value

    def add(self, figure: str, graph_node: tuple[str, str], value) -> None:
        nodes = self.values.setdefault(figure, {}).setdefault(graph_node[0], {})
        nodes[graph_node[1]] = nodes.get(graph_node[1], 0) + value

    def worst(self, figure: str, graph_node: tuple[str, str], value: int) -> None:
        nodes = self.values.setdefault(figure, {}).setdefault(graph_node[0], {})
        nodes[graph_node[1]] = max(nodes.get(graph_node[1], 0), value)

    def figures(self) -> list[str]:
        return [name for name in FIGURES if self.values.get(name)]


@dataclass(slots=True)
class _Operand:
    """What the rows of one operand (or one element of a tuple operand) say, over the outputs."""

    rows: list = field(default_factory=list)
    reads: int | None = 0


def _target_object(module: Module, t) -> Any:
    if t.kind == "computation":
        return module.by_name.get(t.name)
    owner = module.by_name.get(t.computation or "")
    return owner.by_name.get(t.name) if owner is not None else None


def _union(module: Module, t, key: tuple[int, int], entries: list) -> dict | None:
    """The operand's utilization over all outputs of a multi-output target, from its maps."""
    from ..analyses.read_union import union_utilization
    from ..api import operand_info
    from ..fusion import output_to_input

    target = _target_object(module, t)
    if target is None:
        return None
    rows = output_to_input(target)  # memoised by the fusion package: the report's own rows
    if len(rows) != len(t.output_to_input):
        return None
    wanted = {id(e) for e in entries}
    maps = [row.maps for row, e in zip(rows, t.output_to_input) if id(e) in wanted]
    info = operand_info(target)
    shape = info[key[0]][1] if key[0] < len(info) else None
    if shape is None:
        return None
    if shape.is_tuple:
        shape = shape.leaf(key[1])
    return union_utilization(maps, shape).to_json()


def add_module_figures(figures: NodeFigures, module: Module, graphs: ModuleGraphs, report) -> None:
    """Put the figures of every target of ``report`` (``analyze``'s module report of ``module``,
    with the per-operand analyses) on the nodes of ``graphs``. Multi-output unions are computed
    here, in the caller's analysis context (the one the report was made in shares its maps)."""
    for t in report.targets:
        if t.kind not in ("fusion", "computation"):
            continue
        by_operand: dict[tuple[int, int], list] = {}
        for entry in t.output_to_input:
            by_operand.setdefault((entry.operand, entry.extra.get("operand_element", 0)), []).append(entry)
        for key, entries in by_operand.items():
            names = fused_parameter(module, t.computation, t.name, t.kind, key[0])
            node = graphs.node_of.get(names) if names is not None else None
            if node is None:
                continue
            _put_operand(figures, module, t, key, entries, node)


def _put_operand(figures: NodeFigures, module: Module, t, key, entries: list, node) -> None:
    read = [e for e in entries if e.maps]
    utils = [e.extra.get("utilization") for e in read]
    if read and all(u is not None for u in utils):
        reads = [u.get("element_reads") for u in utils]
        union = utils[0] if len(read) == 1 else _union(module, t, key, read)
        if union is not None and union.get("bytes_read") is not None:
            figures.add("bytes-read", node, union["bytes_read"])
            if union.get("distinct_elements") is not None and union.get("total_elements"):
                figures.put("utilization", node, union["distinct_elements"] / union["total_elements"])
            if all(r is not None for r in reads) and union.get("distinct_elements") is not None:
                figures.add("duplicated-reads", node, max(sum(reads) - union["distinct_elements"], 0))
    for e in entries:
        if e.reads_nothing:
            continue
        c = e.extra.get("coalescing")
        if c:
            figure = "contiguity" if c.get("target") == "cpu" else "coalescing"
            figures.worst(figure, node, _LEVELS.get(c.get("verdict", ""), 1))
        tpu = e.extra.get("tpu")
        if tpu:
            figures.worst("tpu-walk", node, _TPU_LEVELS.get(tpu.get("verdict", ""), 1))
