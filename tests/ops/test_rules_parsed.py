"""The spec's examples written as HLO text, parsed, and checked two ways: the printed maps the
spec gives, and the numpy reference element by element."""

from __future__ import annotations

import pytest

from hlo_index.hlo import parse_module_text
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import Runtime, check_in2out, check_out2in
from .spec_text import assert_map_text


def root(body: str, header: str = "HloModule m"):
    module = parse_module_text(f"{header}\nENTRY e {{\n{body}\n}}\n")
    return module.entry.root


def check_both(instr):
    for j in range(instr.shape.num_outputs):
        check_out2in(instr, j)
    for i in range(len(instr.operands)):
        check_in2out(instr, i)


SPEC_CASES = {
    "elementwise": (
        """
  p0 = f32[10, 20] parameter(0)
  p1 = f32[10, 20] parameter(1)
  ROOT output = f32[10, 20] add(p0, p1)""",
        ["(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]"],
        ["(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]"],
    ),
    "broadcast": (
        """
  p0 = f32[20] parameter(0)
  ROOT bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}""",
        ["(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"],
        ["(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]"],
    ),
    "transpose": (
        """
  p0 = f32[3, 12288, 6, 128] parameter(0)
  ROOT transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}""",
        ["(d0, d1, d2, d3) -> (d0, d3, d1, d2), domain: d0 in [0, 2], d1 in [0, 5], d2 in [0, 127], d3 in [0, 12287]"],
        ["(d0, d1, d2, d3) -> (d0, d2, d3, d1), domain: d0 in [0, 2], d1 in [0, 12287], d2 in [0, 5], d3 in [0, 127]"],
    ),
    "reverse": (
        """
  p0 = f32[1, 17, 9, 9] parameter(0)
  ROOT reverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}""",
        [
            "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), "
            "domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]"
        ],
        [
            "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), "
            "domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]"
        ],
    ),
    "collapse": (
        """
  p0 = f32[4,8] parameter(0)
  ROOT reshape = f32[32] reshape(p0)""",
        ["(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]"],
        ["(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]"],
    ),
    "expand": (
        """
  p0 = f32[32] parameter(0)
  ROOT reshape = f32[4, 8] reshape(p0)""",
        ["(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]"],
        ["(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]"],
    ),
    "generic1": (
        """
  p0 = f32[4,8] parameter(0)
  ROOT reshape = f32[2, 4, 4] reshape(p0)""",
        [
            "(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4), "
            "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]"
        ],
        ["(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 7]"],
    ),
    "generic2": (
        """
  p0 = f32[4, 8, 12] parameter(0)
  ROOT reshape = f32[32, 3, 4] reshape(p0)""",
        ["(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2), domain: d0 in [0, 31], d1 in [0, 2], d2 in [0, 3]"],
        ["(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]"],
    ),
    "concatenate": (
        """
  p0 = f32[2, 5, 7] parameter(0)
  p1 = f32[2, 11, 7] parameter(1)
  p2 = f32[2, 17, 7] parameter(2)
  ROOT output = f32[2, 33, 7] concatenate(f32[2, 5, 7] p0, f32[2, 11, 7] p1, f32[2, 17, 7] p2), dimensions={1}""",
        [
            "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]",
            "(d0, d1, d2) -> (d0, d1 - 5, d2), domain: d0 in [0, 1], d1 in [5, 15], d2 in [0, 6]",
            "(d0, d1, d2) -> (d0, d1 - 16, d2), domain: d0 in [0, 1], d1 in [16, 32], d2 in [0, 6]",
        ],
        [
            "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]",
            "(d0, d1, d2) -> (d0, d1 + 5, d2), domain: d0 in [0, 1], d1 in [0, 10], d2 in [0, 6]",
            "(d0, d1, d2) -> (d0, d1 + 16, d2), domain: d0 in [0, 1], d1 in [0, 16], d2 in [0, 6]",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_spec_example_parsed(name):
    body, out2in, in2out = SPEC_CASES[name]
    instr = root(body)
    for om, text in zip(output_to_input(instr), out2in):
        assert_map_text(om.maps[0], text)
    for i, text in enumerate(in2out):
        assert_map_text(input_to_output(instr, i)[0][0], text)
    if instr.shape.num_elements <= 50_000:
        check_both(instr)


def test_slice_and_pad_parsed():
    s = root("""
  p0 = f32[10, 20, 50] parameter(0)
  ROOT slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0), slice={[5:10:1], [3:20:7], [0:50:2]}""")
    assert_map_text(
        output_to_input(s)[0].maps[0],
        "(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2), domain: d0 in [0, 4], d1 in [0, 2], d2 in [0, 24]",
    )
    check_both(s)
    p = root("""
  p0 = f32[4, 4] parameter(0)
  p1 = f32[] parameter(1)
  ROOT pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0""")
    assert_map_text(
        output_to_input(p)[0].maps[0],
        "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]",
        exact_text=False,
    )
    check_both(p)
    negative = root("""
  p0 = f32[6, 5] parameter(0)
  p1 = f32[] parameter(1)
  ROOT pad = f32[9, 4] pad(p0, p1), padding=-2_0_1x1_-2_0""")
    check_both(negative)


def test_layouts_parsed():
    b = root("""
  p0 = f32[2,3,4]{0,2,1} parameter(0)
  ROOT b = f32[3,8]{1,0} bitcast(p0)""")
    check_both(b)
    iota = root("  ROOT iota = f32[2,4] iota(), iota_dimension=1")
    assert output_to_input(iota) == []
    assert_map_text(input_to_output(iota, 0)[0][0], "()[s0, s1] -> (s0, s1), domain: s0 in [0, 1], s1 in [0, 3]")


def test_collectives_parsed():
    body = """
  p0 = f32[8,2] parameter(0)
  ag = f32[32,2] all-gather(p0), replica_groups={{0,1,2,3}}, dimensions={0}
  rs = f32[2,2] reduce-scatter(p0), replica_groups=[1,4]<=[4], dimensions={0}, to_apply=add
  a2a = f32[8,2] all-to-all(p0), replica_groups={}, dimensions={0}
  cp = f32[8,2] collective-permute(p0), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT t = (f32[32,2], f32[2,2], f32[8,2], f32[8,2]) tuple(ag, rs, a2a, cp)"""
    text = (
        "HloModule m, replica_count=4\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nENTRY e {" + body + "\n}\n"
    )
    module = parse_module_text(text)
    for instr in module.entry.instructions[1:-1]:
        for r in range(4):
            check_out2in(instr, 0, Runtime((r,), {"replica": r}))
            check_in2out(instr, 0, Runtime((r,), {"replica": r}))
