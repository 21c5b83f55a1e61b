"""reduce (variadic), reduce-window (strides, padding, dilations), select-and-scatter: rules
vs the numpy reference on random shapes and windows, plus the spec's printed examples."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.hlo.model import WindowDim
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text
from .strategies import dims_strategy

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)


def f32(*dims):
    return array_shape("f32", dims)


def check_all(instr, sample=400):
    for j in range(instr.shape.num_outputs):
        check_out2in(instr, j, sample=sample)
    for i in range(len(instr.operands)):
        check_in2out(instr, i, sample=sample)


def window_output_size(n: int, wd: WindowDim) -> int:
    padded = (n - 1) * wd.base_dilation + 1 + wd.pad_low + wd.pad_high
    span = (wd.size - 1) * wd.window_dilation + 1
    return (padded - span) // wd.stride + 1 if padded >= span else 0


@st.composite
def window_axis(draw, allow_base_dilation=True):
    """(input size, window dim) with at least one output element."""
    while True:
        n = draw(st.integers(1, 6))
        wd = WindowDim(
            size=draw(st.integers(1, 3)),
            stride=draw(st.integers(1, 3)),
            pad_low=draw(st.integers(-1, 2)),
            pad_high=draw(st.integers(-1, 2)),
            window_dilation=draw(st.integers(1, 2)),
            base_dilation=draw(st.integers(1, 3)) if allow_base_dilation else 1,
        )
        if window_output_size(n, wd) >= 1:
            return n, wd


# ---- reduce -------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_reduce_matches_reference(data):
    dims = data.draw(dims_strategy(1, 4))
    reduced = tuple(sorted(data.draw(st.sets(st.integers(0, len(dims) - 1)))))
    arity = data.draw(st.integers(1, 3))
    out = [n for i, n in enumerate(dims) if i not in reduced]
    shape = f32(*out) if arity == 1 else tuple_shape(*[f32(*out)] * arity)
    instr = instruction("reduce", shape, [f32(*dims)] * arity + [f32()] * arity, dimensions=reduced)
    check_all(instr)


def test_reduce_spec_example():
    out = tuple_shape(f32(10), array_shape("s32", [10]))
    instr = instruction(
        "reduce", out, [f32(256, 10), array_shape("s32", [256, 10]), f32(), array_shape("s32", [])], dimensions=(0,)
    )
    maps = output_to_input(instr, 0)
    assert_map_text(maps[0].maps[0], "(d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]")
    assert_map_text(maps[2].maps[0], "(d0) -> (), domain: d0 in [0, 9]")
    assert_map_text(input_to_output(instr, 0)[0][0], "(d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]")
    assert_map_text(input_to_output(instr, 2)[0][0], "()[s0] -> (s0), domain: s0 in [0, 9]")


# ---- reduce-window ------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_reduce_window_matches_reference(data):
    rank = data.draw(st.integers(1, 3))
    axes = [data.draw(window_axis()) for _ in range(rank)]
    dims = [n for n, _ in axes]
    window = tuple(wd for _, wd in axes)
    out = [window_output_size(n, wd) for n, wd in axes]
    arity = data.draw(st.integers(1, 2))
    shape = f32(*out) if arity == 1 else tuple_shape(*[f32(*out)] * arity)
    instr = instruction("reduce-window", shape, [f32(*dims)] * arity + [f32()] * arity, window=window)
    check_all(instr)


def test_reduce_window_spec_example():
    instr = instruction("reduce-window", f32(1024, 3), [f32(1024, 514), f32()], window=(WindowDim(1), WindowDim(512)))
    maps = output_to_input(instr)
    assert_map_text(
        maps[0].maps[0], "(d0, d1)[s0] -> (d0, d1 + s0), domain: d0 in [0, 1023], d1 in [0, 2], s0 in [0, 511]"
    )
    assert_map_text(maps[1].maps[0], "(d0, d1) -> (), domain: d0 in [0, 1023], d1 in [0, 2]")


def test_reduce_window_padding_and_base_dilation_exact():
    # Holes and padding read nothing: the map's constraints must drop them.
    wd = WindowDim(size=3, stride=2, pad_low=1, pad_high=1, base_dilation=2)
    instr = instruction("reduce-window", f32(window_output_size(5, wd)), [f32(5), f32()], window=(wd,))
    assert check_out2in(instr) > 0
    assert check_in2out(instr, 0) > 0


# ---- select-and-scatter -------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_select_and_scatter_matches_reference(data):
    rank = data.draw(st.integers(1, 2))
    axes = [data.draw(window_axis(allow_base_dilation=False)) for _ in range(rank)]
    dims = [n for n, _ in axes]
    window = tuple(wd for _, wd in axes)
    source = [window_output_size(n, wd) for n, wd in axes]
    instr = instruction("select-and-scatter", f32(*dims), [f32(*dims), f32(*source), f32()], window=window)
    check_all(instr)


def test_select_and_scatter_corpus_shape():
    # From convnet_train_step: window 1x3x3x1 stride 1x2x2x1 over a padded activation.
    window = (WindowDim(1), WindowDim(3, 2), WindowDim(3, 2), WindowDim(1))
    instr = instruction("select-and-scatter", f32(1, 7, 7, 2), [f32(1, 7, 7, 2), f32(1, 3, 3, 2), f32()], window=window)
    check_all(instr, sample=100)


WINDOW_TEXT = """HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[5,6]{1,0} parameter(0)
  init = f32[] constant(-inf)
  ROOT r = f32[5,3]{1,0} reduce-window(x, init), window={size=3x2 stride=2x2 pad=1_1x0_1 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=max
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line


def test_reduce_window_from_parsed_text():
    from hlo_index.hlo import parse_module_text

    instr = parse_module_text(WINDOW_TEXT).entry.root
    assert instr.attr("window")[0].base_dilation == 2 and instr.attr("window")[1].window_dilation == 2
    assert [window_output_size(n, wd) for n, wd in zip((5, 6), instr.attr("window"))] == [5, 3]
    check_all(instr)
