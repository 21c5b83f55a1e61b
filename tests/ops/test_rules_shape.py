"""Broadcast, transpose, reverse, slice, pad, concatenate, iota/constant/parameter: rules vs the
numpy reference on random shapes, plus the spec's printed examples."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo.build import array_shape, instruction
from hlo_index.hlo.model import PadDim, SliceDim
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text
from .strategies import dims_strategy, permutation

SETTINGS = settings(deadline=None, derandomize=True, max_examples=40)


def f32(*dims):
    return array_shape("f32", dims)


def check_all(instr):
    check_out2in(instr)
    for i in range(len(instr.operands)):
        check_in2out(instr, i)


# ---- randomized checks against the reference ------------------------------------------------


@SETTINGS
@given(st.data())
def test_broadcast_matches_reference(data):
    operand = data.draw(dims_strategy(0, 3))
    extra = data.draw(dims_strategy(0, 4 - len(operand)))
    rank = len(operand) + len(extra)
    positions = data.draw(st.permutations(list(range(rank))))[: len(operand)]
    out = [0] * rank
    for size, p in zip(operand, positions):
        out[p] = size
    rest = iter(extra)
    out = [o if k in positions else next(rest) for k, o in enumerate(out)]
    check_all(instruction("broadcast", f32(*out), [f32(*operand)], dimensions=tuple(positions)))


@SETTINGS
@given(st.data())
def test_transpose_matches_reference(data):
    dims = data.draw(dims_strategy(1, 4))
    perm = data.draw(permutation(len(dims)))
    check_all(instruction("transpose", f32(*[dims[p] for p in perm]), [f32(*dims)], dimensions=perm))


@SETTINGS
@given(st.data())
def test_reverse_matches_reference(data):
    dims = data.draw(dims_strategy(0, 4))
    flipped = tuple(sorted(data.draw(st.sets(st.integers(0, max(len(dims) - 1, 0)))) & set(range(len(dims)))))
    check_all(instruction("reverse", f32(*dims), [f32(*dims)], dimensions=flipped))


@SETTINGS
@given(st.data())
def test_slice_matches_reference(data):
    dims = data.draw(dims_strategy(1, 3, max_size=9))
    config, out = [], []
    for n in dims:
        start = data.draw(st.integers(0, n - 1))
        limit = data.draw(st.integers(start + 1, n))
        stride = data.draw(st.integers(1, 4))
        config.append(SliceDim(start, limit, stride))
        out.append((limit - start + stride - 1) // stride)
    check_all(instruction("slice", f32(*out), [f32(*dims)], slice=tuple(config)))


@SETTINGS
@given(st.data())
def test_pad_matches_reference(data):
    dims = data.draw(dims_strategy(1, 3, max_size=4, min_size=0))
    config, out = [], []
    for n in dims:
        interior = data.draw(st.integers(0, 2))
        dilated = n + (n - 1) * interior if n else 0
        low = data.draw(st.integers(-3, 3))
        high = data.draw(st.integers(max(-3, 1 - dilated - low), 3))
        config.append(PadDim(low, high, interior))
        out.append(low + dilated + high)
    check_all(instruction("pad", f32(*out), [f32(*dims), f32()], padding=tuple(config)))


@SETTINGS
@given(st.data())
def test_concatenate_matches_reference(data):
    base = list(data.draw(dims_strategy(1, 3)))
    axis = data.draw(st.integers(0, len(base) - 1))
    sizes = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(lambda s: sum(s) > 0))
    operands = [f32(*[s if k == axis else n for k, n in enumerate(base)]) for s in sizes]
    out = f32(*[sum(sizes) if k == axis else n for k, n in enumerate(base)])
    check_all(instruction("concatenate", out, operands, dimensions=(axis,)))


def test_operandless_producers():
    for opcode in ("iota", "constant", "parameter"):
        instr = instruction(opcode, f32(2, 4), iota_dimension=1)
        assert output_to_input(instr) == []
    ((m,),) = input_to_output(instruction("iota", f32(2, 4), iota_dimension=1), 0)
    assert_map_text(m, "()[s0, s1] -> (s0, s1) domain: s0 in [0, 1] s1 in [0, 3]")
    ((p,),) = input_to_output(instruction("parameter", f32(2, 4)), 0)
    assert_map_text(p, "(d0, d1) -> (d0, d1) domain: d0 in [0, 1] d1 in [0, 3]")


# ---- the spec's examples --------------------------------------------------------------------


def test_spec_broadcast():
    bc = instruction("broadcast", f32(10, 20, 30), [f32(20)], dimensions=(1,))
    assert_map_text(
        output_to_input(bc)[0].maps[0], "(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"
    )
    assert_map_text(
        input_to_output(bc, 0)[0][0], "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]"
    )


def test_spec_iota():
    iota = instruction("iota", f32(2, 4), iota_dimension=1)
    assert output_to_input(iota) == []
    assert_map_text(input_to_output(iota, 0)[0][0], "()[s0, s1] -> (s0, s1) domain: s0 in [0, 1] s1 in [0, 3]")


def test_spec_transpose():
    t = instruction("transpose", f32(3, 6, 128, 12288), [f32(3, 12288, 6, 128)], dimensions=(0, 2, 3, 1))
    assert_map_text(
        output_to_input(t)[0].maps[0],
        "(d0, d1, d2, d3) -> (d0, d3, d1, d2), domain: d0 in [0, 2], d1 in [0, 5], d2 in [0, 127], d3 in [0, 12287],",
    )
    assert_map_text(
        input_to_output(t, 0)[0][0],
        "(d0, d1, d2, d3) -> (d0, d2, d3, d1), domain: d0 in [0, 2], d1 in [0, 12287], d2 in [0, 5], d3 in [0, 127]",
    )


def test_spec_reverse():
    r = instruction("reverse", f32(1, 17, 9, 9), [f32(1, 17, 9, 9)], dimensions=(1, 2))
    text = (
        "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], "
        "d2 in [0, 8], d3 in [0, 8]"
    )
    assert_map_text(output_to_input(r)[0].maps[0], text)
    assert_map_text(input_to_output(r, 0)[0][0], text)


def test_spec_slice():
    s = instruction(
        "slice", f32(5, 3, 25), [f32(10, 20, 50)], slice=(SliceDim(5, 10, 1), SliceDim(3, 20, 7), SliceDim(0, 50, 2))
    )
    assert_map_text(
        output_to_input(s)[0].maps[0],
        "(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2), domain: d0 in [0, 4], d1 in [0, 2], d2 in [0, 24]",
    )
    assert_map_text(
        input_to_output(s, 0)[0][0],
        "(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2), "
        "domain: d0 in [5, 9], d1 in [3, 17], d2 in [0, 48], (d1 - 3) mod 7 in [0, 0], d2 mod 2 in [0, 0]",
        exact_text=False,
    )  # canonical form: (d1 + 4) floordiv 7 - 1


def test_spec_concatenate():
    c = instruction("concatenate", f32(2, 33, 7), [f32(2, 5, 7), f32(2, 11, 7), f32(2, 17, 7)], dimensions=(1,))
    out2in = output_to_input(c)
    assert_map_text(out2in[0].maps[0], "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]")
    assert_map_text(
        out2in[1].maps[0], "(d0, d1, d2) -> (d0, d1 - 5, d2), domain: d0 in [0, 1], d1 in [5, 15], d2 in [0, 6]"
    )
    assert_map_text(
        out2in[2].maps[0], "(d0, d1, d2) -> (d0, d1 - 16, d2), domain: d0 in [0, 1], d1 in [16, 32], d2 in [0, 6]"
    )
    assert_map_text(
        input_to_output(c, 0)[0][0], "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]"
    )
    assert_map_text(
        input_to_output(c, 1)[0][0],
        "(d0, d1, d2) -> (d0, d1 + 5, d2), domain: d0 in [0, 1], d1 in [0, 10], d2 in [0, 6]",
    )
    assert_map_text(
        input_to_output(c, 2)[0][0],
        "(d0, d1, d2) -> (d0, d1 + 16, d2), domain: d0 in [0, 1], d1 in [0, 16], d2 in [0, 6]",
    )


def test_spec_pad():
    p = instruction("pad", f32(12, 16), [f32(4, 4), f32()], padding=(PadDim(1, 4, 1), PadDim(4, 8, 0)))
    operand, value = output_to_input(p)
    assert_map_text(
        operand.maps[0],
        "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]",
        exact_text=False,
    )  # canonical: (d0 + 1) floordiv 2 - 1
    # The spec prints one full-domain map for the padding value; ours is exact: the padding
    # positions only, as a union. Check it covers precisely the complement of operand 0's reads.
    check_out2in(p)
    assert len(value.maps) == 5  # d0 < 1, d0 > 7, d0 in a hole, d1 < 4, d1 > 7
    assert all(m.num_results == 0 for m in value.maps)
