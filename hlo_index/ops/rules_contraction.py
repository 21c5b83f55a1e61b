"""dot and convolution: contractions, one range variable per contracted / window coordinate.

dot output dims are (batch..., lhs free..., rhs free...), XLA's order. Convolution follows
StableHLO: ``feature_group_count`` G splits lhs features and kernel output features into G
groups, ``batch_group_count`` B splits the lhs batch and the kernel output features into B
groups; output feature ``f`` belongs to group ``f floordiv (OF / G)`` (resp. ``/ B``). XLA models
the batch group with a free range variable; here the group is exact. Every kernel element of a
window is read, also where the window lies on padding (it multiplies the padding value).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import Expr, IndexingMap, Interval, const, dim, range_var
from ..hlo.model import ConvDimLabels, Instruction, WindowDim
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .rules_reduce import RangeVars, window_of, window_tap_to_input, window_tap_to_output
from .shape_maps import full_interval

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
_READS = Reads.of(
    "batch_group_count",
    "dim_labels",
    "feature_group_count",
    "window",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "rhs_batch_dims",
    "rhs_contracting_dims",
)


# ---- dot ----------------------------------------------------------------------------------


# (lhs batch, rhs batch, lhs contracting, rhs contracting, lhs free, rhs free) dims
DotDims = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], list[int], list[int]]


def _dot_dims(instr: Instruction) -> DotDims:
    lhs_batch = tuple(instr.attr("lhs_batch_dims", ()))
    rhs_batch = tuple(instr.attr("rhs_batch_dims", ()))
    lhs_contract = tuple(instr.attr("lhs_contracting_dims", ()))
    rhs_contract = tuple(instr.attr("rhs_contracting_dims", ()))
    lhs_rank, rhs_rank = instr.operands[0].shape.rank, instr.operands[1].shape.rank
    lhs_free = [d for d in range(lhs_rank) if d not in lhs_batch and d not in lhs_contract]
    rhs_free = [d for d in range(rhs_rank) if d not in rhs_batch and d not in rhs_contract]
    return lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_free, rhs_free


def _dot_misfit(instr: Instruction, dims: DotDims) -> str | None:
    """Why the written result is not the dot's (batch, lhs free, rhs free dimensions, XLA's order),
    which XLA's verifier rejects; None when it is."""
    if "sparsity" in instr.attrs:  # a sparse operand holds a compressed dimension
        return None
    lhs_batch, _, _, _, lhs_free, rhs_free = dims
    out = instr.shape
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    if out.is_tuple or lhs.is_tuple or rhs.is_tuple:
        return "dot: a tuple among its operands and result"
    expected = [lhs.dims[d] for d in lhs_batch] + [lhs.dims[d] for d in lhs_free] + [rhs.dims[d] for d in rhs_free]
    if list(out.dims) != expected:
        return (
            f"dot: the result {out} is not the operands' batch and free dimensions "
            f"[{','.join(map(str, expected))}], which XLA's verifier rejects"
        )
    return None


def _extra_dot_operands(instr: Instruction, maps: list[OperandMaps]) -> list[OperandMaps]:
    if instr.opcode == "scaled-dot":
        return maps
    reason = "dot: sparsity metadata operand (sparse dot) has no element-wise indexing here"
    return maps + [OperandMaps(k, (IndexingMap.undefined(reason),)) for k in range(2, len(instr.operands))]


@output_to_input_rule("dot", reads=_READS)
def dot_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    dims = _dot_dims(instr)
    misfit = _dot_misfit(instr, dims)
    if misfit is not None:
        return [OperandMaps(k, (IndexingMap.undefined(misfit),)) for k in range(len(instr.operands))]
    lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_free, rhs_free = dims
    out_dims = instr.shape.dims
    lhs_dims = instr.operands[0].shape.dims
    contracted = [full_interval(lhs_dims[d]) for d in lhs_contract]

    def operand_map(
        rank: int, batch: Sequence[int], free: Sequence[int], contract: Sequence[int], free_offset: int
    ) -> IndexingMap:
        results: list[Expr] = [None] * rank  # type: ignore[list-item]
        for k, d in enumerate(batch):
            results[d] = dim(k)
        for k, d in enumerate(free):
            results[d] = dim(free_offset + k)
        for k, d in enumerate(contract):
            results[d] = range_var(k)
        return IndexingMap([full_interval(n) for n in out_dims], contracted, (), results)

    nb = len(lhs_batch)
    lhs = operand_map(len(lhs_dims), lhs_batch, lhs_free, lhs_contract, nb)
    rhs = operand_map(instr.operands[1].shape.rank, rhs_batch, rhs_free, rhs_contract, nb + len(lhs_free))
    return _extra_dot_operands(instr, [OperandMaps(0, (lhs,)), OperandMaps(1, (rhs,))])


