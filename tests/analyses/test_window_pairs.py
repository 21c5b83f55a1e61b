"""A convolution's (kernel position, output position) pairs that land on an input element, as XLA's
``HloCostAnalysis`` counts them for the flops: the closed form against every pair listed."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.analyses.cost.flops import window_pairs
from hlo_index.cli import main


def listed(kernel: int, out_n: int, in_n: int, w) -> int:
    count = 0
    for k in range(kernel):
        for o in range(out_n):
            at = o * w.stride - w.pad_low + k * w.window_dilation
            if at % w.base_dilation == 0 and 0 <= at // w.base_dilation < in_n:
                count += 1
    return count


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, 9),
    st.integers(0, 12),
    st.integers(0, 12),
    st.integers(1, 5),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(-6, 8),
)
def test_the_closed_form_counts_every_pair(kernel, out_n, in_n, stride, window_dilation, base_dilation, pad_low):
    w = SimpleNamespace(stride=stride, window_dilation=window_dilation, base_dilation=base_dilation, pad_low=pad_low)
    assert window_pairs(kernel, out_n, in_n, w) == listed(kernel, out_n, in_n, w)


def test_a_long_convolution_is_costed_at_once():
    # 65,536 kernel positions by 65,536 output positions: 4.3e9 pairs, counted per kernel position
    from click.testing import CliRunner

    text = (
        "HloModule m\n\nENTRY e {\n  x = f32[1,131071,1] parameter(0)\n  k = f32[65536,1,1] parameter(1)\n"
        "  ROOT c = f32[1,65536,1] convolution(x, k), window={size=65536}, dim_labels=b0f_0io->b0f\n}\n"
    )
    result = CliRunner().invoke(main, ["analyze", "-", "--format", "json"], input=text)
    assert result.exit_code == 0, result.output[-400:]
    import json

    totals = json.loads(result.stdout)["modules"][0]["cost_totals"]
    assert totals["flops"] == 2 * 65536 * 65536  # every pair lands: a valid convolution
