"""``analyze``'s per-operand figures: utilization, coalescing and ``--physical`` maps.

Values are checked against brute force: every output point's read set (``IndexingMap.read_set``
of the printed maps) for utilization, and the independent numpy layout model
(``reference.ref_layout.reference_offsets``) for physical offsets.
"""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner

from hlo_index.affine import parse_map
from hlo_index.analyses import operand_report
from hlo_index.analyses.gpu_coalescing import fusion_coalescing, operand_json
from hlo_index.cli import main
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text
from hlo_index.reference.ref_layout import reference_offsets

CONTRACT_KEYS = {"operand", "operand_name", "operand_shape", "output", "maps", "deduplicated"}

# A transpose and a reduce reading operands with tiled and permuted layouts, plus a
# concatenate reading one operand through two maps.
TILED = """HloModule tiled

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused_transpose {
  p0 = f32[6,10]{1,0:T(2,4)} parameter(0)
  ROOT t = f32[10,6]{1,0} transpose(p0), dimensions={1,0}
}

fused_reduce {
  p0 = f32[4,8]{0,1:T(2,2)} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4]{0} reduce(p0, z), dimensions={1}, to_apply=add
}

fused_concat {
  p0 = f32[3,5]{1,0} parameter(0)
  sl = f32[3,2]{1,0} slice(p0), slice={[0:3], [1:3]}
  ROOT c = f32[3,7]{1,0} concatenate(p0, sl), dimensions={1}
}

ENTRY main {
  a = f32[6,10]{1,0:T(2,4)} parameter(0)
  b = f32[4,8]{0,1:T(2,2)} parameter(1)
  c = f32[3,5]{1,0} parameter(2)
  f1 = f32[10,6]{1,0} fusion(a), kind=kLoop, calls=fused_transpose
  f2 = f32[4]{0} fusion(b), kind=kInput, calls=fused_reduce
  f3 = f32[3,7]{1,0} fusion(c), kind=kLoop, calls=fused_concat
  ROOT t = (f32[10,6]{1,0}, f32[4]{0}, f32[3,7]{1,0}) tuple(f1, f2, f3)
}
"""


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


@pytest.fixture
def tiled_path(tmp_path):
    path = tmp_path / "tiled.hlo"
    path.write_text(TILED)
    return str(path)


def _analyze_json(runner, path, *flags):
    result = runner.invoke(main, ["analyze", path, "--format", "json", *flags])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    return {t["name"]: t for t in doc["modules"][0]["targets"]}


def _points(m):
    return itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims])


def _brute_utilization(map_texts, dims):
    seen, reads = set(), 0
    for text in map_texts:
        m = parse_map(text)
        for point in _points(m):
            got = m.read_set(point)
            seen |= got
            reads += len(got) if not m.range_vars else _range_reads(m, point)
    return seen, reads


def _range_reads(m, point):
    # every feasible range-variable value is one element read (a reduce reads each input once)
    count = 0
    for s in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.range_vars]):
        probe = [type(m)(m.dims, m.range_vars, (), [e], ()).evaluate(point, s)[0] for e, _ in m.constraints]
        count += all(iv.lo <= v <= iv.hi for v, (_, iv) in zip(probe, m.constraints))
    return count


