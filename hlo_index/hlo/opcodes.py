"""The opcode names XLA knows (``xla/hlo/ir/hlo_opcode.h``), each with what hlo-index needs to know
about it, in one table.

The parser never rejects an opcode missing here (unknown opcodes are kept raw); the names only
decide whether ``X-start`` / ``X-update`` / ``X-done`` is an opcode of its own or XLA's async
sugar around opcode ``X`` (see ``asyncwrap.py``). Each trait has its own source (the indexing
rules, XLA's cost analysis, XLA's parser), so the sets differ on purpose: ``copy`` reads element i
like ``abs`` but the cost analysis gives it no flop; ``opt-barrier`` may be written without a result
shape but is no elementwise op. The cost traits are those of jaxlib 0.10.2's ``HloCostAnalysis``
(``tests/data/xla_cpu_cost`` records its figures for each op, and the tests check them).
"""

from __future__ import annotations

import enum


class Trait(enum.Flag):
    """What one opcode is, for the modules that read the table."""

    NONE = 0
    # Output element i reads exactly element i of every array operand (a scalar operand of
    # select/clamp is read whole): the op rules and the numpy reference, which must agree on the set
    # but derive nothing else from each other.
    SAME_INDEX = enum.auto()
    # XLA's HloCostAnalysis costs it through its elementwise handlers (the visitor's
    # HandleElementwiseUnary / HandleElementwiseBinary), one op per output element.
    COSTED_ELEMENTWISE = enum.auto()
    # HloCostAnalysis counts each output element as a transcendental, not a flop.
    TRANSCENDENTAL = enum.auto()
    # hlo_parser's CanInferShape: may be written without a result shape, inferred as a unary op's
    # (the operand's shape) or a binary op's (the operands' common shape).
    INFERRED_UNARY = enum.auto()
    INFERRED_BINARY = enum.auto()


OPCODE_TRAITS: dict[str, Trait] = {
    "abs": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "acos": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "acosh": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "add": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "add-dependency": Trait.NONE,
    "after-all": Trait.NONE,
    "all-gather": Trait.NONE,
    "all-gather-done": Trait.NONE,
    "all-gather-start": Trait.NONE,
    "all-reduce": Trait.NONE,
    "all-reduce-done": Trait.NONE,
    "all-reduce-start": Trait.NONE,
    "all-to-all": Trait.NONE,
    "and": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "asin": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "asinh": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "async-done": Trait.NONE,
    "async-start": Trait.NONE,
    "async-update": Trait.NONE,
    "atan": Trait.SAME_INDEX,
    "atan2": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_BINARY,
    "atanh": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "batch-norm-grad": Trait.NONE,
    "batch-norm-inference": Trait.NONE,
    "batch-norm-training": Trait.NONE,
    "bitcast": Trait.NONE,
    "bitcast-convert": Trait.COSTED_ELEMENTWISE,
    "broadcast": Trait.NONE,
    "call": Trait.NONE,
    "cbrt": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "ceil": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "cholesky": Trait.NONE,
    "clamp": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "collective-broadcast": Trait.NONE,
    "collective-permute": Trait.NONE,
    "collective-permute-done": Trait.NONE,
    "collective-permute-start": Trait.NONE,
    "collective-reduce": Trait.NONE,
    "compare": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "complex": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "concatenate": Trait.NONE,
    "conditional": Trait.NONE,
    "constant": Trait.NONE,
    "convert": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "convolution": Trait.NONE,
    "copy": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "copy-done": Trait.NONE,
    "copy-start": Trait.NONE,
    "cosh": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "cosine": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "count-leading-zeros": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "custom-call": Trait.NONE,
    "divide": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "domain": Trait.INFERRED_UNARY,
    "dot": Trait.NONE,
    "dynamic-reshape": Trait.NONE,
    "dynamic-slice": Trait.NONE,
    "dynamic-update-slice": Trait.NONE,
    "erf": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "exponential": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "exponential-minus-one": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "fft": Trait.NONE,
    "floor": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "fusion": Trait.NONE,
    "gather": Trait.NONE,
    "get-dimension-size": Trait.NONE,
    "get-tuple-element": Trait.NONE,
    "imag": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "infeed": Trait.NONE,
    "iota": Trait.NONE,
    "is-finite": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "log": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "log-plus-one": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "logistic": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "map": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "maximum": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "minimum": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "mulhi": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "multiply": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "negate": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "not": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "opt-barrier": Trait.INFERRED_UNARY,
    "or": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "outfeed": Trait.NONE,
    "pad": Trait.NONE,
    "parameter": Trait.NONE,
    "partition-id": Trait.NONE,
    "popcnt": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "power": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_BINARY,
    "ragged-all-to-all": Trait.NONE,
    "ragged-dot": Trait.NONE,
    "real": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "recv": Trait.NONE,
    "recv-done": Trait.NONE,
    "reduce": Trait.NONE,
    "reduce-precision": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "reduce-scatter": Trait.NONE,
    "reduce-window": Trait.NONE,
    "remainder": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "replica-id": Trait.NONE,
    "reshape": Trait.NONE,
    "reverse": Trait.NONE,
    "rng": Trait.NONE,
    "rng-bit-generator": Trait.NONE,
    "rng-get-and-update-state": Trait.NONE,
    "round-nearest-afz": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "round-nearest-even": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "rsqrt": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "scaled-dot": Trait.NONE,
    "scan": Trait.NONE,
    "scatter": Trait.NONE,
    "select": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "select-and-scatter": Trait.NONE,
    "send": Trait.NONE,
    "send-done": Trait.NONE,
    "set-dimension-size": Trait.NONE,
    "shift-left": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "shift-right-arithmetic": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "shift-right-logical": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "shuffle": Trait.NONE,
    "sign": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_UNARY,
    "sine": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "sinh": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "slice": Trait.NONE,
    "sort": Trait.NONE,
    "sqrt": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "stochastic-convert": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE,
    "subtract": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
    "tan": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "tanh": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.TRANSCENDENTAL | Trait.INFERRED_UNARY,
    "topk": Trait.NONE,
    "transpose": Trait.NONE,
    "triangular-solve": Trait.NONE,
    "tuple": Trait.NONE,
    "while": Trait.NONE,
    "xor": Trait.SAME_INDEX | Trait.COSTED_ELEMENTWISE | Trait.INFERRED_BINARY,
}

