"""Model Explorer graph and node-data files: the structure a viewer needs, checked against the HLO
text itself (instruction lines, operand lists, fused computations), and loaded through the
``ai-edge-model-explorer`` package's own classes where it is installed (skipped otherwise)."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import re
import types
import typing
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo import load_path
from hlo_index.render.model_explorer import graph_document, node_data_document
from hlo_index.report.graph import module_graphs

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
GPT12 = SHARED / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"
PAX = (
    SHARED
    / "field"
    / "gpu"
    / (
        "JAX-Toolbox.nsys-jax.pax_fsdp4_4proc_proc0.module_0040.pjit__wrapped_step_fn."
        "sm_8.0_gpu_after_optimizations.txt.gz"
    )
)
TPU = SHARED / "field" / "tpu" / "hlo-visualizer.v6e-2x2.attention.after_optimizations.hlo"

# A multi-output fusion reading rows 0..3 and rows 2..7 of %p0 (f32[8,16]): together every row,
# 8 * 16 * 4 = 512 bytes (the sum over outputs would say (4 + 6) * 16 * 4 = 640), and
# (4 + 6) * 16 - 8 * 16 = 32 element reads beyond the first. A while loop, a reduce region and
# get-tuple-elements of the fusion's tuple.
SMALL = """HloModule small

