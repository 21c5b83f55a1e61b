"""Reference read sets of elementwise ops: output element i reads element i of every operand.

An operand of rank 0 next to a ranked output (the scalar of ``select``/``clamp``) is read whole
by every output element.
"""

from __future__ import annotations

from ..hlo.opcodes import ELEMENTWISE_OPCODES
from . import NO_ELEMENTS, SCALAR_ELEMENT, reads, reads_sets


def _reads_a_scalar(instr, operand_index) -> bool:
    """Whether the operand is a rank-0 scalar read whole; else it must have the output's dims."""
    operand_shape = instr.operands[operand_index].shape
    if operand_shape.rank == 0:
        return True
    if operand_shape.dims != instr.shape.dims:
        raise ValueError(
            f"{instr.opcode} operand {operand_index} shape {operand_shape.dims} differs from output {instr.shape.dims}"
        )
    return False


@reads(*ELEMENTWISE_OPCODES)
def elementwise_reads(instr, output_index, out_point, operand_index, runtime_values):
    return {()} if _reads_a_scalar(instr, operand_index) else {tuple(out_point)}


@reads_sets(*ELEMENTWISE_OPCODES)
def elementwise_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``elementwise_reads`` over ``out_linear``: the same elements, the very array
    (one walk step for a whole set of points, not one per point)."""
    if _reads_a_scalar(instr, operand_index):
        return SCALAR_ELEMENT if len(out_linear) else NO_ELEMENTS
    return out_linear
