"""Coalescing verdicts on hand-made fusions, from their composed maps and operand layouts."""

from hlo_index.analyses import operand_report
from hlo_index.analyses.coalescing import operand_coalescing
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text


def fusion_module(param_shape, body, out_shape):
    return parse_module_text(f"""HloModule m
fused {{
  p0 = {param_shape} parameter(0)
  {body}
}}
ENTRY e {{
  a = {param_shape} parameter(0)
  ROOT f = {out_shape} fusion(a), kind=kLoop, calls=fused
}}
""")


def coalescing_of(param_shape, body, out_shape):
    module = fusion_module(param_shape, body, out_shape)
    fusion = module.entry.root
    row = output_to_input(fusion)[0]
    return operand_coalescing(row.maps, fusion.operands[0].shape, fusion.shape)


def test_row_major_read_is_contiguous():
    c = coalescing_of("f32[64,256]{1,0}", "ROOT n = f32[64,256]{1,0} negate(p0)", "f32[64,256]{1,0}")
    assert c.verdict == "coalesced" and c.per_map[0].pattern == "contiguous"
    assert c.per_map[0].transactions == 1 == c.per_map[0].ideal_transactions


def test_transpose_is_strided_and_uncoalesced():
    c = coalescing_of(
        "f32[256,64]{1,0}", "ROOT t = f32[64,256]{1,0} transpose(p0), dimensions={1,0}", "f32[64,256]{1,0}"
    )
    assert c.verdict == "uncoalesced"
    assert (c.per_map[0].pattern, c.per_map[0].stride) == ("strided", 64)
    assert c.per_map[0].transactions == 32


def test_transpose_with_matching_layout_is_contiguous():
    # the operand's layout {0,1} makes the transposed read walk memory in order
    c = coalescing_of(
        "f32[256,64]{0,1}", "ROOT t = f32[64,256]{1,0} transpose(p0), dimensions={1,0}", "f32[64,256]{1,0}"
    )
    assert c.verdict == "coalesced" and c.per_map[0].pattern == "contiguous"


def test_broadcast_is_stride_zero():
    c = coalescing_of("f32[64]{0}", "ROOT b = f32[64,256]{1,0} broadcast(p0), dimensions={0}", "f32[64,256]{1,0}")
    assert c.verdict == "coalesced" and c.per_map[0].pattern == "broadcast"


def test_strided_slice():
    c = coalescing_of(
        "f32[64,1024]{1,0}", "ROOT s = f32[64,256]{1,0} slice(p0), slice={[0:64], [0:1024:4]}", "f32[64,256]{1,0}"
    )
    assert (c.per_map[0].pattern, c.per_map[0].stride) == ("strided", 4)
    assert c.verdict == "uncoalesced" and c.per_map[0].transactions == 4


def test_tiled_layout_changes_the_stride():
    # rows of a T(8,128) tile are 128 elements apart; walking the minor dim stays in one tile row
    c = coalescing_of("f32[64,256]{1,0:T(8,128)}", "ROOT n = f32[64,256]{1,0} negate(p0)", "f32[64,256]{1,0}")
    assert c.verdict == "coalesced" and c.per_map[0].pattern == "contiguous"
    t = coalescing_of(
        "f32[256,64]{1,0:T(8,128)}", "ROOT t = f32[64,256]{1,0} transpose(p0), dimensions={1,0}", "f32[64,256]{1,0}"
    )
    # consecutive output elements walk operand dim 0: 128 elements apart inside a tile
    assert t.verdict == "uncoalesced" and t.per_map[0].pattern in ("strided", "scattered")


def test_operand_report_is_json_ready():
    module = fusion_module("bf16[64,256]{1,0}", "ROOT n = bf16[64,256]{1,0} negate(p0)", "bf16[64,256]{1,0}")
    fusion = module.entry.root
    row = output_to_input(fusion)[0]
    report = operand_report(row.maps, fusion.operands[0].shape, fusion.shape)
    import json

    json.dumps(report)
    assert report["utilization"]["distinct_elements"] == 64 * 256
    assert report["utilization"]["bytes_read"] == 64 * 256 * 2
    assert report["coalescing"]["verdict"] == "coalesced"


def test_scalar_operand_and_output():
    # a scalar fusion reading a scalar: one element, every thread the same (broadcast)
    from hlo_index.affine import parse_map
    from hlo_index.hlo.build import array_shape

    report = operand_report([parse_map("() -> ()")], array_shape("s32", ()), array_shape("s32", ()))
    assert report["utilization"]["distinct_elements"] == 1 == report["utilization"]["element_reads"]
    assert report["coalescing"]["verdict"] == "coalesced"
    assert report["coalescing"]["maps"][0]["pattern"] == "broadcast"


def test_the_emitters_name_only_xla_opcodes():
    """The opcode sets the emitter plans test against are spelled as XLA spells opcodes."""
    from hlo_index.analyses import emitters
    from hlo_index.hlo.opcodes import OPCODE_TRAITS

    for name in ("_ELEMENTWISE_UNARY_PASS", "_PREVENTS_VECTORIZATION"):
        unknown = set(getattr(emitters, name)) - set(OPCODE_TRAITS)
        assert not unknown, (name, unknown)
