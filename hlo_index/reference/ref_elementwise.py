"""Reference read sets of elementwise ops: output element i reads element i of every operand.

An operand of rank 0 next to a ranked output (the scalar of ``select``/``clamp``) is read whole
by every output element.
"""
from __future__ import annotations

from . import reads

ELEMENTWISE_OPCODES = (
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "convert", "copy",
    "cosine", "count-leading-zeros", "divide", "erf", "exponential", "exponential-minus-one",
    "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "map", "maximum", "minimum",
    "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce-precision", "remainder",
    "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "sqrt", "stochastic-convert",
    "subtract", "tan", "tanh", "xor",
)


@reads(*ELEMENTWISE_OPCODES)
def elementwise_reads(instr, output_index, out_point, operand_index, runtime_values):
    operand_shape = instr.operands[operand_index].shape
    if operand_shape.rank == 0:
        return {()}
    if operand_shape.dims != instr.shape.dims:
        raise ValueError(f"{instr.opcode} operand {operand_index} shape {operand_shape.dims} "
                         f"differs from output {instr.shape.dims}")
    return {tuple(out_point)}
