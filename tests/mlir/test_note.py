"""The IREE note's own examples (read verbatim from ../shared/seeds), and the counterexample to its rule."""

import re
from pathlib import Path

import pytest

from hlo_index.mlir import analyse_mlir_text

from .helpers import check_rewrite
from .mlir_numpy import tagged

NOTE = Path(__file__).resolve().parents[2] / ".." / "shared" / "seeds" / "iree_bubble_expand_through_extract.zh-CN.txt"


def note_functions() -> dict:
    if not NOTE.exists():
        pytest.skip("the IREE note is not in ../shared/seeds")
    text = NOTE.read_text()
    found = {}
    for m in re.finditer(r"util\.func public @(\w+)\(.*?\n}\n", text, re.DOTALL):
        found[m.group(1)] = m.group(0)
    # the multi-dim example is a fragment: two ops of a larger function
    frag = re.search(r"(%extracted_slice_446 = .*?tensor<\?x8x32x2x64xf8E4M3FNUZ>)\n", text, re.DOTALL).group(1)
    found["f8"] = (
        "util.func public @f8(%expanded_444 : tensor<?x32x2x8x32x128xf8E4M3FNUZ>, %9 : index) "
        "-> (tensor<?x8x32x2x64xf8E4M3FNUZ>) {\n"
        + frag
        + "\nutil.return %expanded_447 : tensor<?x8x32x2x64xf8E4M3FNUZ>\n}\n"
    )
    return found


def one_chain(text):
    chains = analyse_mlir_text(text)
    assert len(chains) == 1
    return chains[0]


def test_possible_is_legal_expand_then_slice():
    text = note_functions()["possible"]
    chain = one_chain(text)
    assert chain.verdict == "legal" and chain.condition is None
    lines = chain.rewrite.splitlines()
    assert lines[0].startswith("%bubble_reshaped0 = tensor.expand_shape %arg0 [[0, 1]] output_shape [64, 64]")
    assert lines[1] == (
        "%expanded_239 = tensor.extract_slice %bubble_reshaped0[0, 0] [32, 64] [1, 1] "
        ": tensor<64x64xf16> to tensor<32x64xf16>"
    )
    assert check_rewrite(text, chain, lambda f: [[tagged((4096,))]]) == 1


def test_impossible_is_illegal_because_of_rows_of_64():
    chain = one_chain(note_functions()["impossible"])
    assert chain.verdict == "illegal" and chain.rewrite is None
    assert "2049 is not divisible by the inner factor 64" in chain.reason


def test_dynamic_main_is_conditional_with_the_exact_condition():
    text = note_functions()["main"]
    chain = one_chain(text)
    assert chain.verdict == "conditional"
    assert chain.condition == "dim(%arg0, 0) mod (%val floordiv 32) == 0"

    def args(function):  # every valid (source length, %val) with the condition true
        for n in range(1, 200):
            for val in range(32, n + 1, 32):
                if n % (val // 32) == 0:
                    yield [tagged((n,)), val]

    assert check_rewrite(text, chain, args) > 100


def test_rank_reducing_f8_fragment_is_legal():
    text = note_functions()["f8"]
    chain = one_chain(text)
    assert chain.verdict == "legal", chain.reason
    assert check_rewrite(text, chain, lambda f: [[tagged((n, 32, 2, 8, 32, 128)), m] for n, m in ((1, 1), (3, 2))]) == 2


def test_4128_is_divisible_by_32_but_cannot_be_reordered():
    text = (
        "util.func public @counter(%arg0 : tensor<4128xf16>) -> (tensor<32x64xf16>) {\n"
        "  %s = tensor.extract_slice %arg0[0] [2048] [1] : tensor<4128xf16> to tensor<2048xf16>\n"
        "  %e = tensor.expand_shape %s [[0, 1]] output_shape [32, 64] : tensor<2048xf16> into tensor<32x64xf16>\n"
        "  util.return %e : tensor<32x64xf16>\n}\n"
    )
    chain = one_chain(text)
    assert 4128 % 32 == 0 and chain.verdict == "illegal"
    assert "4128 is not divisible by the inner factor 64" in chain.reason
    # the note's candidate, expand to 32x129 and take [0:32, 0:64], reads element 129 where the
    # original reads 64 (output [1, 0])
    ce = chain.counterexample
    assert "[32, 129]" in ce["candidate"]
    assert ce["differs"] == "output [1, 0] reads source [64] but the swapped pair would read [129]"
    data = tagged((4128,))
    assert data[:2048].reshape(32, 64)[1, 0] == 64 and data.reshape(32, 129)[1, 0] == 129


def test_note_rule_examples_from_the_issue():
    """128 sliced to 96 and expanded to 32x3 cannot (128 mod 3 != 0) although 32 divides 128;
    100 sliced to 64 and expanded to 32x2 can although 32 does not divide 100."""

    def pair(n, s, a, b):
        return (
            f"func.func @f(%x: tensor<{n}xf32>) -> tensor<{a}x{b}xf32> {{\n"
            f"  %s = tensor.extract_slice %x[0] [{s}] [1] : tensor<{n}xf32> to tensor<{s}xf32>\n"
            f"  %e = tensor.expand_shape %s [[0, 1]] output_shape [{a}, {b}] : "
            f"tensor<{s}xf32> into tensor<{a}x{b}xf32>\n"
            f"  return %e : tensor<{a}x{b}xf32>\n}}\n"
        )

    assert one_chain(pair(128, 96, 32, 3)).verdict == "illegal"
    text = pair(100, 64, 32, 2)
    chain = one_chain(text)
    assert chain.verdict == "legal"
    assert check_rewrite(text, chain, lambda f: [[tagged((100,))]]) == 1
