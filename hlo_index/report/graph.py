"""A module as graphs of instructions: nodes, layers, edges and subgraphs, as plain data.

The shape Model Explorer draws (``render.model_explorer`` writes it), decided here from the HLO model:

* one graph per computation that is not a fusion body: the ENTRY first, then the bodies of
  ``call`` / ``while`` / ``conditional`` / async ops and the ``to_apply`` regions of reduces,
  sorts, scatters and collectives, each reached from its callers through ``subgraphs``;
* a fusion is a *layer*: the ops of its fused computation sit in the namespace named after the
  fusion instruction (nested fusions nest their namespaces), and the fusion instruction itself
  is pinned to the top of its own layer, so the layer, collapsed, has the fusion's edges. A fused
  computation called by more than one fusion (XLA clones them, so only hand-written HLO does
  this) is a graph of its own instead, reached through ``subgraphs``;
* every instruction of the module is exactly one node, in exactly one graph;
* every operand is one edge into its user, ``target_input`` the operand's position; an edge out
  of a ``get-tuple-element`` leaves its operand's output numbered by the tuple index, any other
  edge leaves output 0.

Node ids are instruction names (XLA makes them unique in a module); a name seen twice in one
graph keeps the first and gets ``@computation`` on the others. ``node_of`` maps every
(computation, instruction) name pair to its (graph id, node id), which is how per-node figures
find their node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo.model import Computation, Instruction, Module
from ..hlo.printer import format_instruction

# Longer instruction texts (huge inline literals, shape lists) are cut in the node's attributes.
HLO_TEXT_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class GraphEdge:
    source: str  # node id of the operand
    source_output: str  # the operand's output: its tuple index through get-tuple-element, else "0"
    target_input: str  # the operand's position in its user


@dataclass(slots=True)
class GraphNode:
    id: str
    label: str  # the instruction name (XLA's names mostly say the opcode)
    namespace: str  # "" at top level; "fusion.3" inside that fusion's layer
    attrs: list[tuple[str, str]]
    edges: list[GraphEdge]
    outputs: list[tuple[str, str]]  # (output id, shape text), one per tuple element
    inputs: list[tuple[str, str]]  # (input id, operand name)
    subgraphs: list[str] = field(default_factory=list)
    pinned: bool = False  # a fusion at the top of its own layer


@dataclass(slots=True)
class ComputationGraph:
    id: str
    computation: str
    nodes: list[GraphNode] = field(default_factory=list)
    layers: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # namespace -> attributes


@dataclass(slots=True)
class ModuleGraphs:
    module: str
    source: str
    graphs: list[ComputationGraph]
    node_of: dict[tuple[str, str], tuple[str, str]]  # (computation, instruction) -> (graph id, node id)
    instructions: int  # instructions in the module

    @property
    def nodes(self) -> int:
        return sum(len(g.nodes) for g in self.graphs)

    @property
    def edges(self) -> int:
        return sum(len(n.edges) for g in self.graphs for n in g.nodes)


def _inlined_bodies(module: Module) -> dict[int, Instruction]:
    """id(fused computation) -> its only calling fusion; bodies called by several fusions are left out."""
    callers: dict[int, list[Instruction]] = {}
    for comp in module.computations:
        for instr in comp.instructions:
            body = instr.fused_computation
            if body is not None:
                callers.setdefault(id(body), []).append(instr)
    return {key: found[0] for key, found in callers.items() if len(found) == 1}


def _source(module: Module, instr: Instruction) -> str:
    loc = module.source_location(instr)
    if loc is None:
        return ""
    text = f"{loc.file}:{loc.line}" if loc.line else loc.file
    return f"{text} ({loc.function})" if loc.function else text


def _attrs(module: Module, instr: Instruction, comp: Computation) -> list[tuple[str, str]]:
    text = format_instruction(instr)
    if len(text) > HLO_TEXT_LIMIT:
        text = text[:HLO_TEXT_LIMIT] + " ..."
    attrs = [
        ("name", instr.name),
        ("opcode", instr.opcode),
        ("shape", str(instr.shape)),
        ("computation", comp.name),
        ("line", str(instr.line)),
        ("hlo", text),
    ]
    if instr.opcode == "fusion" and instr.attr("kind"):
        attrs.append(("fusion_kind", str(instr.attr("kind"))))
    if instr.metadata is not None and instr.metadata.op_name:
        attrs.append(("op_name", instr.metadata.op_name))
    source = _source(module, instr)
    if source:
        attrs.append(("source", source))
    return attrs


def _outputs(instr: Instruction) -> list[tuple[str, str]]:
    shape = instr.shape
    if shape.tuple_shapes is None:
        return [("0", str(shape))]
    return [(str(i), str(s)) for i, s in enumerate(shape.tuple_shapes)]


def graph_id_prefixes(modules: list[Module]) -> list[str]:
    """Graph-id prefixes for several modules written into one file: none for a single module,
    else the module name (``#2``, ``#3`` ... on repeated names) and a slash."""
    if len(modules) <= 1:
        return [""] * len(modules)
    seen: dict[str, int] = {}
    out = []
    for m in modules:
        seen[m.name] = seen.get(m.name, 0) + 1
        out.append(f"{m.name}#{seen[m.name]}/" if seen[m.name] > 1 else f"{m.name}/")
    return out


def module_graphs(module: Module, prefix: str = "") -> ModuleGraphs:
    """The graphs of ``module`` (graph ids are ``prefix`` + computation name)."""
    inlined = _inlined_bodies(module)
    roots = [c for c in module.computations if id(c) not in inlined]
    roots.sort(key=lambda c: not c.is_entry)  # the ENTRY first, the others in text order
    graph_ids = {id(c): prefix + c.name for c in roots}
    node_of: dict[tuple[str, str], tuple[str, str]] = {}
    graphs = []
    for comp in roots:
        graph = ComputationGraph(graph_ids[id(comp)], comp.name)
        used: set[str] = set()
        ids: dict[int, str] = {}
        _add_computation(module, comp, "", graph, used, ids, inlined, graph_ids, node_of)
        graphs.append(graph)
    count = sum(len(c.instructions) for c in module.computations)
    return ModuleGraphs(module.name, module.source, graphs, node_of, count)


def _add_computation(
    module: Module,
    comp: Computation,
    namespace: str,
    graph: ComputationGraph,
    used: set,
    ids: dict,
    inlined: dict,
    graph_ids: dict,
    node_of: dict,
) -> None:
    for instr in comp.instructions:
        node_id = instr.name if instr.name not in used else f"{instr.name}@{comp.name}"
        used.add(node_id)
        ids[id(instr)] = node_id
        node_of[(comp.name, instr.name)] = (graph.id, node_id)
    for instr in comp.instructions:
        body = instr.fused_computation
        own_layer = body is not None and inlined.get(id(body)) is instr
        inner = (f"{namespace}/{instr.name}" if namespace else instr.name) if own_layer else namespace
        edges = [
            GraphEdge(
                ids.get(id(o), o.name),
                str(instr.attr("index", 0)) if instr.opcode == "get-tuple-element" else "0",
                str(k),
            )
            for k, o in enumerate(instr.operands)
        ]
        subgraphs = [
            graph_ids[id(c)]
            for role, c in instr.called.items()
            if id(c) in graph_ids and not (own_layer and role == "calls")
        ]
        graph.nodes.append(
            GraphNode(
                ids[id(instr)],
                instr.name,
                inner,
                _attrs(module, instr, comp),
                edges,
                _outputs(instr),
                [(str(k), o.name) for k, o in enumerate(instr.operands)],
                list(dict.fromkeys(subgraphs)),
                pinned=own_layer,
            )
        )
        if own_layer and body is not None:
            graph.layers[inner] = [
                ("fusion", instr.name),
                ("calls", body.name),
                ("fusion_kind", str(instr.attr("kind") or "")),
                ("shape", str(instr.shape)),
                ("line", str(instr.line)),
            ]
            _add_computation(module, body, inner, graph, used, ids, inlined, graph_ids, node_of)


def fused_parameter(
    module: Module, computation: str | None, name: str, kind: str, operand: int
) -> tuple[str, str] | None:
    """(computation, instruction) names of the parameter that stands for operand ``operand`` of a
    target: the fused parameter of a fusion, the parameter itself of a computation target."""
    if kind == "computation":
        comp = module.by_name.get(name)
    else:
        owner = module.by_name.get(computation or "")
        instr = owner.by_name.get(name) if owner is not None else None
        comp = instr.called.get("calls") if instr is not None else None
    if comp is None:
        return None
    param = comp.parameters.get(operand)
    return (comp.name, param.name) if param is not None else None
