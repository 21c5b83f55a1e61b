"""Reference read sets of batch-norm-training / -inference / -grad, from their formulas.

With f = feature_index, c = the element's feature, S(c) = every operand element with feature c:
training  y[x] = (x - mean(S(c))) / sqrt(var(S(c)) + eps) * scale[c] + offset[c];
          mean[c], var[c] over S(c).
inference y[x] = (x - mean[c]) / sqrt(variance[c] + eps) * scale[c] + offset[c].
grad      operands (x, scale, mean, variance, dy):
          dx[x] = scale[c] / sqrt(variance[c] + eps) * (dy[x] - avg(dy over S(c))
                  - (x - mean[c]) * avg(dy * (x - mean[c]) over S(c)) / (variance[c] + eps))
          dscale[c] = sum over S(c) of dy * (x - mean[c]) / sqrt(variance[c] + eps)
          doffset[c] = sum over S(c) of dy
"""

from __future__ import annotations

import itertools

from ..hlo.model import Instruction
from . import reads


def _feature_slice(dims, f: int, c: int) -> set:
    return {p for p in itertools.product(*(range(n) for n in dims)) if p[f] == c}


@reads("batch-norm-training", "batch-norm-inference", "batch-norm-grad")
def batch_norm_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    f = int(instr.attr("feature_index"))
    array = instr.operands[0].shape.dims
    out_is_array = instr.shape.leaf(output_index).rank == len(array)
    c = out_point[f] if out_is_array else out_point[0]
    op = instr.opcode
    whole = lambda: _feature_slice(array, f, c)  # noqa: E731
    feature = {(c,)}
    if op == "batch-norm-inference":
        return {tuple(out_point)} if operand_index == 0 else feature
    if op == "batch-norm-training":
        if operand_index == 0:
            return whole()
        return feature if output_index == 0 else set()
    # grad: operands x, scale, mean, variance, dy
    if output_index == 2:
        return whole() if operand_index == 4 else set()
    if operand_index in (0, 4):
        return whole()
    if operand_index == 1:
        return feature if output_index == 0 else set()
    return feature