%add {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%two_slices {
  %p0 = f32[8,16]{1,0} parameter(0)
  %a = f32[4,16]{1,0} slice(%p0), slice={[0:4], [0:16]}
  %b = f32[6,16]{1,0} slice(%p0), slice={[2:8], [0:16]}
  ROOT %t = (f32[4,16]{1,0}, f32[6,16]{1,0}) tuple(%a, %b)
}

%cond {
  %c = (s32[], f32[8,16]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body {
  %c = (s32[], f32[8,16]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %v = f32[8,16]{1,0} get-tuple-element(%c), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  ROOT %next = (s32[], f32[8,16]{1,0}) tuple(%j, %v)
}

ENTRY %main {
  %in = f32[8,16]{1,0} parameter(0)
  %f = (f32[4,16]{1,0}, f32[6,16]{1,0}) fusion(%in), kind=kLoop, calls=%two_slices
  %first = f32[4,16]{1,0} get-tuple-element(%f), index=0
  %second = f32[6,16]{1,0} get-tuple-element(%f), index=1
  %zero = f32[] constant(0)
  %r = f32[] reduce(%second, %zero), dimensions={0,1}, to_apply=%add
  %z = s32[] constant(0)
  %init = (s32[], f32[8,16]{1,0}) tuple(%z, %in)
  %w = (s32[], f32[8,16]{1,0}) while(%init), condition=%cond, body=%body
  ROOT %out = (f32[4,16]{1,0}, f32[]) tuple(%first, %r)
}
"""

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S")
_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$|^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s*\{\s*$")


# ``X-start`` opcodes of their own; any other ``X-start`` is XLA's async sugar, which XLA's parser
# reads as an ``async-start`` calling a new computation: one parameter per operand and the op.
_OWN_STARTS = {"all-gather-start", "all-reduce-start", "collective-permute-start", "copy-start", "async-start"}
_START = re.compile(r"=\s*.*?\s([a-z][a-z\-]*-start)\(")


def sugared_instructions(text: str) -> int:
    """Instructions XLA's parser adds for the async sugar of ``text``."""
    added = 0
    for line in text.splitlines():
        m = _START.search(line)
        if not m or m.group(1) in _OWN_STARTS:
            continue
        depth, operands, start = 0, 0, m.end()
        for k, ch in enumerate(line[start:]):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    operands += bool(line[start : start + k].strip())
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                operands += 1
        added += operands + 1
    return added


def text_of(path: Path) -> str:
    return gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()


def instruction_lines(text: str) -> dict[str, list[str]]:
    """Computation name -> its instruction names, read off the text (not through the parser)."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if current is None:
            m = _COMPUTATION.match(line)
            if m and not line.lstrip().startswith("HloModule"):
                current = m.group(1) or m.group(2)
                out[current] = []
            continue
        if line.strip() == "}":
            current = None
            continue
        m = _INSTRUCTION.match(line)
        if m:
            out[current].append(m.group(1))
    return out


def graph_of(path: Path) -> dict:
    module = load_path(str(path))[0]
    graphs = module_graphs(module)
    return graph_document([graphs], path.name), module, graphs


@pytest.fixture(scope="module")
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def _nodes(doc: dict) -> dict[tuple[str, str], dict]:
    return {(g["id"], n["id"]): n for g in doc["graphs"] for n in g["nodes"]}


def test_small_module_layers_edges_and_subgraphs(tmp_path):
    path = tmp_path / "small.hlo"
    path.write_text(SMALL)
    doc, _, _ = graph_of(path)
    assert [g["id"] for g in doc["graphs"]] == ["main", "add", "cond", "body"]  # ENTRY first; no fused graph
    main_graph = doc["graphs"][0]
    by_id = {n["id"]: n for n in main_graph["nodes"]}
    # the fusion is a layer holding its fused ops, and sits pinned at its top
    assert {n["id"] for n in main_graph["nodes"] if n["namespace"] == "f"} == {"f", "p0", "a", "b", "t"}
    assert by_id["f"]["config"] == {"pinToGroupTop": True}
    assert main_graph["groupNodeAttributes"]["f"]["calls"] == "two_slices"
    # edges follow operands; a get-tuple-element leaves the tuple's output numbered by its index
    assert by_id["second"]["incomingEdges"] == [
        {"sourceNodeId": "f", "sourceNodeOutputId": "1", "targetNodeInputId": "0"}
    ]
    assert [(e["sourceNodeId"], e["targetNodeInputId"]) for e in by_id["r"]["incomingEdges"]] == [
        ("second", "0"),
        ("zero", "1"),
    ]
    assert [(e["sourceNodeId"], e["sourceNodeOutputId"]) for e in by_id["b"]["incomingEdges"]] == [("p0", "0")]
    # called computations are graphs of their own, reached through subgraphIds
    assert by_id["w"]["subgraphIds"] == ["cond", "body"]
    assert by_id["r"]["subgraphIds"] == ["add"]
    # outputs carry shapes, one per tuple element; attributes carry the HLO line and text
    assert [m["id"] for m in by_id["f"]["outputsMetadata"]] == ["0", "1"]
    assert by_id["f"]["outputsMetadata"][1]["attrs"] == [{"key": "shape", "value": "f32[6,16]{1,0}"}]
    attrs = {a["key"]: a["value"] for a in by_id["r"]["attrs"]}
    assert attrs["opcode"] == "reduce" and attrs["shape"] == "f32[]"
    assert attrs["line"] == str(
        SMALL.splitlines().index("  %r = f32[] reduce(%second, %zero), dimensions={0,1}, to_apply=%add") + 1
    )
    assert attrs["hlo"].startswith("%r = f32[] reduce(%second, %zero)")


def node_data(runner, tmp_path, text: str, stem: str):
    """``analyze --format model-explorer-node-data -o tmp_path/stem`` of ``text``: the path each
    figure's file is written to, by figure name."""
    path = tmp_path / f"{stem}.hlo"
    path.write_text(text)
    result = runner.invoke(
        main, ["analyze", str(path), "--format", "model-explorer-node-data", "-o", str(tmp_path / stem)]
    )
    assert result.exit_code == 0, result.output
    return lambda figure: tmp_path / f"{stem}.{figure}.json"


def test_small_module_node_data_is_over_all_outputs(tmp_path, runner):
    written = node_data(runner, tmp_path, SMALL, "small")
    path = tmp_path / "small.hlo"
    read = json.loads(written("bytes-read").read_text())
    assert read["main"]["results"] == {"p0": {"value": 512}}
    assert read["main"]["gradient"][0]["stop"] == 0 and read["main"]["gradient"][-1]["stop"] == 1
    duplicated = json.loads(written("duplicated-reads").read_text())
    assert duplicated["main"]["results"] == {"p0": {"value": 32}}
    utilization = json.loads(written("utilization").read_text())
    assert utilization["main"]["results"] == {"p0": {"value": 1.0}}
    # without -o: bytes read on standard output
    plain = runner.invoke(main, ["analyze", str(path), "--format", "model-explorer-node-data"])
    assert json.loads(plain.stdout) == read


# Outputs of one fusion reading an operand each: every other column of %a (not contiguous on a
# CPU), and all of %b (vectorisable).
HORIZONTAL_CPU = """HloModule h
fused {
  p0 = f32[64,128]{1,0} parameter(0)
  p1 = f32[64,64]{1,0} parameter(1)
  s = f32[64,64]{1,0} slice(p0), slice={[0:64], [0:128:2]}
  n = f32[64,64]{1,0} negate(p1)
  ROOT r = (f32[64,64]{1,0}, f32[64,64]{1,0}) tuple(s, n)
}
ENTRY e {
  a = f32[64,128]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  ROOT f = (f32[64,64]{1,0}, f32[64,64]{1,0}) fusion(a, b), kind=kLoop, calls=fused
}
"""


def test_a_node_verdict_is_from_the_outputs_that_read_it(tmp_path, runner):
    """The other output's "unread" is no verdict on an operand: %p1's level is its reader's, 0
    (vectorisable), %p0's 2 (not contiguous)."""
    contiguity = json.loads(node_data(runner, tmp_path, HORIZONTAL_CPU, "h")("contiguity").read_text())
    assert contiguity["e"]["results"] == {"p0": {"value": 2}, "p1": {"value": 0}}


# A TPU fusion reading %a as laid out (the output's minor dimension along %a's lanes) and %b
# transposed (along %b's tile rows: sublanes, and across tiles every 8 steps).
TPU_WALKS = """HloModule t
fused {
  p0 = f32[8,128]{1,0:T(8,128)} parameter(0)
  p1 = f32[128,8]{1,0:T(8,128)} parameter(1)
  n = f32[8,128]{1,0:T(8,128)} negate(p0)
  t = f32[8,128]{1,0:T(8,128)} transpose(p1), dimensions={1,0}
  ROOT a = f32[8,128]{1,0:T(8,128)} add(n, t)
}
ENTRY e {
  a = f32[8,128]{1,0:T(8,128)} parameter(0)
  b = f32[128,8]{1,0:T(8,128)} parameter(1)
  ROOT f = f32[8,128]{1,0:T(8,128)} fusion(a, b), kind=kLoop, calls=fused
}
"""


def test_a_tpu_node_carries_its_minor_walk_as_a_level(tmp_path, runner):
    written = node_data(runner, tmp_path, TPU_WALKS, "t")
    walks = json.loads(written("tpu-walk").read_text())
    assert walks["e"]["results"] == {"p0": {"value": 0}, "p1": {"value": 1}}  # lanes; sublanes
    assert not written("coalescing").exists() and not written("contiguity").exists()


def test_a_directory_is_not_a_node_data_prefix(tmp_path, runner):
    # "-o DIR" would write hidden files DIR/.bytes-read.json
    path = tmp_path / "small.hlo"
    path.write_text(SMALL)
    result = runner.invoke(main, ["analyze", str(path), "--format", "model-explorer-node-data", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.output
    assert not list(tmp_path.glob(".*.json"))


@pytest.mark.parametrize("path", [GPT12, PAX, TPU], ids=["gpt12", "pax-gpu", "tpu-attention"])
def test_field_graphs_hold_every_instruction_fusion_and_operand(path):
    if not path.exists():
        pytest.skip(f"{path} not present")
    text = text_of(path)
    doc, module, graphs = graph_of(path)
    nodes = _nodes(doc)
    expected = instruction_lines(text)
    written = {name for names in expected.values() for name in names}
    assert len(nodes) == sum(len(v) for v in expected.values()) + sugared_instructions(text)
    assert {n["id"] for n in nodes.values()} >= written
    # the instructions the sugar adds live in the graphs of the computations it adds
    assert all(graph_id not in expected for graph_id, node_id in nodes if node_id not in written)
    layers: dict[tuple[str, str], list[dict]] = {}
    for (graph_id, _), n in nodes.items():
        layers.setdefault((graph_id, n["namespace"]), []).append(n)
        if n["namespace"].split("/")[-1] == n["id"]:  # a fusion pinned in its own layer
            layers.setdefault((graph_id, n["namespace"].rpartition("/")[0]), []).append(n)
    for comp in module.computations:
        for instr in comp.instructions:
            node = nodes[graphs.node_of[(comp.name, instr.name)]]
            assert node["id"] == instr.name
            # every operand an edge into its user, at the operand's position
            assert [(e["sourceNodeId"], e["targetNodeInputId"]) for e in node["incomingEdges"]] == [
                (o.name, str(k)) for k, o in enumerate(instr.operands)
            ]
            body = instr.fused_computation
            if body is not None:
                # every fusion a layer with its fused ops (nested fusions inside it included)
                layer = node["namespace"]
                assert layer.split("/")[-1] == instr.name
                graph_id = graphs.node_of[(comp.name, instr.name)][0]
                # (a nested fusion sits at the top of its own layer, one level down)
                inside = {n["id"] for n in layers.get((graph_id, layer), ())} - {instr.name}
                assert inside == set(expected[body.name])


def _strict_load(cls, data):
    """``data`` as an instance of the package's dataclass ``cls``: every key must be a field (as
    dacite's strict mode, which the package uses for graphs, but fast enough for 40,000 nodes)."""
    hints = _hints(cls)
    assert isinstance(data, dict) and set(data) <= hints.keys(), (
        f"{cls.__name__} has no field {sorted(set(data) - hints.keys())}"
    )
    return cls(**{k: _typed(hints[k], v) for k, v in data.items()})


@functools.cache
def _hints(cls) -> dict:
    return typing.get_type_hints(cls)


def _typed(hint, value):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _strict_load(hint, value)
    if origin is list:
        assert isinstance(value, list)
        return [_typed(args[0], v) for v in value]
    if origin is dict:
        assert isinstance(value, dict)
        return {k: _typed(args[1], v) for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        if value is None:
            assert type(None) in args
            return value
        for member in args:
            try:
                return _typed(member, value)
            except (AssertionError, TypeError):
                continue
        raise AssertionError((hint, value))
    if origin is typing.Literal:
        assert value in args
        return value
    assert isinstance(value, hint) or (hint is float and isinstance(value, int)), (hint, value)
    return value


@pytest.mark.parametrize("path", [GPT12, PAX, TPU], ids=["gpt12", "pax-gpu", "tpu-attention"])
def test_graphs_load_through_model_explorer_classes(path):
    graph_builder = pytest.importorskip("model_explorer.graph_builder")
    if not path.exists():
        pytest.skip(f"{path} not present")
    doc, _, _ = graph_of(path)
    collection = _strict_load(graph_builder.GraphCollection, doc)
    assert len(collection.graphs) == len(doc["graphs"])
    assert [len(g.nodes) for g in collection.graphs] == [len(g["nodes"]) for g in doc["graphs"]]
    assert sum(len(n.incomingEdges) for g in collection.graphs for n in g.nodes) == sum(
        len(n["incomingEdges"]) for g in doc["graphs"] for n in g["nodes"]
    )
    if path == TPU:  # nothing dropped or renamed on the way (asdict is too slow for the big ones)
        from model_explorer.utils import remove_none

        assert remove_none(dataclasses.asdict(collection))["graphs"] == doc["graphs"]


@pytest.mark.parametrize("path", [GPT12, TPU], ids=["gpt12", "tpu-attention"])
def test_node_data_loads_through_model_explorer_classes(path, tmp_path, runner):
    node_data_builder = pytest.importorskip("model_explorer.node_data_builder")
    if not path.exists():
        pytest.skip(f"{path} not present")
    result = runner.invoke(
        main, ["analyze", str(path), "--format", "model-explorer-node-data", "-o", str(tmp_path / "figures")]
    )
    assert result.exit_code == 0, result.stderr
    doc, _, _ = graph_of(path)
    nodes = _nodes(doc)
    files = sorted(tmp_path.glob("figures.*.json"))
    assert {f.name for f in files} >= {"figures.bytes-read.json", "figures.utilization.json"}
    for f in files:
        for graph_id, data in json.loads(f.read_text()).items():
            loaded = _strict_load(node_data_builder.GraphNodeData, data)
            assert loaded.results and all((graph_id, node) in nodes for node in loaded.results)
            # per-operand figures sit on fused parameters
            assert {_attr(nodes[(graph_id, node)], "opcode") for node in loaded.results} == {"parameter"}


def _attr(node: dict, key: str) -> str:
    return next(a["value"] for a in node["attrs"] if a["key"] == key)


def test_extension_opens_hlo_text_even_when_imported_first(tmp_path):
    pytest.importorskip("model_explorer")
    from model_explorer.extension_manager import ExtensionManager

    import hlo_index.model_explorer.main  # noqa: F401  (imported before the server asks for it)

    path = tmp_path / "small.after_optimizations.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write(SMALL)
    manager = ExtensionManager(["hlo_index.model_explorer"])
    manager.load_extensions()
    ours = [e for e in manager.extensions if e.metadata.id == "hlo_index_hlo_text"]
    assert len(ours) == 1 and set(ours[0].metadata.fileExts) == {"txt", "hlo", "gz"}
    response = manager.run_cmd(
        {
            "cmdId": "convert",
            "extensionId": "hlo_index_hlo_text",
            "modelPath": str(path),
            "settings": {},
            "deleteAfterConversion": False,
        }
    )
    assert [g["id"] for g in response["graphs"]] == ["main", "add", "cond", "body"]
    assert len(response["graphs"][0]["nodes"]) == 14


def test_graph_command_writes_the_file_and_rejects_bad_input(tmp_path, runner):
    good = tmp_path / "small.hlo"
    good.write_text(SMALL)
    out = tmp_path / "small.graph.json"
    result = runner.invoke(main, ["graph", str(good), "--format", "model-explorer", "-o", str(out)])
    assert result.exit_code == 0
    doc = json.loads(out.read_text())
    assert doc["label"] == "small.hlo" and doc["graphs"][0]["id"] == "main"
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule bad\n\nENTRY %e {\n  ROOT %x = f32[] nonsense(\n}\n")
    result = runner.invoke(main, ["graph", str(bad)])
    assert result.exit_code == 2
    assert re.search(r"bad\.hlo:\d+:\d+: error:", result.stderr)


def test_node_data_document_shape():
    from hlo_index.report.node_figures import NodeFigures

    figures = NodeFigures()
    figures.worst("coalescing", ("g", "p0"), 2)
    figures.worst("coalescing", ("g", "p0"), 0)
    doc = node_data_document(figures, "coalescing")
    assert doc["g"]["results"] == {"p0": {"value": 2}}
    assert [t["value"] for t in doc["g"]["thresholds"]] == [0, 1, 2]


def test_written_graph_is_the_document_as_json_writes_it(tmp_path, monkeypatch):
    """``write_graph`` writes node by node (a batch of nodes a write): its text is ``json.dumps``
    of ``graph_document`` with compact separators, layers, pins, several graphs and modules included."""
    import io

    from hlo_index.render import model_explorer
    from hlo_index.render.model_explorer import write_graph

    monkeypatch.setattr(model_explorer, "_NODES_PER_WRITE", 3)  # several batches of the small module's nodes
    path = tmp_path / "small.hlo"
    path.write_text(SMALL)
    _, _, graphs = graph_of(path)
    out = io.StringIO()
    write_graph([graphs, graphs], "two \u00e9", out)
    expected = json.dumps(graph_document([graphs, graphs], "two \u00e9"), separators=(",", ":")) + "\n"
    assert out.getvalue() == expected
    assert '"groupNodeAttributes"' in expected and '"pinToGroupTop"' in expected