def test_json_adds_utilization_and_coalescing_per_operand(runner, tiled_path):
    targets = _analyze_json(runner, tiled_path)
    module = parse_module_text(TILED)
    assert set(targets) == {"f1", "f2", "f3"}
    for name, t in targets.items():
        fusion = next(f for f in module.fusions if f.name == name)
        for entry, row in zip(t["output_to_input"], output_to_input(fusion)):
            # the contract keys are untouched; the figures are the only additions
            assert set(entry) == CONTRACT_KEYS | {"utilization", "coalescing"}
            u, c = entry["utilization"], entry["coalescing"]
            for key in ("distinct_elements", "total_elements", "element_reads", "bytes_read", "total_bytes"):
                assert isinstance(u[key], int), key
            assert isinstance(u["fraction"], float) and isinstance(u["exact"], bool)
            assert isinstance(u["summary"], str) and isinstance(c["summary"], str)
            assert c["verdict"] in ("coalesced", "uncoalesced", "unknown")
            assert all(m["pattern"] in ("contiguous", "strided", "broadcast", "scattered", "none") for m in c["maps"])
            # the same figures as the library call ...
            expected = operand_report(row.maps, fusion.operands[row.operand].shape, fusion.shape)
            assert {k: v for k, v in u.items() if k != "summary"} == expected["utilization"]
            # coalescing is the target's: this dump has a kInput fusion, so XLA's GPU emitters
            assert c["target"] == "gpu"
            assert c == operand_json(fusion_coalescing(fusion), row.operand, minor_output_dim=c["minor_output_dim"])
            # ... and the library's numbers are the brute-force ones
            dims = fusion.operands[row.operand].shape.dims
            seen, reads = _brute_utilization([m["map"] for m in entry["maps"]], dims)
            assert u["distinct_elements"] == len(seen)
            assert u["element_reads"] == reads
            assert u["fraction"] == pytest.approx(len(seen) / u["total_elements"])
            assert u["bytes_read"] == 4 * len(seen)


def test_known_values_of_the_small_fusions(runner, tiled_path):
    targets = _analyze_json(runner, tiled_path)
    transpose = targets["f1"]["output_to_input"][0]
    assert transpose["utilization"]["distinct_elements"] == 60
    assert transpose["utilization"]["multiplicity"] == 1.0
    reduce = targets["f2"]["output_to_input"][0]
    assert reduce["utilization"]["element_reads"] == 32
    concat = targets["f3"]["output_to_input"][0]
    assert len(concat["maps"]) == 2
    assert concat["utilization"]["distinct_elements"] == 15
    assert concat["utilization"]["element_reads"] == 21  # 15 through the copy, 6 through the slice


def test_no_analyses_leaves_the_contract_alone(runner, tiled_path):
    targets = _analyze_json(runner, tiled_path, "--no-analyses")
    for t in targets.values():
        for entry in t["output_to_input"]:
            assert set(entry) == CONTRACT_KEYS


def test_input_to_output_entries_get_no_figures(runner, tiled_path):
    targets = _analyze_json(runner, tiled_path, "--direction", "in2out")
    for t in targets.values():
        for entry in t["input_to_output"]:
            assert set(entry) == CONTRACT_KEYS


def test_text_shows_one_line_each_under_the_operand(runner, tiled_path):
    result = runner.invoke(main, ["analyze", tiled_path, "--fusion", "f1", "--color", "never"])
    assert result.exit_code == 0
    lines = [line.strip("│ ").strip() for line in result.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("output 0 → operand 0"))
    block = lines[start : start + 8]
    assert any(line.startswith("utilization: 60/60 elements (100.0%), 240 bytes, 1.00 reads/element") for line in block)
    assert any(line.startswith("coalescing: ") for line in block)


@pytest.mark.parametrize("fusion_name", ["f1", "f2", "f3"])
def test_physical_maps_give_the_reference_offsets_of_the_read_set(runner, tiled_path, fusion_name):
    targets = _analyze_json(runner, tiled_path, "--physical", "--no-analyses")
    module = parse_module_text(TILED)
    fusion = next(f for f in module.fusions if f.name == fusion_name)
    checked = 0
    for entry in targets[fusion_name]["output_to_input"]:
        assert set(entry) == CONTRACT_KEYS | {"physical_maps"}
        shape = fusion.operands[entry["operand"]].shape
        offsets = reference_offsets(shape)
        assert len(entry["physical_maps"]) == len(entry["maps"])
        for logical, physical in zip(entry["maps"], entry["physical_maps"]):
            lm, pm = parse_map(logical["map"]), parse_map(physical["map"])
            assert pm.num_results == 1 and pm.dims == lm.dims
            for point in _points(lm):
                want = {(int(offsets[idx]),) for idx in lm.read_set(point)}
                assert pm.read_set(point) == want, (point, logical["map"], physical["map"])
                checked += 1
    assert checked > 0


