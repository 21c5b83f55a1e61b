"""The opcode names XLA knows (``xla/hlo/ir/hlo_opcode.h``).

The parser never rejects an opcode missing here (unknown opcodes are kept raw); the list only
decides whether ``X-start`` / ``X-update`` / ``X-done`` is an opcode of its own or XLA's async
sugar around opcode ``X`` (see ``asyncwrap.py``).
"""

from __future__ import annotations

XLA_OPCODES = frozenset(
    """
abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start all-reduce
all-reduce-done all-reduce-start all-to-all and asin asinh async-done async-start async-update atan
atan2 atanh batch-norm-grad batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast
call cbrt ceil cholesky clamp count-leading-zeros collective-broadcast collective-permute
collective-permute-done collective-permute-start collective-reduce compare complex concatenate
conditional constant convert convolution copy copy-done copy-start cosine cosh custom-call divide
domain dot dynamic-reshape dynamic-slice dynamic-update-slice erf exponential exponential-minus-one
fft floor fusion gather get-dimension-size get-tuple-element imag infeed iota is-finite log
log-plus-one logistic map maximum minimum mulhi multiply negate not opt-barrier or outfeed pad
parameter partition-id popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce
reduce-precision reduce-scatter reduce-window remainder replica-id reshape reverse rng
rng-bit-generator rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scaled-dot scan
scatter select select-and-scatter send send-done set-dimension-size shift-left
shift-right-arithmetic shift-right-logical shuffle sign sine sinh slice sort sqrt stochastic-convert
subtract tan tanh topk transpose triangular-solve tuple while xor
""".split()
)

ASYNC_OPCODES = ("async-start", "async-update", "async-done")

# Opcodes whose output element i reads exactly element i of every array operand (a scalar operand of
# select/clamp is read whole). Shared by the op rules and the numpy reference, which must agree on
# the set but derive nothing else from each other.
ELEMENTWISE_OPCODES = (
    "abs",
    "acos",
    "acosh",
    "add",
    "and",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "clamp",
    "compare",
    "complex",
    "convert",
    "copy",
    "cosh",
    "cosine",
    "count-leading-zeros",
    "divide",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "map",
    "maximum",
    "minimum",
    "mulhi",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "reduce-precision",
    "remainder",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sine",
    "sinh",
    "sqrt",
    "stochastic-convert",
    "subtract",
    "tan",
    "tanh",
    "xor",
)
