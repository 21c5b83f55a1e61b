"""Result shapes of instructions written without one, as XLA's parser infers them.

XLA's parser accepts a missing result shape only for the opcodes of ``CanInferShape`` in
``hlo_parser.cc`` and then asks ``ShapeInference`` (``xla/service/shape_inference.cc``). This
module does the same for the same opcodes; any other opcode written without a shape gets XLA's
error, "cannot infer shape for opcode: X", at the instruction. Inferred shapes carry no layout (as
a shape written without one).

Runs after linking (operands and called computations are objects), in an order where operands
and callee roots are inferred first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .diagnostics import error
from .model import Computation, Diagnostic, Instruction, Module, Shape, WindowDim
from .opcodes import INFERRED_BINARY_OPCODES, INFERRED_UNARY_OPCODES

UNKNOWN = "unknown"

_COMPLEX_OF = {"f32": "c64", "f64": "c128"}
_REAL_OF = {"c64": "f32", "c128": "f64"}


class ShapeInferenceError(ValueError):
    """Why a shape cannot be inferred (XLA's wording where it has one)."""


def is_unknown(shape: Shape) -> bool:
    return shape.element_type == UNKNOWN and shape.tuple_shapes is None


def infer_module_shapes(module: Module) -> list[Diagnostic]:
    """Give every shapeless instruction of ``module`` its inferred shape; errors for the rest."""
    problems: list[Diagnostic] = []
    state: dict[int, bool] = {}  # id(instruction) -> inferred (True) or failed (False), this call only
    # XLA's async sugar wraps "X-start(operands)" in a computation whose parameters take the
    # operands' shapes: a parameter there is as known as the operand it stands for.
    shapeless = [
        instr
        for comp in module.computations
        for instr in comp.instructions
        if instr.shape.element_type == UNKNOWN and instr.shape.tuple_shapes is None
    ]
    if not shapeless:
        return problems
    async_callers = {
        callee.name: instr
        for instr in module.instructions
        if instr.opcode == "async-start"
        for callee in instr.called.values()
    }
    for instr in shapeless:
        _ensure(instr, state, problems, 0, async_callers)
    return problems


def _ensure(
    instr: Instruction,
    state: dict[int, bool],
    problems: list[Diagnostic],
    depth: int,
    async_callers: dict[str, Instruction],
) -> bool:
    """True when ``instr`` has a shape (inferring it, and what it depends on, first)."""
    if not is_unknown(instr.shape):
        return True
    key = id(instr)
    if key in state:
        return state[key]
    state[key] = False  # a cycle reads as a failure, not a recursion
    if depth > 5000:
        return False
    if instr.opcode == "parameter" and instr.computation is not None:
        caller = async_callers.get(instr.computation.name)
        n = instr.parameter_number
        if caller is not None and n is not None and n < len(caller.operands):
            if not _ensure(caller.operands[n], state, problems, depth + 1, async_callers):
                return False
            instr.shape = caller.operands[n].shape
            state[key] = True
            return True
    for op in instr.operands:
        if not _ensure(op, state, problems, depth + 1, async_callers):
            return False  # the operand's own error says why
    for callee in instr.called.values():
        if callee.root is not None and not _ensure(callee.root, state, problems, depth + 1, async_callers):
            return False
    try:
        instr.shape = infer_shape(instr)
    except ShapeInferenceError as e:
        problems.append(error(f"cannot infer the shape of %{instr.name}: {e}", instr.line, instr.column))
        return False
    except (IndexError, KeyError, TypeError, ValueError) as e:  # malformed attributes
        problems.append(
            error(
                f"cannot infer the shape of %{instr.name} ({instr.opcode}): {type(e).__name__}: {e}",
                instr.line,
                instr.column,
            )
        )
        return False
    state[key] = True
    return True


def infer_shape(instr: Instruction) -> Shape:
    """The result shape of ``instr`` from its operands' shapes and attributes (operands linked)."""
    rule = _RULES.get(instr.opcode)
    if rule is None:
        if instr.opcode in INFERRED_UNARY_OPCODES:
            return _unary(instr)
        if instr.opcode in INFERRED_BINARY_OPCODES:
            return _binary(instr, None)
        raise ShapeInferenceError(f"cannot infer shape for opcode: {instr.opcode}")
    return rule(instr)


# ---- helpers ------------------------------------------------------------------------------


def array(element_type: str, dims: Sequence[int], dynamic: Sequence[bool] | None = None) -> Shape:
    dims = tuple(int(d) for d in dims)
    return Shape(element_type, dims, tuple(dynamic) if dynamic is not None else (False,) * len(dims))


def _strip_layout(shape: Shape) -> Shape:
    if shape.tuple_shapes is not None:
        return Shape("tuple", tuple_shapes=tuple(_strip_layout(s) for s in shape.tuple_shapes))
    return Shape(shape.element_type, shape.dims, shape.dynamic, None, buffer=shape.buffer)


def _tuple(shapes: Sequence[Shape]) -> Shape:
    return Shape("tuple", tuple_shapes=tuple(shapes))


def _operands(instr: Instruction, n: int | None = None, at_least: int = 0) -> tuple[Instruction, ...]:
    ops = instr.operands
    if n is not None and len(ops) != n:
        raise ShapeInferenceError(f"expects {n} operands, but has {len(ops)} operands")
    if len(ops) < at_least:
        raise ShapeInferenceError(f"expects at least {at_least} operands, but has {len(ops)}")
    return ops


def _array_operand(op: Instruction) -> Shape:
    if op.shape.is_tuple:
        raise ShapeInferenceError(f"operand %{op.name} is a tuple {op.shape}, expected an array")
    return op.shape


def _attr(instr: Instruction, key: str) -> Any:  # typed per key, see Instruction
    value = instr.attrs.get(key)
    if value is None:
        raise ShapeInferenceError(f"attribute {key} is expected but not seen")
    return value


def _callee(instr: Instruction, role: str) -> Computation:
    comp = instr.called.get(role)
    if comp is None or comp.root is None:
        raise ShapeInferenceError(f"{role} computation is missing")
    return comp


# ---- elementwise --------------------------------------------------------------------------


def _unary(instr: Instruction) -> Shape:
    (op,) = _operands(instr, 1)
    shape = op.shape
    if instr.opcode in ("opt-barrier", "domain", "copy"):
        return _strip_layout(shape)
    shape = _array_operand(op)
    element = shape.element_type
    if instr.opcode == "abs" and element in _REAL_OF:
        element = _REAL_OF[element]
    return array(element, shape.dims, shape.dynamic)


def _element_unary(element: Callable[[str], str]) -> Callable[[Instruction], Shape]:
    def rule(instr: Instruction) -> Shape:
        (op,) = _operands(instr, 1)
        shape = _array_operand(op)
        return array(element(shape.element_type), shape.dims, shape.dynamic)

    return rule


def _broadcast_dims(lhs: Shape, rhs: Shape) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    if lhs.rank != rhs.rank:
        if rhs.rank == 0:
            return lhs.dims, lhs.dynamic
        if lhs.rank == 0:
            return rhs.dims, rhs.dynamic
        raise ShapeInferenceError(f"binary op with incompatible shapes: {lhs} and {rhs}")
    dims, dynamic = [], []
    for i, (a, b) in enumerate(zip(lhs.dims, rhs.dims)):
        if b in (a, 1):
            dims.append(a)
            dynamic.append(lhs.dynamic[i] if i < len(lhs.dynamic) else False)
        elif a == 1:
            dims.append(b)
            dynamic.append(rhs.dynamic[i] if i < len(rhs.dynamic) else False)
        else:
            raise ShapeInferenceError(f"binary op with incompatible shapes: {lhs} and {rhs}")
    return tuple(dims), tuple(dynamic)


def _binary(instr: Instruction, element: str | None) -> Shape:
    lhs_op, rhs_op = _operands(instr, 2)
    lhs, rhs = _array_operand(lhs_op), _array_operand(rhs_op)
    dims, dynamic = _broadcast_dims(lhs, rhs)
    return array(element or lhs.element_type, dims, dynamic)


def _compare(instr: Instruction) -> Shape:
    return _binary(instr, "pred")


def _complex(instr: Instruction) -> Shape:
    lhs = _array_operand(_operands(instr, 2)[0])
    if lhs.element_type not in _COMPLEX_OF:
        raise ShapeInferenceError(f"complex expects f32 or f64 operands, not {lhs.element_type}")
    return _binary(instr, _COMPLEX_OF[lhs.element_type])


def _select(instr: Instruction) -> Shape:
    _pred, on_true, _on_false = _operands(instr, 3)
    return _strip_layout(on_true.shape)


def _clamp(instr: Instruction) -> Shape:
    _lo, operand, _hi = _operands(instr, 3)
    return _strip_layout(_array_operand(operand))


# ---- data movement ------------------------------------------------------------------------


def _broadcast(instr: Instruction) -> Shape:
    # InferBroadcastShape(operand, broadcast_sizes): the sizes are prepended to the operand's dims.
    (op,) = _operands(instr, 1)
    shape = _array_operand(op)
    sizes = tuple(instr.attrs.get("dimensions", ()))
    return array(shape.element_type, sizes + shape.dims, (False,) * len(sizes) + tuple(shape.dynamic))


def _transpose(instr: Instruction) -> Shape:
    (op,) = _operands(instr, 1)
    shape = _array_operand(op)
    perm = tuple(_attr(instr, "dimensions"))
    if sorted(perm) != list(range(shape.rank)):
        raise ShapeInferenceError(f"transpose dimensions {list(perm)} are not a permutation of {shape.rank} dims")
    return array(shape.element_type, [shape.dims[p] for p in perm], [shape.dynamic[p] for p in perm])


def _reverse(instr: Instruction) -> Shape:
    (op,) = _operands(instr, 1)
    shape = _array_operand(op)
    return array(shape.element_type, shape.dims, shape.dynamic)


def _pad(instr: Instruction) -> Shape:
    operand, _value = _operands(instr, 2)
    shape = _array_operand(operand)
    padding = _attr(instr, "padding")
    if len(padding) != shape.rank:
        raise ShapeInferenceError(f"padding has {len(padding)} dimensions, the operand {shape.rank}")
    dims = [p.low + p.high + n + max(n - 1, 0) * p.interior for p, n in zip(padding, shape.dims)]
    if any(d < 0 for d in dims):
        raise ShapeInferenceError(f"padding {padding} gives a negative dimension")
    return array(shape.element_type, dims)


def _concatenate(instr: Instruction) -> Shape:
    ops = _operands(instr, at_least=1)
    (axis,) = tuple(_attr(instr, "dimensions"))
    first = _array_operand(ops[0])
    dims = list(first.dims)
    for op in ops[1:]:
        shape = _array_operand(op)
        if shape.rank != first.rank or any(a != b for i, (a, b) in enumerate(zip(shape.dims, first.dims)) if i != axis):
            raise ShapeInferenceError(f"cannot concatenate {first} and {shape} along dimension {axis}")
        dims[axis] += shape.dims[axis]
    return array(first.element_type, dims)


def _tuple_rule(instr: Instruction) -> Shape:
    return _tuple([_strip_layout(op.shape) for op in instr.operands])


def _get_tuple_element(instr: Instruction) -> Shape:
    (op,) = _operands(instr, 1)
    index: int = _attr(instr, "index")
    parts = op.shape.tuple_shapes
    if parts is None or not 0 <= index < len(parts):
        raise ShapeInferenceError(f"index {index} out of bounds of {op.shape}")
    return parts[index]


def _same_as_operand(k: int) -> Callable[[Instruction], Shape]:
    def rule(instr: Instruction) -> Shape:
        ops = _operands(instr, at_least=k + 1)
        return _strip_layout(ops[k].shape)

    return rule


def _after_all(instr: Instruction) -> Shape:
    return array("token", ())


def _scalar(element: str) -> Callable[[Instruction], Shape]:
    return lambda instr: array(element, ())


def _set_dimension_size(instr: Instruction) -> Shape:
    operand, _size = _operands(instr, 2)
    shape = _array_operand(operand)
    axis = _attr(instr, "dimensions")[0]
    dynamic = list(shape.dynamic)
    dynamic[axis] = True
    return array(shape.element_type, shape.dims, dynamic)


def _start_indices(instr: Instruction, first: int, rank: int) -> None:
    """A dynamic slice's start indices: one integer scalar per operand dimension, or one vector of
    them (XLA's older form)."""
    indices = [_array_operand(o) for o in instr.operands[first:]]
    one_vector = len(indices) == 1 and indices[0].rank == 1 and indices[0].dims[0] == rank
    if not one_vector and (len(indices) != rank or any(s.rank != 0 for s in indices)):
        raise ShapeInferenceError(f"expects {rank} scalar start indices, has {[str(s) for s in indices]}")
    if any(not s.element_type.startswith(("s", "u")) for s in indices):
        raise ShapeInferenceError(f"start indices must be integers, has {[str(s) for s in indices]}")


def _dynamic_slice(instr: Instruction) -> Shape:
    """XLA's InferDynamicSliceShape: one size per operand dimension, each inside it."""
    operand = _array_operand(_operands(instr, at_least=1)[0])
    _start_indices(instr, 1, operand.rank)
    sizes = tuple(_attr(instr, "dynamic_slice_sizes"))
    if len(sizes) != operand.rank:
        raise ShapeInferenceError(f"dynamic_slice_sizes has {len(sizes)} entries, the operand {operand.rank} dims")
    for k, (size, dim) in enumerate(zip(sizes, operand.dims)):
        if not 0 <= size <= dim:
            raise ShapeInferenceError(f"slice size {size} of dimension {k} is outside [0, {dim}]")
    return array(operand.element_type, sizes)


def _dynamic_update_slice(instr: Instruction) -> Shape:
    """XLA's InferDynamicUpdateSliceShape: the operand's shape, an update of its rank inside it."""
    ops = _operands(instr, at_least=2)
    operand, update = _array_operand(ops[0]), _array_operand(ops[1])
    _start_indices(instr, 2, operand.rank)
    if update.rank != operand.rank or any(u > d for u, d in zip(update.dims, operand.dims)):
        raise ShapeInferenceError(f"the update {update} does not fit in the operand {operand}")
    return _strip_layout(operand)


def _collective_permute(instr: Instruction) -> Shape:
    """XLA's InferCollectivePermuteShape: one operand's own shape (the in-place and combined forms
    are not inferred here)."""
    if len(instr.operands) != 1:
        raise ShapeInferenceError(f"cannot infer shape for opcode: {instr.opcode} of {len(instr.operands)} operands")
    return _strip_layout(instr.operands[0].shape)


def _all_reduce(instr: Instruction) -> Shape:
    """XLA's InferAllReduceShape: the operands' shapes, a tuple of them where there are several."""
    ops = _operands(instr, at_least=1)
    shapes = [_strip_layout(o.shape) for o in ops]
    return shapes[0] if len(shapes) == 1 else _tuple(shapes)


def _async_element(k: int) -> Callable[[Instruction], Shape]:
    """A done's result: element ``k`` of its start's tuple (the start's own shape where that is an
    array, as an all-reduce-start's is)."""

    def rule(instr: Instruction) -> Shape:
        (start,) = _operands(instr, 1)
        parts = start.shape.tuple_shapes
        if parts is None:
            return start.shape
        if not 0 <= k < len(parts):
            raise ShapeInferenceError(f"the start {start.shape} has no element {k}")
        return parts[k]

    return rule


# ---- calls --------------------------------------------------------------------------------


def _root_shape(comp: Computation) -> Shape:
    return comp.root.shape  # type: ignore[union-attr]  # every caller's comp comes from _callee, which checked the root


def _call(instr: Instruction) -> Shape:
    return _root_shape(_callee(instr, "to_apply"))


def _conditional(instr: Instruction) -> Shape:
    comp = instr.called.get("branch_computations.0") or instr.called.get("true_computation")
    if comp is None or comp.root is None:
        raise ShapeInferenceError("conditional has no branch computation")
    return _root_shape(comp)


def _while(instr: Instruction) -> Shape:
    (init,) = _operands(instr, 1)
    return init.shape


def _map(instr: Instruction) -> Shape:
    ops = _operands(instr, at_least=1)
    shape = _array_operand(ops[0])
    root = _root_shape(_callee(instr, "to_apply"))
    return array(root.element_type, shape.dims, shape.dynamic)


def _sort(instr: Instruction) -> Shape:
    ops = _operands(instr, at_least=1)
    if len(ops) == 1:
        return _strip_layout(ops[0].shape)
    return _tuple([_strip_layout(op.shape) for op in ops])


def _scan(instr: Instruction) -> Shape:
    ops = _operands(instr, at_least=1)
    root = _root_shape(_callee(instr, "to_apply"))
    carries = int(_attr(instr, "num_carries"))
    axis = _attr(instr, "dimensions")[0]
    if len(ops) - carries <= 0:
        raise ShapeInferenceError("Cannot infer shape for scan with no inputs")
    size = _array_operand(ops[0]).dims[axis]

    def with_axis(shape: Shape) -> Shape:
        dims = list(shape.dims)
        dims.insert(axis, size)
        return array(shape.element_type, dims)

    parts = root.tuple_shapes
    if parts is None:
        return root if carries > 0 else with_axis(root)
    return _tuple([with_axis(s) if i + carries < len(parts) else s for i, s in enumerate(parts)])


# ---- reductions and windows ---------------------------------------------------------------


def _reduce(instr: Instruction) -> Shape:
    ops = _operands(instr)
    if len(ops) % 2:
        raise ShapeInferenceError(f"expects an even number of operands, but has {len(ops)} operands")
    n = len(ops) // 2
    reduced = set(_attr(instr, "dimensions"))
    outs = []
    for op, init in zip(ops[:n], ops[n:]):
        shape = _array_operand(op)
        keep = [i for i in range(shape.rank) if i not in reduced]
        outs.append(
            array(_array_operand(init).element_type, [shape.dims[i] for i in keep], [shape.dynamic[i] for i in keep])
        )
    return outs[0] if n == 1 else _tuple(outs)


def nonpositive_window_field(w: WindowDim) -> tuple[str, int] | None:
    """The first of a window dimension's size, stride, base and window dilation below 1, as (its
    name, its value): XLA's InferWindowOutputShape requires each to be positive."""
    for name, value in (
        ("size", w.size),
        ("stride", w.stride),
        ("base dilation", w.base_dilation),
        ("window dilation", w.window_dilation),
    ):
        if value < 1:
            return name, value
    return None


def _window_output(size: int, w: WindowDim) -> int:
    """XLA's InferWindowOutputShape along one dimension (sizes, strides and dilations positive)."""
    bad = nonpositive_window_field(w)
    if bad is not None:
        name, value = bad
        raise ShapeInferenceError(f"a window {name.split()[-1]} must be positive, got {value}")
    dilated_base = (size - 1) * w.base_dilation + 1 if size > 0 else 0
    padded = dilated_base + w.pad_low + w.pad_high
    dilated_window = (w.size - 1) * w.window_dilation + 1
    if padded < dilated_window:
        return 0
    return (padded - dilated_window) // w.stride + 1


def _reduce_window(instr: Instruction) -> Shape:
    ops = _operands(instr)
    if len(ops) % 2:
        raise ShapeInferenceError(f"expects an even number of operands, but has {len(ops)} operands")
    n = len(ops) // 2
    window = instr.attrs.get("window", ())
    outs = []
    for op, init in zip(ops[:n], ops[n:]):
        shape = _array_operand(op)
        if len(window) != shape.rank:
            raise ShapeInferenceError(f"window has {len(window)} dimensions, the operand {shape.rank}")
        outs.append(
            array(_array_operand(init).element_type, [_window_output(d, w) for d, w in zip(shape.dims, window)])
        )
    return outs[0] if n == 1 else _tuple(outs)


def _convolution(instr: Instruction) -> Shape:
    lhs_op, rhs_op = _operands(instr, 2)
    lhs, rhs = _array_operand(lhs_op), _array_operand(rhs_op)
    labels = _attr(instr, "dim_labels")
    window = instr.attrs.get("window", ())
    batch_groups = int(instr.attrs.get("batch_group_count", 1))
    for name in ("batch_group_count", "feature_group_count"):  # XLA's InferConvolveShape, first
        count = int(instr.attrs.get(name, 1))
        if count < 1:
            raise ShapeInferenceError(f"{name} must be a positive number, got {count}")
    spatial = len(labels.input_spatial)
    if len(window) != spatial:
        raise ShapeInferenceError(f"window has {len(window)} dimensions, the convolution {spatial} spatial ones")
    dims = [0] * (spatial + 2)
    dims[labels.output_batch] = lhs.dims[labels.input_batch] // batch_groups
    dims[labels.output_feature] = rhs.dims[labels.kernel_output_feature]
    for k in range(spatial):
        dims[labels.output_spatial[k]] = _window_output(lhs.dims[labels.input_spatial[k]], window[k])
    return array(_wider(lhs.element_type, rhs.element_type), dims)


def _wider(a: str, b: str) -> str:
    from .model import ELEMENT_BITS

    return b if ELEMENT_BITS.get(b, 0) > ELEMENT_BITS.get(a, 0) else a


def _select_and_scatter(instr: Instruction) -> Shape:
    operand = _operands(instr, 3)[0]
    return _strip_layout(_array_operand(operand))


# ---- contractions -------------------------------------------------------------------------


def _dot_shape(instr: Instruction, lhs: Shape, rhs: Shape, rhs_skip: Sequence[int] = ()) -> Shape:
    lb, rb = tuple(instr.attrs.get("lhs_batch_dims", ())), tuple(instr.attrs.get("rhs_batch_dims", ()))
    lc, rc = tuple(instr.attrs.get("lhs_contracting_dims", ())), tuple(instr.attrs.get("rhs_contracting_dims", ()))
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ShapeInferenceError("dot batch / contracting dimension lists differ in length")
    for a, b in zip(lc, rc):
        if lhs.dims[a] != rhs.dims[b]:
            raise ShapeInferenceError(f"contracting dimension sizes differ: {lhs.dims[a]} and {rhs.dims[b]}")
    dims = [lhs.dims[d] for d in lb]
    dims += [n for i, n in enumerate(lhs.dims) if i not in lb and i not in lc]
    dims += [n for i, n in enumerate(rhs.dims) if i not in rb and i not in rc and i not in rhs_skip]
    return array(_wider(lhs.element_type, rhs.element_type), dims)


def _dot(instr: Instruction) -> Shape:
    lhs, rhs = _operands(instr, 2)
    return _dot_shape(instr, _array_operand(lhs), _array_operand(rhs))


def _scaled_dot(instr: Instruction) -> Shape:
    ops = _operands(instr, 4)
    return _dot_shape(instr, _array_operand(ops[0]), _array_operand(ops[2]))


def _ragged_dot(instr: Instruction) -> Shape:
    lhs, rhs, _groups = _operands(instr, 3)
    return _dot_shape(instr, _array_operand(lhs), _array_operand(rhs), tuple(instr.attrs.get("rhs_group_dims", ())))


def _gather(instr: Instruction) -> Shape:
    operand_op, indices_op = _operands(instr, 2)
    operand, indices = _array_operand(operand_op), _array_operand(indices_op)
    offset_dims = tuple(_attr(instr, "offset_dims"))
    sizes = tuple(_attr(instr, "slice_sizes"))
    ivd = _attr(instr, "index_vector_dim")
    skipped = set(instr.attrs.get("collapsed_slice_dims", ())) | set(instr.attrs.get("operand_batching_dims", ()))
    if len(sizes) != operand.rank:
        raise ShapeInferenceError(f"gather slice_sizes has {len(sizes)} entries, the operand {operand.rank} dims")
    window = [s for d, s in enumerate(sizes) if d not in skipped]
    batch = [n for d, n in enumerate(indices.dims) if d != ivd]
    rank = len(window) + len(batch)
    if len(offset_dims) != len(window):
        raise ShapeInferenceError(f"gather offset_dims {list(offset_dims)} do not match {len(window)} window dims")
    w, b = iter(window), iter(batch)
    dims = [next(w) if i in offset_dims else next(b) for i in range(rank)]
    return array(operand.element_type, dims)


def _scatter(instr: Instruction) -> Shape:
    ops = _operands(instr, at_least=3)
    count = (len(ops) - 1) // 2
    shapes = [_strip_layout(op.shape) for op in ops[:count]]
    return shapes[0] if count == 1 else _tuple(shapes)


def _fft(instr: Instruction) -> Shape:
    (op,) = _operands(instr, 1)
    shape = _array_operand(op)
    kind = str(_attr(instr, "fft_type"))
    lengths = tuple(_attr(instr, "fft_length"))
    dims = list(shape.dims)
    if kind in ("FFT", "IFFT"):
        return array(shape.element_type, dims)
    if kind == "RFFT":
        dims[-1] = lengths[-1] // 2 + 1
        return array(_COMPLEX_OF.get(shape.element_type, "c64"), dims)
    if kind == "IRFFT":
        dims[-1] = lengths[-1]
        return array(_REAL_OF.get(shape.element_type, "f32"), dims)
    raise ShapeInferenceError(f"unknown fft_type {kind}")


def _topk(instr: Instruction) -> Shape:
    (op,) = _operands(instr, 1)
    shape = _array_operand(op)
    k = int(_attr(instr, "k"))
    dims = list(shape.dims)
    dims[-1] = k
    return _tuple([array(shape.element_type, dims), array("s32", dims)])


def _batch_norm(kind: str) -> Callable[[Instruction], Shape]:
    def rule(instr: Instruction) -> Shape:
        ops = _operands(instr, 3 if kind == "training" else 5)
        shape = _array_operand(ops[0])
        if kind == "inference":
            return array(shape.element_type, shape.dims)
        feature = shape.dims[int(_attr(instr, "feature_index"))]
        per_feature = array(shape.element_type, (feature,))
        return _tuple([array(shape.element_type, shape.dims), per_feature, per_feature])

    return rule


_RULES: dict[str, Callable[[Instruction], Shape]] = {
    "compare": _compare,
    "complex": _complex,
    "select": _select,
    "clamp": _clamp,
    "is-finite": _element_unary(lambda t: "pred"),
    "real": _element_unary(lambda t: _REAL_OF.get(t, t)),
    "imag": _element_unary(lambda t: _REAL_OF.get(t, t)),
    "broadcast": _broadcast,
    "transpose": _transpose,
    "reverse": _reverse,
    "pad": _pad,
    "concatenate": _concatenate,
    "tuple": _tuple_rule,
    "get-tuple-element": _get_tuple_element,
    "add-dependency": _same_as_operand(0),
    "after-all": _after_all,
    "replica-id": _scalar("u32"),
    "partition-id": _scalar("u32"),
    "get-dimension-size": _scalar("s32"),
    "set-dimension-size": _set_dimension_size,
    "dynamic-slice": _dynamic_slice,
    "dynamic-update-slice": _dynamic_update_slice,
    "collective-permute": _collective_permute,
    "all-reduce": _all_reduce,
    "all-reduce-start": _all_reduce,
    "all-gather-done": _async_element(1),
    "all-reduce-done": _async_element(0),
    "collective-permute-done": _async_element(1),
    "copy-done": _async_element(0),
    "call": _call,
    "conditional": _conditional,
    "while": _while,
    "map": _map,
    "sort": _sort,
    "scan": _scan,
    "reduce": _reduce,
    "reduce-window": _reduce_window,
    "select-and-scatter": _select_and_scatter,
    "convolution": _convolution,
    "dot": _dot,
    "scaled-dot": _scaled_dot,
    "ragged-dot": _ragged_dot,
    "gather": _gather,
    "scatter": _scatter,
    "fft": _fft,
    "topk": _topk,
    "triangular-solve": _same_as_operand(1),
    "cholesky": _same_as_operand(0),
    "batch-norm-training": _batch_norm("training"),
    "batch-norm-inference": _batch_norm("inference"),
    "batch-norm-grad": _batch_norm("grad"),
}
