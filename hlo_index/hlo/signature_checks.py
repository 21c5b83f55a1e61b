"""What XLA checks of the computation an op applies against the op's operands: a reduce's,
reduce-window's, select-and-scatter's and scatter's combiner (``VerifyReducerShape``, called by
``ShapeInference::InferReduceShape``, ``InferReduceWindowShape``, ``InferSelectAndScatterShape``
and ``InferScatterShape``), a select-and-scatter's select, a map's function (``InferMapShape``) and
a sort's comparator (``ShapeVerifier::HandleSort``). XLA's parser reads text that breaks them; its
verifier rejects it.

A combiner over n operands takes 2n scalars (n accumulators, then n elements) and returns its n
accumulators (a tuple when n > 1). Its accumulator parameters must have exactly the types it
returns; everywhere else XLA compares "ignoring floating-point precision": any two floating-point
types agree (a bf16 operand reduced by an f32 combiner is read), other types must be equal.

Tuples in a signature are compared flattened (their arrays in order), as jaxlib's compilation,
which goes through MLIR, compares them: it reads a comparator that returns ``(pred[])`` or takes a
``(f32[])``, which XLA's verifier refuses. A signature without tuples is compared as written, so
what is rejected here both refuse.

A problem counts only in a computation that the entry reaches (``reached_from_entry``, asked by
the caller of these checks, so that a pass may be memoised by what the check reads). jaxlib compiles a module through
MLIR: StableHLO's rules, which allow a combiner over arrays of the dimensions a reduce keeps, hold
every computation; XLA's verifier holds only what the entry reaches. (XLA's own test of that
import has such a combiner in a computation nothing calls, and compiles.) Elsewhere a problem is
not reported, though StableHLO refuses most of them.

All-reduce and reduce-scatter apply a combiner too, but XLA's shape inference and verifier do not
compare it with the operands, so it is not checked here. Each check returns the first problem it
finds, said, or None (XLA's messages differ in wording); None also where an operand is a tuple
(XLA refuses that elsewhere) or the computation is not linked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from .model import ELEMENT_BITS, Computation, Instruction, Shape
from .shape_inference import is_unknown
from .shapes import compatible

_FLOATING = frozenset(t for t in ELEMENT_BITS if t.startswith(("f", "bf")))
_PRED = Shape("pred")


class _Signature(NamedTuple):
    name: str
    params: list[Shape]  # the parameters' arrays, by parameter number, tuples flattened
    results: list[Shape]  # the result's arrays, a tuple flattened
    result: Shape  # as written, for the messages


def agree_ignoring_precision(a: Shape, b: Shape) -> bool:
    """XLA's ``CompatibleIgnoringFpPrecision``: the same dimensions and element types, tuple element
    by tuple element, where any two floating-point types count as the same."""
    ta, tb = a.tuple_shapes, b.tuple_shapes
    if ta is not None or tb is not None:
        return ta is not None and tb is not None and len(ta) == len(tb) and all(map(agree_ignoring_precision, ta, tb))
    if a.dims != b.dims:
        return False
    return a.element_type == b.element_type or (a.element_type in _FLOATING and b.element_type in _FLOATING)


def reduce_combiner(instr: Instruction) -> str | None:
    """A reduce or reduce-window: the values, then as many initial values."""
    shapes = [o.shape for o in instr.operands]
    n = len(shapes) // 2
    if n == 0 or len(shapes) != 2 * n or not _arrays(shapes):
        return None
    elements = [s.element_type for s in shapes[:n]]
    return _combiner(_signature(instr.called.get("to_apply")), elements, shapes[n:], _REDUCE_WORDS)


def scatter_combiner(instr: Instruction) -> str | None:
    """A scatter's update computation: the operands' elements are its accumulators, the updates'
    its elements."""
    shapes = [o.shape for o in instr.operands]
    n = (len(shapes) - 1) // 2
    operands, updates = shapes[:n], shapes[n + 1 :]
    if n < 1 or len(shapes) != 2 * n + 1 or not _arrays(operands + updates):
        return None
    inits = [Shape(s.element_type) for s in operands]
    return _combiner(_signature(instr.called.get("to_apply")), [s.element_type for s in updates], inits, _SCATTER_WORDS)


def select_and_scatter_functions(instr: Instruction) -> str | None:
    """The select compares two of the operand's elements into a pred; the scatter combines the
    source's elements, starting from the initial value."""
    shapes = [o.shape for o in instr.operands]
    if len(shapes) != 3 or not _arrays(shapes):
        return None
    operand, source, init = shapes
    select = _signature(instr.called.get("select"))
    if select is not None:
        if len(select.params) != 2:
            return f"the select {select.name} takes {len(select.params)} parameter(s), not 2"
        if not _returns_pred(select):
            return f"the select {select.name} returns {select.result}, not pred[]"
        for k, param in enumerate(select.params):
            if not _holds_element(param, operand.element_type):
                return _takes("select", select, k, f"the operand's elements are {operand.element_type}")
    return _combiner(_signature(instr.called.get("scatter")), [source.element_type], [init], _SOURCE_WORDS)


