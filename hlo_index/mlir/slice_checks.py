"""What MLIR's verifier checks of ``tensor.extract_slice`` and ``tensor.insert_slice`` and xDSL's
does not: static offsets and sizes are non-negative, the sliced type is the one the sizes give
(unit dimensions may be dropped: a rank-reduced slice), and every static slice stays inside the
sliced tensor (``offset < dim`` and ``offset + (size - 1) * stride < dim``). A pair whose slice
reads past its source is no IR at all, so no verdict is given on it.

The rules and their wording follow MLIR's ``verifyOffsetSizeAndStrideOp``, ``isRankReducedType``
with ``produceSliceErrorMsg``, and ``verifyInBoundsSlice`` (``mlir/lib/Interfaces/
ViewLikeInterface.cpp``, ``mlir/lib/Dialect/Tensor/IR/TensorOps.cpp``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

DYNAMIC = -9223372036854775808  # MLIR's ShapedType::kDynamic in static offset/size/stride lists


def slice_problems(module) -> Iterator[tuple[object, str]]:
    """(op, MLIR's message) for every slice op of ``module`` that MLIR's verifier rejects."""
    from xdsl.dialects.tensor import ExtractSliceOp, InsertSliceOp

    sliced: Any
    piece: Any
    for op in module.walk():
        if isinstance(op, ExtractSliceOp):
            sliced, piece = op.source.type, op.result.type
        elif isinstance(op, InsertSliceOp):
            sliced, piece = op.dest.type, op.source.type
        else:
            continue
        offsets = op.static_offsets.get_values()
        sizes = op.static_sizes.get_values()
        strides = op.static_strides.get_values()
        message = _problem(sliced, piece, offsets, sizes, strides)
        if message is not None:
            yield op, message


def _problem(sliced, piece, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int]) -> str | None:
    for name, values in (("offsets", offsets), ("sizes", sizes)):
        for v in values:
            if v < 0 and v != DYNAMIC:
                return f"expected {name} to be non-negative, but got {v}"
    shape = [_static(d) for d in sliced.get_shape()]
    if not (len(offsets) == len(sizes) == len(strides) == len(shape)):
        return None  # xDSL's own verifier and parser speak of ranks
    expected = list(sizes)  # the sliced type the sizes give (a dynamic size, a dynamic dimension)
    wrong = _rank_reduction_problem(expected, [_static(d) for d in piece.get_shape()])
    if wrong == "rank":
        return "expected rank to be smaller or equal to the other rank."
    element = sliced.get_element_type()
    if wrong == "size":
        return f"expected type to be '{_tensor_text(expected, element)}' or a rank-reduced version. (size mismatch)"
    if piece.get_element_type() != element:
        return f"expected element type to be '{element}'"
    for i, (dim, offset, size, stride) in enumerate(zip(shape, offsets, sizes, strides)):
        if DYNAMIC in (dim, offset):
            continue
        if offset >= dim:
            return f"offset {i} is out-of-bounds: {offset} >= {dim}"
        if DYNAMIC in (size, stride):
            continue
        last = offset + (size - 1) * stride
        if last >= dim:
            return f"slice along dimension {i} runs out-of-bounds: {last} >= {dim}"
    return None


def _rank_reduction_problem(expected: list[int], actual: list[int]) -> str | None:
    """MLIR's rank reduction: ``actual`` is ``expected`` with some unit dimensions left out,
    matched greedily from the outermost dimension (a dynamic size matches only a dynamic one)."""
    if len(actual) > len(expected):
        return "rank"
    k = 0
    for size in expected:
        if k < len(actual) and actual[k] == size:
            k += 1
        elif size != 1:
            return "size"
    return None if k == len(actual) else "size"


def _static(d: int) -> int:
    return DYNAMIC if d < 0 else d  # xDSL writes a dynamic dimension of a type as -1


def _tensor_text(shape: list[int], element) -> str:
    dims = "".join(f"{'?' if d == DYNAMIC else d}x" for d in shape)
    return f"tensor<{dims}{element}>"
