"""The slice/reshape pairs of an MLIR function, split into independent reassociation groups.

A reshape acts on each reassociation group alone and a slice on each dim alone, so a pair is a
product of per-group problems: a group is the source dims it reads (``x``), the intermediate
dims (``y``), the slice of the sliced side, and the result dims it produces (``z``). The pair
can be reordered iff every group can. Dims a rank-reducing slice drops that no group covers are
groups of their own (``dropped``): they stay one dim that the swapped slice drops again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .symbolic import Const, Expr, product
from .values import Resolver, mixed, rank_reduction, reassociation

SLICE_FIRST = "slice_then_reshape"
RESHAPE_FIRST = "reshape_then_slice"


@dataclass
class Group:
    x_index: list[int]  # source dims of the pair's input
    x: list[Expr]
    y: list[Expr]  # intermediate dims (slice-first: the slice sizes of x)
    offsets: list[Expr]  # the slice, over x (slice-first) or y (reshape-first)
    sizes: list[Expr]
    strides: list[Expr]
    dropped: list[bool]  # per sliced dim: removed by a rank-reducing slice
    z: list[Expr]  # kept result dims of the group
    z_index: list[int]
    only_dropped: bool = False  # a dropped dim outside every reassociation group


@dataclass
class Pair:
    function: str
    order: str  # slice_then_reshape | reshape_then_slice
    kind: str  # expand | collapse
    slice_name: str
    reshape_name: str
    source_name: str  # the pair's input value, e.g. %arg0
    source_type: str
    mid_type: str
    result_type: str
    result_name: str
    element: str
    groups: list[Group] = field(default_factory=list)
    x_dims: list[Expr] = field(default_factory=list)
    z_dims: list[Expr] = field(default_factory=list)
    error: str | None = None  # why the pair could not be modelled

    @property
    def direction(self) -> str:
        return f"slice_then_{self.kind}" if self.order == SLICE_FIRST else f"{self.kind}_then_slice"


def find_pairs(parsed) -> list[Pair]:
    from xdsl.dialects import tensor

    resolver = Resolver(parsed)
    pairs = []
    for func in parsed.functions():
        fname = func.sym_name.data
        for op in func.walk():
            if isinstance(op, (tensor.ExpandShapeOp, tensor.CollapseShapeOp)):
                producer = op.src.owner
                if isinstance(producer, tensor.ExtractSliceOp):
                    pairs.append(_pair(resolver, fname, producer, op, SLICE_FIRST))
            elif isinstance(op, tensor.ExtractSliceOp):
                producer = op.source.owner
                if isinstance(producer, (tensor.ExpandShapeOp, tensor.CollapseShapeOp)):
                    pairs.append(_pair(resolver, fname, producer, op, RESHAPE_FIRST))
    return pairs


def _pair(r: Resolver, fname: str, first, second, order: str) -> Pair:
    from xdsl.dialects import tensor

    slice_op, reshape_op = (first, second) if order == SLICE_FIRST else (second, first)
    source = first.operands[0]
    kind = "expand" if isinstance(reshape_op, tensor.ExpandShapeOp) else "collapse"
    pair = Pair(
        fname,
        order,
        kind,
        r.name(slice_op.result)[1:],
        r.name(reshape_op.result)[1:],
        r.name(source),
        str(source.type),
        str(first.results[0].type),
        str(second.results[0].type),
        r.name(second.results[0]),
        str(source.type.get_element_type()),
    )
    try:
        pair.x_dims = r.dims(source)
        pair.z_dims = r.dims(second.results[0])
        offsets = mixed(r, slice_op.static_offsets, slice_op.offsets)
        sizes = mixed(r, slice_op.static_sizes, slice_op.sizes)
        strides = mixed(r, slice_op.static_strides, slice_op.strides)
        dropped = rank_reduction(sizes, slice_op.result.type.get_shape())
        groups = reassociation(reshape_op)
        if order == SLICE_FIRST:
            pair.groups = _slice_first_groups(pair, kind, offsets, sizes, strides, dropped, groups)
        else:
            mid = r.dims(first.results[0])
            pair.groups = _reshape_first_groups(pair, kind, mid, offsets, sizes, strides, dropped, groups)
    except (ValueError, IndexError, StopIteration) as e:
        pair.error = str(e) or type(e).__name__
    return pair


def _slice_first_groups(pair, kind, offsets, sizes, strides, dropped, reassoc) -> list[Group]:
    x = pair.x_dims
    kept = [i for i, d in enumerate(dropped) if not d]  # Y dim -> X dim
    spans: list[tuple[list[int], list[int]]] = []  # (x dims, z dims) per reassociation group
    if kind == "expand":
        for g, zs in enumerate(reassoc):
            spans.append(([kept[g]], list(zs)))
    else:
        for g, ys in enumerate(reassoc):
            xs = list(range(kept[ys[0]], kept[ys[-1]] + 1))  # with the dropped dims between them
            spans.append((xs, [g]))
    covered = {i for xs, _ in spans for i in xs}
    for i, d in enumerate(dropped):
        if d and i not in covered:
            spans.append(([i], []))
    spans.sort(key=lambda s: s[0][0])
    out = []
    for xs, zs in spans:
        out.append(
            Group(
                xs,
                [x[i] for i in xs],
                [sizes[i] for i in xs],
                [offsets[i] for i in xs],
                [sizes[i] for i in xs],
                [strides[i] for i in xs],
                [dropped[i] for i in xs],
                [pair.z_dims[j] for j in zs],
                zs,
                only_dropped=not zs,
            )
        )
    return out


def _reshape_first_groups(pair, kind, mid, offsets, sizes, strides, dropped, reassoc) -> list[Group]:
    x = pair.x_dims
    z_of_y, j = {}, 0
    for i, d in enumerate(dropped):
        if not d:
            z_of_y[i] = j
            j += 1
    out = []
    for g, members in enumerate(reassoc):
        xs, ys = ([g], list(members)) if kind == "expand" else (list(members), [g])
        zs = [z_of_y[y] for y in ys if y in z_of_y]
        out.append(
            Group(
                xs,
                [x[i] for i in xs],
                [mid[y] for y in ys],
                [offsets[y] for y in ys],
                [sizes[y] for y in ys],
                [strides[y] for y in ys],
                [dropped[y] for y in ys],
                [pair.z_dims[k] for k in zs],
                zs,
            )
        )
    return out


def group_size(dims: list[Expr]) -> Expr:
    return product(dims) if dims else Const(1)