def test_physical_maps_in_text(runner, tiled_path):
    result = runner.invoke(main, ["analyze", tiled_path, "--fusion", "f1", "--physical", "--color", "never"])
    assert result.exit_code == 0
    assert "physical maps:" in result.stdout


# A horizontally fused loop fusion: output 0 reads operand 0 only, output 1 operand 1 only
# (the backend_config makes it a GPU dump).
HORIZONTAL = """HloModule horizontal

fused_pair {
  p0 = f32[64,128]{1,0} parameter(0)
  p1 = f32[64,128]{1,0} parameter(1)
  n0 = f32[64,128]{1,0} negate(p0)
  n1 = f32[64,128]{1,0} negate(p1)
  ROOT t = (f32[64,128]{1,0}, f32[64,128]{1,0}) tuple(n0, n1)
}

ENTRY e {
  a = f32[64,128]{1,0} parameter(0)
  b = f32[64,128]{1,0} parameter(1)
  ROOT f = (f32[64,128]{1,0}, f32[64,128]{1,0}) fusion(a, b), kind=kLoop, calls=fused_pair,
    backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],"fusion_backend_config":{"kind":"__loop"}}
}
"""


def test_text_gives_a_gpu_verdict_only_where_the_output_reads_the_operand(runner, tmp_path):
    """A GPU verdict is the operand's over the fusion; on an output that reads none of the
    operand it would describe reads that output never makes."""
    path = tmp_path / "horizontal.hlo"
    path.write_text(HORIZONTAL)
    result = runner.invoke(main, ["analyze", str(path), "--color", "never"])
    assert result.exit_code == 0, result.output
    assert "target: gpu" in result.stdout
    lines = [line.strip("│ ").strip() for line in result.stdout.splitlines()]
    blocks: dict[str, list[str]] = {}
    for line in lines:
        if line.startswith("output "):
            current = blocks.setdefault(line.split("  ")[0], [line])
        elif blocks and line.split(":")[0] in ("utilization", "coalescing"):
            current.append(line)
    for read, unread in (
        ("output 0 → operand 0", "output 0 → operand 1"),
        ("output 1 → operand 1", "output 1 → operand 0"),
    ):
        assert any(line.startswith("coalescing: ") and line.endswith("coalesced") for line in blocks[read])
        assert blocks[unread][0].endswith("no maps (not read)")
        assert not any(line.startswith("coalescing: ") for line in blocks[unread])


@pytest.mark.parametrize(
    "file_name, args",
    [
        ("module_0001.jit_f.sm_9.0_gpu_after_optimizations.txt", ()),  # the capability in the name
        ("module_0001.jit_f.gfx950_gpu_after_optimizations.txt", ()),  # ROCm: 64-thread warps
        ("horizontal.hlo", ("--device", "a100_pcie_80")),  # the user's device
        ("horizontal.hlo", ()),  # nothing said: XLA's test device
    ],
)
def test_coalescing_is_judged_on_the_device_the_cost_is_estimated_for(runner, tmp_path, file_name, args):
    from hlo_index.analyses.gpu_devices import NAMED_DEVICES, RTX_A6000

    path = tmp_path / file_name
    path.write_text(HORIZONTAL)
    targets = _analyze_json(runner, str(path), *args)
    fusion = parse_module_text(HORIZONTAL).fusions[0]
    target = targets["f"]
    spec = NAMED_DEVICES[target["cost"]["device"]]
    device = RTX_A6000 if spec is NAMED_DEVICES["rtx_a6000"] else spec.emitter_device()
    if file_name.startswith("horizontal") and not args:
        assert device is RTX_A6000
    else:
        assert device is not RTX_A6000
    for entry in target["output_to_input"]:
        c = entry["coalescing"]
        assert c["device"] == device.name
        assert c == operand_json(
            fusion_coalescing(fusion, device), entry["operand"], device, minor_output_dim=c["minor_output_dim"]
        )