XLA_OPCODES = frozenset(OPCODE_TRAITS)


def opcodes_with(trait: Trait) -> tuple[str, ...]:
    """The opcodes that have ``trait``, in the table's (alphabetical) order."""
    return tuple(op for op, traits in OPCODE_TRAITS.items() if trait in traits)


ASYNC_OPCODES = ("async-start", "async-update", "async-done")
ELEMENTWISE_OPCODES = opcodes_with(Trait.SAME_INDEX)
COSTED_ELEMENTWISE_OPCODES = frozenset(opcodes_with(Trait.COSTED_ELEMENTWISE))
TRANSCENDENTAL_OPCODES = frozenset(opcodes_with(Trait.TRANSCENDENTAL))
INFERRED_UNARY_OPCODES = frozenset(opcodes_with(Trait.INFERRED_UNARY))
INFERRED_BINARY_OPCODES = frozenset(opcodes_with(Trait.INFERRED_BINARY))

# hlo_parser's fixed operand counts ("expects N operands, but has M operands"): the unary and binary
# ops it may infer a shape for, the ternary ones and the other ops whose count never varies.
OPERAND_COUNTS: dict[str, int] = {
    **dict.fromkeys(INFERRED_UNARY_OPCODES, 1),
    **dict.fromkeys(INFERRED_BINARY_OPCODES, 2),
    **dict.fromkeys(("select", "clamp"), 3),
    **dict.fromkeys(("compare", "complex", "gather", "pad"), 2),
    **dict.fromkeys(
        ("convert", "bitcast-convert", "bitcast", "broadcast", "reshape", "transpose", "reverse", "slice"), 1
    ),
    **dict.fromkeys(("get-tuple-element", "while", "reduce-precision"), 1),
    **dict.fromkeys(("iota", "replica-id", "partition-id"), 0),
    **dict.fromkeys(("get-dimension-size", "topk"), 1),
    "set-dimension-size": 2,
}