def sort_comparator(instr: Instruction) -> str | None:
    """Two parameters per operand (two of its elements, compared), a pred result."""
    shapes = [o.shape for o in instr.operands]
    comparator = _signature(instr.called.get("to_apply"))
    if comparator is None or not shapes or not _arrays(shapes):
        return None
    if not _returns_pred(comparator):
        return f"the comparator {comparator.name} returns {comparator.result}, not pred[]"
    n = len(shapes)
    if len(comparator.params) != 2 * n:
        return (
            f"the comparator {comparator.name} takes {len(comparator.params)} parameter(s); {n} operand(s) need {2 * n}"
        )
    for k, param in enumerate(comparator.params):
        element = shapes[k // 2].element_type
        if not _holds_element(param, element):
            return _takes("comparator", comparator, k, f"operand {k // 2}'s elements are {element}")
    return None


def map_function(instr: Instruction) -> str | None:
    """One scalar parameter per operand, of its element type; a scalar result."""
    shapes = [o.shape for o in instr.operands]
    function = _signature(instr.called.get("to_apply"))
    if function is None or not shapes or not _arrays(shapes):
        return None
    count = len(function.params)
    if count != len(shapes):
        return f"the function {function.name} takes {count} parameter(s); the map has {len(shapes)} operand(s)"
    if len(function.results) != 1 or function.results[0].rank:
        return f"the function {function.name} returns {function.result}, not a scalar"
    for k, (param, shape) in enumerate(zip(function.params, shapes)):
        if param.rank:
            return _takes("function", function, k, "not a scalar")
        if not _holds_element(param, shape.element_type):
            return _takes("function", function, k, f"operand {k}'s elements are {shape.element_type}")
    return None


# What a combiner's elements and initial values are, in the words of each op (formatted with the
# operand's number i, the element type and the initial value's shape; only for a message).
_REDUCE_WORDS = ("operand {i}'s elements are {type}", "initial value {i} is {shape}")
_SCATTER_WORDS = ("updates {i}'s elements are {type}", "operand {i}'s elements are {type}")
_SOURCE_WORDS = ("the source's elements are {type}", "the initial value is {shape}")


def _combiner(
    combiner: _Signature | None, elements: Sequence[str], inits: Sequence[Shape], words: tuple[str, str]
) -> str | None:
    """``VerifyReducerShape``: ``combiner`` combines as many arrays as ``elements`` (their element
    types), starting from initial values of shapes ``inits``; ``words`` say them."""
    if combiner is None:
        return None
    name, params, accumulators, result = combiner
    n = len(elements)
    if len(params) != 2 * n:
        return f"the combiner {name} takes {len(params)} parameter(s); {n} operand(s) need {2 * n}"
    if len(accumulators) != n:
        if not result.is_tuple:
            return f"the combiner {name} returns {result}; {n} operands need a tuple of {n} scalars"
        return f"the combiner {name} returns {len(accumulators)} value(s); {n} operand(s) need {n}"
    if any(a.rank or a.buffer or a.element_type in ("token", "opaque") for a in accumulators):
        return f"the combiner {name} returns {result}, not a scalar or a tuple of scalars"
    returns = "returns {} as value {}"
    for i, accumulator in enumerate(accumulators):
        if not compatible(accumulator, params[i]):  # exactly: the accumulator goes round and round
            why_not = returns.format(accumulator, i) + ": they must be of one type"
            return _takes("combiner", combiner, i, why_not)
        init = inits[i]
        if not agree_ignoring_precision(accumulator, init):
            says_init = words[1].format(i=i, type=init.element_type, shape=init)
            return f"the combiner {name} {returns.format(accumulator, i)}, {says_init}"
        element = elements[i]
        if not _holds_element(params[n + i], element):
            return _takes("combiner", combiner, n + i, words[0].format(i=i, type=element, shape=None))
        if not agree_ignoring_precision(accumulator, params[n + i]):
            return _takes("combiner", combiner, n + i, returns.format(accumulator, i))
    return None


def _holds_element(param: Shape, element_type: str) -> bool:
    """Whether ``param`` is a scalar that agrees with ``element_type``, precision aside."""
    kind = param.element_type
    return (
        param.tuple_shapes is None
        and not param.dims
        and (kind == element_type or (kind in _FLOATING and element_type in _FLOATING))
    )


def _returns_pred(signature: _Signature) -> bool:
    return len(signature.results) == 1 and compatible(signature.results[0], _PRED)


def _takes(role: str, signature: _Signature, k: int, why_not: str) -> str:
    return f"the {role} {signature.name} takes {signature.params[k]} as parameter {k}, {why_not}"


def _signature(comp: Computation | None) -> _Signature | None:
    """``comp``'s signature (XLA's program shape, its tuples flattened); None where it is not
    linked, has no root, numbers its parameters with a gap, or has a shape not inferred."""
    if comp is None or comp.root is None:
        return None
    count = len(comp.parameters)
    if any(k not in comp.parameters for k in range(count)):
        return None
    written = [comp.parameters[k].shape for k in range(count)]
    result = comp.root.shape
    if is_unknown(result) or any(map(is_unknown, written)):
        return None
    params = [leaf for shape in written for leaf in _flattened(shape)]
    return _Signature(comp.name, params, _flattened(result), result)


def _flattened(shape: Shape) -> list[Shape]:
    if shape.tuple_shapes is None:
        return [shape]
    return [leaf for element in shape.tuple_shapes for leaf in _flattened(element)]


def reached_from_entry(instr: Instruction) -> bool:
    """Whether the entry calls ``instr``'s computation, through any chain of calls (true where the
    module has no entry to tell). To be asked only of an op found wrong, so rarely."""
    comp = instr.computation
    module = comp.module if comp is not None else None
    if comp is None or module is None or module.entry is None:
        return True
    seen = {id(module.entry)}
    todo = [module.entry]
    while todo:
        current = todo.pop()
        if current is comp:
            return True
        for each in current.instructions:
            for callee in each.called.values():
                if id(callee) not in seen:
                    seen.add(id(callee))
                    todo.append(callee)
    return False


def _arrays(shapes: Sequence[Shape]) -> bool:
    return not any(s.is_tuple or is_unknown(s) for s in shapes)


# by opcode; a scatter's dimension numbers and a window are checked in shape_checks.py
SIGNATURE_CHECKS: dict[str, Callable[[Instruction], str | None]] = {
    "reduce": reduce_combiner,
    "reduce-window": reduce_combiner,
    "select-and-scatter": select_and_scatter_functions,
    "scatter": scatter_combiner,
    "sort": sort_comparator,
    "map": map_function,
}