@input_to_output_rule("dot", reads=_READS)
def dot_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    dims = _dot_dims(instr)
    misfit = _dot_misfit(instr, dims)
    if misfit is not None:
        return [(IndexingMap.undefined(misfit),)]
    lhs_batch, rhs_batch, _, _, lhs_free, rhs_free = dims
    if operand_index > 1:
        return [(IndexingMap.undefined("dot: sparsity metadata operand has no element-wise indexing here"),)]
    operand_dims = instr.operands[operand_index].shape.dims
    other_dims = instr.operands[1 - operand_index].shape.dims
    batch = lhs_batch if operand_index == 0 else rhs_batch
    own_free = lhs_free if operand_index == 0 else rhs_free
    other_free = rhs_free if operand_index == 0 else lhs_free
    # The other operand's free dims become range variables: one element feeds all of them.
    batch_part = [dim(d) for d in batch]
    own_part = [dim(d) for d in own_free]
    other_part = [range_var(k) for k in range(len(other_free))]
    results = batch_part + (own_part + other_part if operand_index == 0 else other_part + own_part)
    return [
        (
            IndexingMap(
                [full_interval(n) for n in operand_dims],
                [full_interval(other_dims[d]) for d in other_free],
                (),
                results,
            ),
        )
    ]


# ---- convolution --------------------------------------------------------------------------


def _conv_setup(instr: Instruction) -> tuple[ConvDimLabels, tuple[WindowDim, ...], int, int] | None:
    """(dim labels, window, feature group count, batch group count), or None without dim_labels."""
    labels = instr.attr("dim_labels")
    if labels is None:
        return None
    return (
        labels,
        window_of(instr, len(labels.output_spatial)),
        instr.attr("feature_group_count", 1) or 1,
        instr.attr("batch_group_count", 1) or 1,
    )


def _missing_labels(instr: Instruction) -> IndexingMap:
    return IndexingMap.undefined(f"convolution {instr.name}: no dim_labels attribute")


