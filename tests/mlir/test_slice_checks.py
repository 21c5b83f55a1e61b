"""Slices MLIR's verifier rejects are invalid IR at the slice, with MLIR's words; the slices it
accepts (rank-reduced, dynamic, touching the last element) still parse. The invalid cases are
those of MLIR's own ``mlir/test/Dialect/Tensor/invalid.mlir`` where it has one, each message as
MLIR's verifier words it."""

import pytest

from hlo_index.mlir import MlirError
from hlo_index.mlir.parse import parse_mlir


def function(body: str, args: str = "%t: tensor<8x16x4xf32>, %idx: index") -> str:
    lines = ["func.func @f(" + args + ") {", *("  " + line for line in body.splitlines()), "  return", "}"]
    return "\n".join(lines) + "\n"


INVALID = [
    (
        "%0 = tensor.extract_slice %t[0][4][1] : tensor<?xf32> to tensor<?x?xf32>",
        "%t: tensor<?xf32>",
        "expected rank to be smaller or equal to the other rank.",
    ),
    (
        "%0 = tensor.extract_slice %t[0][4][1] : tensor<?xf32> to tensor<4xi8>",
        "%t: tensor<?xf32>",
        "expected element type to be 'f32'",
    ),
    (
        "%0 = tensor.extract_slice %t[0, 0, 0][%idx, 4, 4][1, 1, 1] : tensor<8x16x4xf32> to tensor<4x4x4xf32>",
        None,
        "expected type to be 'tensor<?x4x4xf32>' or a rank-reduced version. (size mismatch)",
    ),
    (
        "%0 = tensor.extract_slice %t[0, 2, 0][4, 4, 4][1, 1, 1] : tensor<8x16x4xf32> to tensor<?x4x4xf32>",
        None,
        "expected type to be 'tensor<4x4x4xf32>' or a rank-reduced version. (size mismatch)",
    ),
    (
        "%0 = tensor.extract_slice %t[0, 16, 0][1, 2, 4][1, 1, 1] : tensor<8x16x4xf32> to tensor<1x2x4xf32>",
        None,
        "offset 1 is out-of-bounds: 16 >= 16",
    ),
    (
        "%0 = tensor.extract_slice %t[0, 10, 0][1, 4, 4][1, 2, 1] : tensor<8x16x4xf32> to tensor<1x4x4xf32>",
        None,
        "slice along dimension 1 runs out-of-bounds: 16 >= 16",
    ),
    (
        "%0 = tensor.extract_slice %t[0, 0, -1][1, 1, 1][1, 1, 1] : tensor<8x16x4xf32> to tensor<1x1x1xf32>",
        None,
        "expected offsets to be non-negative, but got -1",
    ),
    (
        "%0 = tensor.insert_slice %s into %t[6, 0, 0][4, 16, 4][1, 1, 1] : tensor<4x16x4xf32> into tensor<8x16x4xf32>",
        "%t: tensor<8x16x4xf32>, %s: tensor<4x16x4xf32>",
        "slice along dimension 0 runs out-of-bounds: 9 >= 8",
    ),
]


@pytest.mark.parametrize("body, args, message", INVALID)
def test_a_slice_mlir_rejects_is_invalid_at_the_slice(body, args, message):
    text = function(body, args or "%t: tensor<8x16x4xf32>, %idx: index")
    with pytest.raises(MlirError) as caught:
        parse_mlir(text, "f.mlir")
    d = caught.value.diagnostic
    assert d.message == f"invalid IR: {message}"
    assert (d.line, d.column) == (2, 3)  # the slice's own line, at its result


VALID = [
    # rank-reduced: unit dimensions dropped, anywhere
    "%0 = tensor.extract_slice %t[0, 0, 0][1, 16, 1][1, 1, 1] : tensor<8x16x4xf32> to tensor<16xf32>",
    "%0 = tensor.extract_slice %t[7, 15, 3][1, 1, 1][1, 1, 1] : tensor<8x16x4xf32> to tensor<f32>",
    # the last element exactly, with a stride
    "%0 = tensor.extract_slice %t[1, 0, 0][4, 16, 4][2, 1, 1] : tensor<8x16x4xf32> to tensor<4x16x4xf32>",
    # a dynamic offset or size is not checked statically
    "%0 = tensor.extract_slice %t[%idx, 0, 0][4, 16, 4][1, 1, 1] : tensor<8x16x4xf32> to tensor<4x16x4xf32>",
    "%0 = tensor.extract_slice %t[6, 0, 0][%idx, 16, 4][1, 1, 1] : tensor<8x16x4xf32> to tensor<?x16x4xf32>",
    # an empty slice at the last offset
    "%0 = tensor.extract_slice %t[7, 0, 0][0, 16, 4][1, 1, 1] : tensor<8x16x4xf32> to tensor<0x16x4xf32>",
]


@pytest.mark.parametrize("body", VALID)
def test_a_slice_mlir_accepts_still_parses(body):
    parsed = parse_mlir(function(body), "f.mlir")
    assert [f.sym_name.data for f in parsed.functions()] == ["f"]


def test_a_dynamic_source_dimension_is_not_checked():
    body = "%0 = tensor.extract_slice %t[100][4][1] : tensor<?xf32> to tensor<4xf32>"
    assert parse_mlir(function(body, "%t: tensor<?xf32>"), "f.mlir").functions()


def test_the_first_invalid_op_is_reported_even_when_a_later_one_fails_too():
    """The slice's type is wrong, and so the reshape of it is too: MLIR stops at the slice."""
    body = (
        "%s = tensor.extract_slice %t[0, 0, 0][8, 16, 2][1, 1, 1] : tensor<8x16x4xf32> to tensor<8x16x3xf32>\n"
        "%e = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [8, 4, 4, 2] "
        ": tensor<8x16x3xf32> into tensor<8x4x4x2xf32>"
    )
    with pytest.raises(MlirError) as caught:
        parse_mlir(function(body), "f.mlir")
    assert caught.value.diagnostic.line == 2
    assert "tensor<8x16x2xf32>" in caught.value.diagnostic.message


def test_bubble_exits_2_on_a_slice_past_its_source(tmp_path):
    from click.testing import CliRunner

    from hlo_index.cli import main

    path = tmp_path / "oob.mlir"
    path.write_text(
        "func.func @f(%a: tensor<2x4096x5120xf16>) -> tensor<2x64x64x2560xf16> {\n"
        "  %s = tensor.extract_slice %a[0, 0, 4000] [2, 4096, 2560] [1, 1, 1]"
        " : tensor<2x4096x5120xf16> to tensor<2x4096x2560xf16>\n"
        "  %e = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [2, 64, 64, 2560]"
        " : tensor<2x4096x2560xf16> into tensor<2x64x64x2560xf16>\n"
        "  return %e : tensor<2x64x64x2560xf16>\n"
        "}\n"
    )
    result = CliRunner().invoke(main, ["bubble", str(path)])
    assert result.exit_code == 2
    assert f"{path}:2:3: error: invalid IR: slice along dimension 2 runs out-of-bounds: 6559 >= 5120" in result.stderr
    assert "Traceback" not in result.stderr and "legal" not in result.stdout
