"""What XLA's verifier (``HloVerifier``, through ``ShapeInference``) rejects in instructions whose result
shape is written: the attributes must fit the operands (a pad's padding config has one entry per operand
dimension, a slice one range per dimension inside it, a transpose a permutation, ...), and the written
shape must have the dimensions the op gives. XLA's parser reads such text; XLA's verifier, and every
compilation, rejects it; an analysis of it would be of an op that cannot run.

Each problem is a positioned error naming the rule (the ``ShapeInference`` function whose check fails).
Only dimensions are compared: element types and layouts are left to the ops' own rules, but for the
computations that ops apply (``signature_checks.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter

from .diagnostics import error
from .gather_scatter_checks import gather_dimension_numbers, scatter_dimension_numbers
from .model import ELEMENT_BITS, Computation, Diagnostic, Instruction, Module, Shape, WindowDim
from .opcodes import ELEMENTWISE_OPCODES, OPERAND_COUNTS
from .shape_inference import ShapeInferenceError, infer_shape, is_unknown, nonpositive_window_field
from .signature_checks import SIGNATURE_CHECKS, reached_from_entry
from .written_shapes import written_shape_differs

_SHAPE_OF = attrgetter("shape")


def check_written_shapes(module: Module) -> list[Diagnostic]:
    problems: list[Diagnostic] = []
    checks = WrittenShapeChecks()
    for comp in module.computations:
        checks.check(comp, problems)
    return problems


class WrittenShapeChecks:
    """The written shapes' checks, a computation at a time, with what they found right kept for
    the next ones: what a check reads (the op, its shape, its operands' shapes, its attributes)
    where it found nothing wrong, by identity. The parser shares one object per shape and per
    typed attribute text, so a dump's many broadcasts, slices and transposes are a few distinct
    cases. (Objects of the module: alive, so an id stands for one object here.)"""

    __slots__ = ("fitting", "passed")

    def __init__(self) -> None:
        self.passed: set[tuple[object, ...]] = set()
        self.fitting: set[tuple[object, ...]] = set()  # the same for the computations that ops apply

    def check(self, comp: Computation, problems: list[Diagnostic]) -> None:
        """The problems of ``comp``'s instructions, added to ``problems``."""
        passed, fitting = self.passed, self.fitting
        for instr in comp.instructions:
            if instr.opcode not in _CHECKED:  # most ops: one look-up
                continue
            signature = SIGNATURE_CHECKS.get(instr.opcode)
            if signature is not None:
                # what it reads: the operands' shapes and the computations called. A problem counts
                # only where the entry reaches the op (signature_checks.py): never memoised.
                fits = (instr.opcode, tuple(map(id, map(_SHAPE_OF, instr.operands))), *map(id, instr.called.values()))
                if fits not in fitting:
                    message = signature(instr)
                    if not message:
                        fitting.add(fits)
                    elif reached_from_entry(instr):
                        rule = _RULE_NAMES[instr.opcode]
                        problems.append(
                            error(f"%{instr.name} is invalid ({rule}): {message}", instr.line, instr.column)
                        )
                        continue
            check = _CHECKS.get(instr.opcode)
            if check is None:
                continue
            if instr.opcode in _ELEMENTWISE:  # they read the shapes alone, whatever their attributes
                case: tuple[object, ...] = (instr.opcode, id(instr.shape), *map(id, map(_SHAPE_OF, instr.operands)))
            else:
                attrs = instr.attrs
                case = (
                    instr.opcode,
                    id(instr.shape),
                    tuple(map(id, map(_SHAPE_OF, instr.operands))),
                    tuple(attrs),
                    tuple(map(id, attrs.values())),
                )
            if case in passed:
                continue
            if instr.opcode in _OPERAND_CHECKS:  # their results are tuples as often as not
                message = check(instr)
                if message:
                    rule = _RULE_NAMES[instr.opcode]
                    problems.append(error(f"%{instr.name} is invalid ({rule}): {message}", instr.line, instr.column))
                else:
                    passed.add(case)
                continue
            # the checks read arrays: a tuple is left alone, but where the op takes arrays only
            # (an elementwise op's check says so)
            if instr.shape.is_tuple or any(op.shape.is_tuple for op in instr.operands):
                if instr.opcode not in _ARRAYS_ONLY:
                    passed.add(case)
                    continue
            elif is_unknown(instr.shape) or any(is_unknown(op.shape) for op in instr.operands):
                passed.add(case)
                continue
            try:
                message = check(instr)
            except ShapeInferenceError as e:
                message = str(e)
            except (IndexError, KeyError, TypeError, ValueError) as e:  # malformed attributes
                message = f"{type(e).__name__}: {e}"
            if message:
                rule = _RULE_NAMES[instr.opcode]
                problems.append(error(f"%{instr.name} is invalid ({rule}): {message}", instr.line, instr.column))
            else:
                passed.add(case)


def _inferred(instr: Instruction) -> str | None:
    """The op's own inference (shape_inference.py) against the written dimensions."""
    shape = infer_shape(instr)
    return _dims_differ(instr.shape, shape)


def _dims_differ(written: Shape, inferred: Shape) -> str | None:
    if any(written.dynamic) or any(inferred.dynamic) or written.dims == inferred.dims:
        return None
    return f"the operands give dimensions [{','.join(map(str, inferred.dims))}], the written shape is {written}"


def _elementwise(instr: Instruction) -> str | None:
    """XLA's InferUnaryOpShape, InferBinaryOpShape, InferSelectShape, InferClampShape, ...: the operands
    and the result of an elementwise op have the same dimensions (HLO broadcasts nothing implicitly), but
    a select's predicate and a clamp's bounds, which may be scalars (jaxlib compiles those forms)."""
    tuples = _tuple_in(instr)
    if tuples:
        return tuples
    operands = instr.operands
    if not operands:
        return None  # the parser's operand counts (checks.py)
    scalars_allowed = _SCALAR_OPERANDS.get(instr.opcode, ())
    first = 1 if scalars_allowed and len(operands) > 1 else 0  # the operand the others agree with
    reference = operands[first].shape
    for k, op in enumerate(operands):
        shape = op.shape
        if k == first or (k in scalars_allowed and not shape.dims):
            continue
        if not _same_dims(shape, reference):
            allowed = " or be a scalar" if k in scalars_allowed else ""
            return (
                f"operand {k} {shape} must have the dimensions of operand {first} {reference}{allowed} "
                "(HLO broadcasts nothing implicitly)"
            )
    if not _same_dims(instr.shape, reference):
        dims = ",".join(map(str, reference.dims))
        return f"the operands give dimensions [{dims}], the written shape is {instr.shape}"
    return None


def _arrays_of(instr: Instruction, count: int) -> str | None:
    """An op of ``count`` array operands and an array result: what is wrong with ``instr``'s, or None."""
    if len(instr.operands) != count:
        return f"expects {count} operand{'s' if count > 1 else ''}, has {len(instr.operands)}"
    return _tuple_in(instr)


def _tuple_in(instr: Instruction) -> str | None:
    """Where an op of arrays (elementwise ops but copy, contractions, bitcast-convert) has a tuple
    for an operand or its result: XLA's shape inference takes arrays only ("Expected array
    argument")."""
    for k, op in enumerate(instr.operands):
        if op.shape.is_tuple:
            return f"operand {k} is the tuple {op.shape}: {instr.opcode} takes arrays"
    if instr.shape.is_tuple:
        return f"the written shape is the tuple {instr.shape}: {instr.opcode} gives an array"
    return None


def _same_dims(a: Shape, b: Shape) -> bool:
    """The same dimensions; where either shape is dynamic, the same rank."""
    if a.dims == b.dims:
        return True
    return (any(a.dynamic) or any(b.dynamic)) and a.rank == b.rank


def _slice(instr: Instruction) -> str | None:
    if len(instr.operands) != 1:
        return f"expects 1 operand, has {len(instr.operands)}"
    op = instr.operands[0]
    ranges = instr.attrs.get("slice")
    if ranges is None:
        return "attribute slice is expected but not seen"
    shape = op.shape
    if len(ranges) != shape.rank:
        return f"the slice has {len(ranges)} ranges, the operand {shape.rank} dimensions"
    dims = []
    for k, (r, n) in enumerate(zip(ranges, shape.dims)):
        stride = r.stride if r.stride is not None else 1
        if stride <= 0 or r.start < 0 or r.start > r.limit or r.limit > n:
            return f"slice range {k} [{r.start}:{r.limit}:{stride}] is not inside dimension {k} of size {n}"
        dims.append((r.limit - r.start + stride - 1) // stride)
    return _dims_differ(instr.shape, Shape(shape.element_type, tuple(dims)))


def _broadcast(instr: Instruction) -> str | None:
    # the written form: dimensions={...} names, per operand dimension, the result dimension it becomes
    problem = _arrays_of(instr, 1)
    if problem:
        return problem
    src, out = instr.operands[0].shape, instr.shape
    dims = instr.attrs.get("dimensions")
    if dims is None:
        return None  # the parser's checks (checks.py) report a missing one
    dims = tuple(dims)
    if len(dims) != src.rank:
        return f"dimensions {list(dims)} name {len(dims)} result dimensions for an operand of rank {src.rank}"
    for k, d in enumerate(dims):
        if not 0 <= d < out.rank:
            return f"dimension {d} is outside the result's {out.rank} dimensions"
        if src.dims[k] not in (1, out.dims[d]) and not (src.dynamic[k] or out.dynamic[d]):
            return (
                f"operand dimension {k} of size {src.dims[k]} cannot broadcast to result dimension {d} "
                f"of size {out.dims[d]}"
            )
    return None


def _reverse(instr: Instruction) -> str | None:
    if len(instr.operands) != 1:
        return f"expects 1 operand, has {len(instr.operands)}"
    rank = instr.operands[0].shape.rank
    bad = [d for d in instr.attrs.get("dimensions", ()) if not 0 <= d < rank]
    if bad:
        return f"dimensions {bad} are outside the operand's {rank} dimensions"
    return _dims_differ(instr.shape, instr.operands[0].shape)


def _dot(instr: Instruction) -> str | None:
    if "sparsity" in instr.attrs:  # a sparse dot's extra operands carry its metadata
        return None
    problem = _arrays_of(instr, 2)
    if problem:
        return problem
    lhs, rhs = (o.shape for o in instr.operands)
    attrs = instr.attrs
    dims = {}
    for side, shape in (("lhs", lhs), ("rhs", rhs)):
        for kind, name in (("batch", "batching"), ("contracting", "contracting")):
            values = tuple(attrs.get(f"{side}_{kind}_dims", ()))
            bad = [d for d in values if not 0 <= d < shape.rank]
            if bad:
                return f"{side}_{name}_dimensions value: {bad[0]} is out of range: [0, {shape.rank})"
            dims[side, kind] = values
    for kind in ("batch", "contracting"):
        left, right = dims["lhs", kind], dims["rhs", kind]
        if len(left) != len(right):
            return f"lhs and rhs should have the same number of {kind} dimensions"
        for a, b in zip(left, right):
            if lhs.dims[a] != rhs.dims[b] and not (lhs.dynamic[a] or rhs.dynamic[b]):
                return f"{kind} dimension sizes must match for lhs/rhs"
    if not any(dims.values()):
        return None  # the legacy form without dimension numbers (XLA's own tests write it): not inferred here
    used_lhs = set(dims["lhs", "batch"]) | set(dims["lhs", "contracting"])
    used_rhs = set(dims["rhs", "batch"]) | set(dims["rhs", "contracting"])
    result = [lhs.dims[d] for d in dims["lhs", "batch"]]
    result += [n for d, n in enumerate(lhs.dims) if d not in used_lhs]
    result += [n for d, n in enumerate(rhs.dims) if d not in used_rhs]
    return _dims_differ(instr.shape, Shape(instr.shape.element_type, tuple(result)))


def _windowed(instr: Instruction) -> str | None:
    if instr.opcode == "reduce-window" and (not instr.operands or len(instr.operands) % 2):
        # XLA's InferReduceWindowShape: the inputs, then as many initial values
        return f"expects an even, non-zero number of operands, has {len(instr.operands)}"
    if not instr.operands:
        return "expects operands, has none"
    if instr.operands[0].shape.is_tuple or is_unknown(instr.operands[0].shape):
        return None
    # a window written without dimensions is XLA's parser's empty window: right for a scalar only
    rank = instr.operands[0].shape.rank
    window = instr.attrs.get("window") or ()
    if len(window) != rank:
        return f"the window has {len(window)} dimension(s), the operand {rank}"
    problem = _window_problem(window)
    if problem or instr.opcode != "reduce-window":
        return problem
    return written_shape_differs(instr)  # the windows' count along each dimension


def _window_problem(window: Sequence[WindowDim]) -> str | None:
    """XLA's InferWindowOutputShape: every size, stride and dilation at least 1."""
    for k, w in enumerate(window):
        bad = nonpositive_window_field(w)
        if bad is not None:
            return f"window dimension {k} has a non-positive {bad[0]} ({bad[1]})"
    return None


def _convolution(instr: Instruction) -> str | None:
    """XLA's InferConvolveShape: positive group counts, features and batch divisible by the groups,
    then the dimensions."""
    problem = _arrays_of(instr, 2)
    if problem:
        return problem
    lhs, rhs = (o.shape for o in instr.operands)
    labels = instr.attrs.get("dim_labels")
    if labels is None:
        return "has no dim_labels"
    features = instr.attrs.get("feature_group_count", 1)
    batches = instr.attrs.get("batch_group_count", 1)
    if features <= 0:
        return f"feature_group_count must be a positive number, got {features}"
    if batches <= 0:
        return f"batch_group_count must be a positive number, got {batches}"
    if features > 1 and batches > 1:
        return f"both batch_group_count {batches} and feature_group_count {features} cannot be greater than 1"
    if lhs.is_tuple or rhs.is_tuple or is_unknown(lhs) or is_unknown(rhs):
        return None
    if lhs.rank != rhs.rank:
        return f"Convolution arguments must have same number of dimensions. Got: {lhs} and {rhs}"
    for side, shape, positions in (
        ("input", lhs, (labels.input_batch, labels.input_feature, *labels.input_spatial)),
        ("kernel", rhs, (labels.kernel_input_feature, labels.kernel_output_feature, *labels.kernel_spatial)),
        ("output", instr.shape, (labels.output_batch, labels.output_feature, *labels.output_spatial)),
    ):
        if not shape.is_tuple and not is_unknown(shape) and max(positions) >= shape.rank:
            return f"the {side} dim_labels name dimension {max(positions)}, the {side} {shape} has {shape.rank}"
    # the groups, read at the labels' positions (inside the operands, said above)
    in_features, in_batch = lhs.dims[labels.input_feature], lhs.dims[labels.input_batch]
    kernel_in, kernel_out = rhs.dims[labels.kernel_input_feature], rhs.dims[labels.kernel_output_feature]
    if kernel_out % batches:
        return f"output feature dimension size {kernel_out} is not a multiple of batch_group_count {batches}"
    if in_features % features or in_features // features != kernel_in:
        return (
            f"lhs feature dimension {in_features} / feature_group_count {features} must equal "
            f"the rhs input feature dimension {kernel_in}"
        )
    if kernel_out % features:
        return f"output feature dimension {kernel_out} is not divisible by feature_group_count {features}"
    if in_batch % batches:
        return f"input batch dimension {in_batch} is not divisible by batch_group_count {batches}"
    # labels with dimensions of no role ('?'): XLA's parser reads them; left to the op's rule
    rank = len(labels.input_spatial) + 2
    if not lhs.rank == rhs.rank == instr.shape.rank == rank:
        return None
    window = instr.attrs.get("window") or ()
    if len(window) != rank - 2:  # window={} on a 2-D convolution: jaxlib infers another shape
        return (
            f"Window must have same number of dimensions as dimension numbers: the window has "
            f"{len(window)}, the dim_labels {rank - 2} spatial dimensions"
        )
    problem = _window_problem(window)
    if problem:
        return problem
    # XLA's "Window dimensions do not match RHS shape". (jaxlib compiles such a module all the same: its
    # translation to StableHLO drops the window's sizes and takes the kernel's.)
    kernel = [rhs.dims[d] for d in labels.kernel_spatial]
    sizes = [w.size for w in window]
    if sizes != kernel and not any(rhs.dynamic):
        return (
            f"the window's sizes {'x'.join(map(str, sizes))} are not the kernel's spatial dimensions "
            f"{'x'.join(map(str, kernel))} (kernel {rhs})"
        )
    return _inferred(instr)


def _concatenate(instr: Instruction) -> str | None:
    dims = tuple(instr.attrs.get("dimensions", ()))
    if len(dims) != 1:
        return f"expects one concatenate dimension, has {list(dims)}"
    rank = instr.operands[0].shape.rank if instr.operands else 0
    if not 0 <= dims[0] < rank:
        return f"dimension {dims[0]} is outside the operands' {rank} dimensions"
    return _inferred(instr)


def _collective_dimension(instr: Instruction) -> str | None:
    """The dimension a collective gathers, scatters or splits lies inside each array operand."""
    n = len(instr.operands)
    if n == 0:  # XLA's verifier: operand_count() >= 1
        return "takes at least 1 operand, has 0"
    out = instr.shape
    # one result per operand (XLA's InferVariadicOpShape of their results)
    several = instr.opcode != "all-gather-start" and n > 1 and not is_unknown(out)
    if several and (out.tuple_shapes is None or len(out.tuple_shapes) != n):
        return f"{n} operands give a tuple of {n} results, the written shape is {out}"
    dims = instr.attrs.get("dimensions")
    if not dims:
        return None
    return _outside_operands(instr, dims) or _collective_result(instr, dims[0])


def _outside_operands(instr: Instruction, dims: Sequence[int]) -> str | None:
    """The first of ``dims`` that some array operand lacks, said; None where each has them all."""
    for op in instr.operands:
        shape = op.shape
        if shape.is_tuple or is_unknown(shape):
            continue
        bad = [d for d in dims if not 0 <= d < shape.rank]
        if bad:
            return f"dimension {bad[0]} is outside the operand's {shape.rank} dimensions"
    return None


def _collective_result(instr: Instruction, dim: int) -> str | None:
    """An array result of one array operand has the operand's dimensions but the one gathered,
    scattered or split (whose size the number of participants decides)."""
    out = instr.shape
    if len(instr.operands) != 1 or is_unknown(out):
        return None
    src = instr.operands[0].shape
    if src.is_tuple or is_unknown(src):
        return None
    if instr.opcode == "all-gather-start" and out.tuple_shapes is not None and len(out.tuple_shapes) == 2:
        # (the operand, the result): XLA's InferAllGatherStartShape
        held, out = out.tuple_shapes
        if held.is_tuple or held.dims != src.dims:
            return f"an all-gather-start holds its operand {src}, its first element is written {held}"
    if out.is_tuple:
        return None
    if out.rank != src.rank or any(a != b for k, (a, b) in enumerate(zip(out.dims, src.dims)) if k != dim):
        return f"the operand {src} and the result {out} differ outside dimension {dim}"
    # the participants' pieces: each as big as the other, the whole their count times one
    piece, whole = (out, src) if instr.opcode == "reduce-scatter" else (src, out)
    static = 0 <= dim < out.rank and not (piece.dynamic[dim] or whole.dynamic[dim])
    if static and (whole.dims[dim] % piece.dims[dim] if piece.dims[dim] else whole.dims[dim]):
        return f"dimension {dim} of {whole} is no whole number of pieces of {piece.dims[dim]}"
    return None


def _sort_dimension(instr: Instruction) -> str | None:
    """The dimension a sort sorts along lies inside its operands (the parser sees that it names one)."""
    dims = instr.attrs.get("dimensions")
    return _outside_operands(instr, dims) if dims and len(dims) == 1 else None


def _reduce(instr: Instruction) -> str | None:
    """XLA's InferReduceShape: as many initial values as inputs, inputs of one shape, the reduced
    dimensions inside them and distinct, and the result the inputs' kept dimensions (a tuple of one
    array per input where there are several)."""
    ops = instr.operands
    n = len(ops) // 2
    if n == 0 or len(ops) != 2 * n:
        return f"expects an even number of operands, has {len(ops)}"
    inputs = [o.shape for o in ops[:n]]
    if any(s.is_tuple or is_unknown(s) for s in [*inputs, *(o.shape for o in ops[n:])]):
        return None
    first = inputs[0]
    if any(s.dims != first.dims for s in inputs[1:]):
        return f"the inputs differ in dimensions: {first} and {next(s for s in inputs if s.dims != first.dims)}"
    dims = tuple(instr.attrs.get("dimensions") or ())
    bad = [d for d in dims if not 0 <= d < first.rank]
    if bad:
        return f"reducing out-of-bounds dimension {bad[0]} in shape {first}"
    if len(set(dims)) != len(dims):
        return f"duplicate reduction dimension in {list(dims)}"
    kept = Shape(first.element_type, tuple(d for k, d in enumerate(first.dims) if k not in dims))
    written = instr.shape
    if n == 1:
        return None if written.is_tuple and len(written.tuple_shapes or ()) == 1 else _dims_differ(written, kept)
    parts = written.tuple_shapes
    if parts is None or len(parts) != n:
        return f"a reduce of {n} inputs gives a tuple of {n} arrays, the written shape is {written}"
    return next((d for d in (_dims_differ(p, kept) for p in parts if not p.is_tuple) if d), None)


def _reshape(instr: Instruction) -> str | None:
    """XLA's InferReshapeShape: an array of as many elements as its array operand. Checked once
    shapes are inferred: an operand written without its shape (``get-tuple-element(t)``) has
    one only then."""
    if len(instr.operands) != 1:
        return None  # the parser's rule names the operand count
    out, src = instr.shape, instr.operands[0].shape
    if out.is_tuple or src.is_tuple:
        return f"expected an array, got {src if src.is_tuple else out}"
    if is_unknown(out) or is_unknown(src) or any(out.dynamic) or any(src.dynamic):
        return None
    if out.num_elements != src.num_elements:
        return f"changes the element count: {src} has {src.num_elements}, {out} has {out.num_elements}"
    return None


# ops of several operands whose operand count XLA's shape inference or verifier bounds (the
# parser reads any): (the fewest, the most or None, XLA's rule)
_OPERAND_COUNT_RULES: dict[str, tuple[int, int | None, str]] = {
    "all-reduce": (1, None, "ShapeInference::InferAllReduceShape"),
    "all-reduce-start": (1, None, "ShapeInference::InferAllReduceStartShape"),
    "map": (1, None, "ShapeInference::InferMapShape"),
    "collective-broadcast": (1, None, "ShapeInference::InferCollectiveBroadcastShape"),
    "collective-permute": (1, None, "ShapeInference::InferCollectivePermuteShape"),
    "collective-permute-start": (1, None, "ShapeInference::InferCollectivePermuteStartShape"),
    "ragged-all-to-all": (6, 6, "ShapeInference::InferRaggedAllToAllShape"),
    "rng": (2, None, "ShapeVerifier::HandleRng"),  # XLA's tests also pass it the shape, a third
}


def _operand_count(instr: Instruction) -> str | None:
    """The op's operand count within what XLA's rule takes (none of them takes no operand; jaxlib
    0.10.2 fails to compile each without its operands)."""
    fewest, most, _ = _OPERAND_COUNT_RULES[instr.opcode]
    n = len(instr.operands)
    if fewest <= n and (most is None or n <= most):
        return None
    wanted = f"{fewest}" if fewest == most else f"at least {fewest}"
    return f"takes {wanted} operand{'s' if fewest > 1 else ''}, has {n}"


_BATCH_NORM_OPERANDS = {
    "batch-norm-training": ("operand", "scale", "offset"),
    "batch-norm-inference": ("operand", "scale", "offset", "mean", "variance"),
    "batch-norm-grad": ("operand", "scale", "mean", "variance", "gradient"),
}


def _batch_norm(instr: Instruction) -> str | None:
    """XLA's InferBatchNorm{Training,Inference,Grad}Shape: arrays, a feature dimension inside the
    operand, every per-feature operand a vector of that many elements, a gradient of the
    operand's dimensions; the result the operand's dimensions (training and grad: with two
    per-feature vectors)."""
    roles = _BATCH_NORM_OPERANDS[instr.opcode]
    ops = instr.operands
    if len(ops) != len(roles):
        return f"expects {len(roles)} operands ({', '.join(roles)}), has {len(ops)}"
    for role, op in zip(roles, ops):
        if op.shape.is_tuple:
            return f"the {role} %{op.name} is the tuple {op.shape}: {instr.opcode} takes arrays"
    if any(is_unknown(op.shape) for op in ops):
        return None
    operand = ops[0].shape
    written_index = instr.attrs.get("feature_index")
    try:
        index = int(written_index)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"feature_index {written_index} is not a dimension number"
    if not 0 <= index < operand.rank:
        return f"feature_index {index} is not a dimension of the operand {operand}"
    feature = operand.dims[index]
    for role, op in zip(roles[1:], ops[1:]):
        if role == "gradient":
            if op.shape.dims != operand.dims:
                return f"the gradient %{op.name} is {op.shape}, the operand {operand}"
        elif op.shape.dims != (feature,):
            return f"the {role} %{op.name} is {op.shape}, not a vector of the {feature} features (dimension {index})"
    written = instr.shape
    if instr.opcode == "batch-norm-inference":
        return _tuple_in(instr) or _dims_differ(written, operand)
    parts = written.tuple_shapes
    if parts is None or len(parts) != 3 or any(p.is_tuple for p in parts):
        return f"{instr.opcode} gives a tuple of 3 arrays, the written shape is {written}"
    expected = (operand.dims, (feature,), (feature,))
    if tuple(p.dims for p in parts) != expected and not any(is_unknown(p) for p in parts):
        return f"the operand {operand} gives ({operand}, [{feature}], [{feature}]), the written shape is {written}"
    return None


def _tuple_elements(instr: Instruction) -> str | None:
    """XLA's InferVariadicOpShape for a tuple: its elements are its operands' shapes, in order."""
    if is_unknown(instr.shape):
        return None
    parts = instr.shape.tuple_shapes
    if parts is None:
        return f"the written shape {instr.shape} is no tuple"
    if len(parts) != len(instr.operands):
        return f"the written shape has {len(parts)} element(s), the tuple {len(instr.operands)} operand(s)"
    if all(part is op.shape for part, op in zip(parts, instr.operands)):  # one shape object per text
        return None
    for k, (part, op) in enumerate(zip(parts, instr.operands)):
        if is_unknown(part) or is_unknown(op.shape):
            continue
        if _nested_dims(part) != _nested_dims(op.shape):
            return f"element {k} is written {part}, its operand %{op.name} is {op.shape}"
    return None


def _nested_dims(shape: Shape) -> object:
    return tuple(map(_nested_dims, shape.tuple_shapes)) if shape.tuple_shapes is not None else shape.dims


def _ragged_dot(instr: Instruction) -> str | None:
    """XLA's InferRaggedDotOpShape, its dimension numbers: lhs, rhs and the group sizes, every
    batch, contracting and group dimension inside its operand."""
    problem = _arrays_of(instr, 3)
    if problem:
        return problem
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    attrs = instr.attrs
    for side, shape in (("lhs", lhs), ("rhs", rhs)):
        for kind in ("batch", "contracting", "ragged", "group"):
            values = tuple(attrs.get(f"{side}_{kind}_dims") or ())
            bad = [d for d in values if not 0 <= d < shape.rank]
            if bad:
                return f"{side}_{kind}_dimensions value: {bad[0]} is out of range: [0, {shape.rank})"
    return None


def _bitcast_convert(instr: Instruction) -> str | None:
    """XLA's InferBitcastConvertShape: an array to an array of as many bits; between element types
    of different widths the narrower side has one more, minor, dimension of the ratio."""
    problem = _arrays_of(instr, 1)
    if problem:
        return problem
    src, out = instr.operands[0].shape, instr.shape
    a, b = ELEMENT_BITS.get(src.element_type), ELEMENT_BITS.get(out.element_type)
    if a is None or b is None:
        return None
    if not a or not b:  # a token or opaque value has no bits to reinterpret
        return f"cannot bitcast-convert {src} to {out}: both must be arrays of numbers"
    if a == b:
        return _dims_differ(out, Shape(out.element_type, src.dims))
    wide, narrow, ratio = (src, out, a // b) if a > b else (out, src, b // a)
    if max(a, b) % min(a, b) or narrow.rank != wide.rank + 1 or narrow.dims[:-1] != wide.dims:
        return f"cannot bitcast-convert {src} to {out}: the narrower type needs one more, minor, dimension"
    if narrow.dims[-1] != ratio and not narrow.dynamic[-1]:
        return f"cannot bitcast-convert {src} to {out}: the minor dimension must be {ratio}"
    return None


def _start_indices(instr: Instruction) -> str | None:
    """XLA's InferDynamicSliceShape and InferDynamicUpdateSliceShape: start indices of an integral
    type (the count is the parser's check, ``validate.py``)."""
    first = 2 if instr.opcode == "dynamic-update-slice" else 1
    for k, op in enumerate(instr.operands[first:], first):
        shape = op.shape
        if not shape.is_tuple and not is_unknown(shape) and not shape.element_type.startswith(("s", "u")):
            return f"start index {k - first} is {shape}: start indices must be of an integral type"
    return written_shape_differs(instr)  # the slice's sizes, or the operand's shape


def _iota(instr: Instruction) -> str | None:
    """XLA's verifier (HandleIota): an array whose iota_dimension is one of its dimensions."""
    shape = instr.shape
    if shape.is_tuple:
        return f"the written shape is the tuple {shape}: iota gives an array"
    index = instr.attrs.get("iota_dimension")
    if index is None and instr.attrs.get("dimensions"):  # the indexing spec's spelling
        index = instr.attrs["dimensions"][0]
    if isinstance(index, int) and not is_unknown(shape) and not 0 <= index < shape.rank:
        return f"iota_dimension {index} is not a dimension of {shape}"
    return None


_COLLECTIVES = ("all-gather", "all-gather-start", "reduce-scatter", "all-to-all")
# checks that read the operands alone (the result is a tuple as often as not)
_OPERAND_CHECKS = frozenset(
    (*_COLLECTIVES, "sort", "gather", "scatter", "reduce", "reduce-window", "tuple", "dynamic-slice")
    + ("dynamic-update-slice", "reshape", "iota", *_BATCH_NORM_OPERANDS, *_OPERAND_COUNT_RULES)
    + ("get-tuple-element", "topk", "opt-barrier", "select-and-scatter")
)
# a select's predicate (0) and a clamp's bounds (0 and 2) may be scalars; the other operands not
_SCALAR_OPERANDS = {"select": (0,), "clamp": (0, 2)}
_ELEMENTWISE = frozenset(ELEMENTWISE_OPCODES)
# a copy copies a tuple too
_ARRAYS_ONLY = (_ELEMENTWISE - {"copy"}) | {"convolution", "dot", "ragged-dot", "bitcast-convert"}
_CHECKS: dict[str, Callable[[Instruction], str | None]] = {
    **dict.fromkeys(_ELEMENTWISE, _elementwise),
    "pad": _inferred,
    "transpose": _inferred,
    "concatenate": _concatenate,
    "slice": _slice,
    "broadcast": _broadcast,
    "reverse": _reverse,
    "reduce-window": _windowed,
    "select-and-scatter": _windowed,
    "dot": _dot,
    "convolution": _convolution,
    **dict.fromkeys(_COLLECTIVES, _collective_dimension),
    "sort": _sort_dimension,
    "gather": gather_dimension_numbers,
    "scatter": scatter_dimension_numbers,
    "reduce": _reduce,
    "tuple": _tuple_elements,
    "dynamic-slice": _start_indices,
    "dynamic-update-slice": _start_indices,
    "ragged-dot": _ragged_dot,
    "bitcast-convert": _bitcast_convert,
    **dict.fromkeys(_BATCH_NORM_OPERANDS, _batch_norm),
    "reshape": _reshape,
    **dict.fromkeys(_OPERAND_COUNT_RULES, _operand_count),
    "iota": _iota,
}
# ops whose written result is also compared with the one their inference gives (after their own
# check, where they have one); the others' checks compare it themselves or leave it to XLA's
# rules they follow (async dones, calls, loops)
_RESULT_INFERRED_RULES = {
    "get-tuple-element": "ShapeInference::InferGetTupleElementShape",
    "fft": "ShapeInference::InferFftShape",
    "topk": "ShapeInference::InferTopKShape",
    "cholesky": "ShapeInference::InferCholeskyShape",
    "triangular-solve": "ShapeInference::InferTriangularSolveShape",
    "get-dimension-size": "ShapeInference::InferGetDimensionSizeShape",
    "set-dimension-size": "ShapeInference::InferSetDimensionSizeShape",
    "add-dependency": "ShapeVerifier::HandleAddDependency",
    "opt-barrier": "ShapeVerifier::HandleOptimizationBarrier",
    "domain": "ShapeVerifier::HandleDomain",
}
_RESULT_INFERRED = (*_RESULT_INFERRED_RULES, "sort", "select-and-scatter", "map", "all-reduce", "collective-permute")


def _then_written(check: Callable[[Instruction], str | None] | None) -> Callable[[Instruction], str | None]:
    def checked(instr: Instruction) -> str | None:
        return (check(instr) if check is not None else None) or written_shape_differs(instr)

    return checked


_CHECKS.update({op: _then_written(_CHECKS.get(op)) for op in _RESULT_INFERRED})
_CHECKED = frozenset(_CHECKS) | frozenset(SIGNATURE_CHECKS)
_ELEMENTWISE_RULES = {
    "select": "ShapeInference::InferSelectShape",
    "clamp": "ShapeInference::InferClampShape",
    "convert": "ShapeInference::InferConvertShape",
    "reduce-precision": "ShapeInference::InferReducePrecisionShape",
    "stochastic-convert": "ShapeInference::InferStochasticConvertShape",
    **dict.fromkeys(("compare", "complex", "mulhi"), "ShapeInference::InferBinaryOpShape"),
}
_RULE_NAMES = {
    **{
        op: _ELEMENTWISE_RULES.get(
            op,
            "ShapeInference::InferBinaryOpShape"
            if OPERAND_COUNTS.get(op) == 2
            else "ShapeInference::InferUnaryOpShape",
        )
        for op in _ELEMENTWISE
    },
    "pad": "ShapeInference::InferPadShape",
    "transpose": "ShapeInference::InferTransposeShape",
    "concatenate": "ShapeInference::InferConcatOpShape",
    "slice": "ShapeInference::InferSliceShape",
    "broadcast": "ShapeInference::InferBroadcastShape",
    "reverse": "ShapeInference::InferReverseShape",
    "reduce": "ShapeInference::InferReduceShape",
    "reduce-window": "ShapeInference::InferReduceWindowShape",
    "select-and-scatter": "ShapeInference::InferSelectAndScatterShape",
    "map": "ShapeInference::InferMapShape",
    "dot": "ShapeInference::InferDotOpShape",
    "convolution": "ShapeInference::InferConvolveShape",
    "all-gather": "ShapeInference::InferAllGatherShape",
    "all-gather-start": "ShapeInference::InferAllGatherStartShape",
    "reduce-scatter": "ShapeInference::InferReduceScatterShape",
    "all-to-all": "ShapeInference::InferAllToAllShape",
    "sort": "ShapeVerifier::HandleSort",
    "gather": "ShapeInference::InferGatherShape",
    "scatter": "ShapeInference::InferScatterShape",
    "tuple": "ShapeInference::InferVariadicOpShape",
    "dynamic-slice": "ShapeInference::InferDynamicSliceShape",
    "dynamic-update-slice": "ShapeInference::InferDynamicUpdateSliceShape",
    "ragged-dot": "ShapeInference::InferRaggedDotOpShape",
    "bitcast-convert": "ShapeInference::InferBitcastConvertShape",
    "reshape": "ShapeInference::InferReshapeShape",
    "iota": "ShapeVerifier::HandleIota",
    **_RESULT_INFERRED_RULES,
    **{op: rule for op, (_, _, rule) in _OPERAND_COUNT_RULES.items()},
    "batch-norm-training": "ShapeInference::InferBatchNormTrainingShape",
    "batch-norm-inference": "ShapeInference::InferBatchNormInferenceShape",
    "batch-norm-grad": "ShapeInference::InferBatchNormGradShape",
}