@output_to_input_rule("convolution", reads=_READS)
def convolution_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    setup = _conv_setup(instr)
    if setup is None:
        return [OperandMaps(k, (_missing_labels(instr),)) for k in range(2)]
    labels, window, feature_groups, batch_groups = setup
    out_dims = instr.shape.dims
    lhs_dims, kernel_dims = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    domain = [full_interval(n) for n in out_dims]
    out_feature = dim(labels.output_feature)
    out_features = out_dims[labels.output_feature]
    kernel_in_features = kernel_dims[labels.kernel_input_feature]

    ranges = RangeVars()
    lhs: list[Expr] = [None] * len(lhs_dims)  # type: ignore[list-item]
    kernel: list[Expr] = [None] * len(kernel_dims)  # type: ignore[list-item]
    constraints = []
    for axis, wd in enumerate(window):
        tap = ranges.new(wd.size)
        out_axis = labels.output_spatial[axis]
        lhs[labels.input_spatial[axis]], cons = window_tap_to_input(
            dim(out_axis), out_dims[out_axis], wd, lhs_dims[labels.input_spatial[axis]], tap
        )
        constraints += cons
        kernel[labels.kernel_spatial[axis]] = tap if tap is not None else const(0)
    in_feature = ranges.new_or_zero(kernel_in_features)
    kernel[labels.kernel_input_feature] = in_feature
    kernel[labels.kernel_output_feature] = out_feature
    if feature_groups > 1:
        in_feature = out_feature.floordiv(out_features // feature_groups) * kernel_in_features + in_feature
    lhs[labels.input_feature] = in_feature
    batch = dim(labels.output_batch)
    if batch_groups > 1:
        batch = out_feature.floordiv(out_features // batch_groups) * out_dims[labels.output_batch] + batch
    lhs[labels.input_batch] = batch
    lhs_map = IndexingMap(domain, ranges.intervals, (), lhs, constraints)
    kernel_map = IndexingMap(domain, ranges.intervals, (), kernel)
    return [OperandMaps(0, (lhs_map,)), OperandMaps(1, (kernel_map,))]


@input_to_output_rule("convolution", reads=_READS)
def convolution_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    setup = _conv_setup(instr)
    if setup is None:
        return [(_missing_labels(instr),)]
    labels, window, feature_groups, batch_groups = setup
    out_dims = instr.shape.dims
    operand_dims = instr.operands[operand_index].shape.dims
    out_features = out_dims[labels.output_feature]
    out_batch = out_dims[labels.output_batch]
    ranges = RangeVars()
    results: list[Expr] = [None] * len(out_dims)  # type: ignore[list-item]
    constraints = []

    if operand_index == 1:
        # A kernel element feeds every batch and position of its output feature.
        results[labels.output_batch] = ranges.new_or_zero(out_batch)
        for axis in labels.output_spatial:
            results[axis] = ranges.new_or_zero(out_dims[axis])
        results[labels.output_feature] = dim(labels.kernel_output_feature)
        return [(IndexingMap([full_interval(n) for n in operand_dims], ranges.intervals, (), results),)]

    for axis, wd in enumerate(window):
        in_axis, out_axis = labels.input_spatial[axis], labels.output_spatial[axis]
        results[out_axis], cons = window_tap_to_output(
            dim(in_axis), operand_dims[in_axis], wd, out_dims[out_axis], ranges.new(wd.size)
        )
        constraints += cons
    kernel_in_features = instr.operands[1].shape.dims[labels.kernel_input_feature]
    batch, feature = dim(labels.input_batch), dim(labels.input_feature)
    groups = [(feature_groups, feature.floordiv(kernel_in_features))] if feature_groups > 1 else []
    if batch_groups > 1:
        groups.append((batch_groups, batch.floordiv(out_batch)))
        batch = batch.mod(out_batch)
    results[labels.output_batch] = batch
    if len(groups) == 1:
        count, group = groups[0]
        per_group = out_features // count
        results[labels.output_feature] = group * per_group + ranges.new_or_zero(per_group)
    else:
        feature_var = ranges.new_or_zero(out_features)
        results[labels.output_feature] = feature_var
        for count, group in groups:  # both group kinds at once: constrain the output feature
            constraints.append((feature_var.floordiv(out_features // count) - group, Interval(0, 0)))
    return [(IndexingMap([full_interval(n) for n in operand_dims], ranges.intervals, (), results, constraints),)]


# ---- scaled-dot -----------------------------------------------------------------------------
# scaled-dot(lhs, rhs, lhs_scale, rhs_scale): a dot of ``operand * scale`` where each scale dim is
# the operand's (same coordinate), 1 (broadcast) or, along a contracted dim, a divisor of it
# (one scale per block of consecutive elements).


def _scale_projection(operand_dims: Sequence[int], scale_dims: Sequence[int]) -> IndexingMap | None:
    """operand index -> scale index, or None when the scale does not divide the operand."""
    if len(operand_dims) != len(scale_dims):
        return None
    results: list[Expr] = []
    for d, (n, s) in enumerate(zip(operand_dims, scale_dims)):
        if s == n:
            results.append(dim(d))
        elif s == 1:
            results.append(const(0))
        elif s and n % s == 0:
            results.append(dim(d).floordiv(n // s))
        else:
            return None
    return IndexingMap([full_interval(n) for n in operand_dims], (), (), results)


def _scale_expansion(operand_dims: Sequence[int], scale_dims: Sequence[int]) -> IndexingMap:
    """scale index -> the operand elements it scales (its block)."""
    ranges: list[Interval] = []
    results: list[Expr] = []
    for d, (n, s) in enumerate(zip(operand_dims, scale_dims)):
        if s == n:
            results.append(dim(d))
        elif s == 1:
            ranges.append(full_interval(n))
            results.append(range_var(len(ranges) - 1))
        else:
            ranges.append(full_interval(n // s))
            results.append(dim(d) * (n // s) + range_var(len(ranges) - 1))
    return IndexingMap([full_interval(n) for n in scale_dims], ranges, (), results)


def _scaled_dot_unsupported(instr: Instruction, k: int) -> IndexingMap:
    return IndexingMap.undefined(f"scaled-dot: scale operand {k} does not block operand {k - 2}")


@output_to_input_rule("scaled-dot", reads=_READS)
def scaled_dot_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    core = dot_output_to_input(instr, output_index)[:2]
    result = list(core)
    for k in (2, 3):
        if k >= len(instr.operands):
            break
        operand_dims, scale_dims = instr.operands[k - 2].shape.dims, instr.operands[k].shape.dims
        projection = _scale_projection(operand_dims, scale_dims)
        maps = (
            tuple(projection.compose(m) for m in core[k - 2].maps)
            if projection is not None
            else (_scaled_dot_unsupported(instr, k),)
        )
        result.append(OperandMaps(k, maps))
    return result


@input_to_output_rule("scaled-dot", reads=_READS)
def scaled_dot_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if operand_index < 2:
        return dot_input_to_output(instr, operand_index)
    operand_dims = instr.operands[operand_index - 2].shape.dims
    scale_dims = instr.operands[operand_index].shape.dims
    if _scale_projection(operand_dims, scale_dims) is None:
        return [(_scaled_dot_unsupported(instr, operand_index),)]
    expansion = _scale_expansion(operand_dims, scale_dims)
    (maps,) = dot_input_to_output(instr, operand_index - 2)
    return [tuple(m.compose(expansion).remove_unused_variables() for m in maps)]
