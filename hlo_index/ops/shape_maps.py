"""Small builders shared by the data-movement rules: domains, identity, reshape expressions.

``reshape_exprs`` is the one place that turns an index of one shape into the index of the
same row-major element in another shape (reshape, and bitcast through physical orders).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import Expr, IndexingMap, Interval, const, range_var
from ..hlo.model import Shape


def full_interval(size: int) -> Interval:
    return Interval(0, size - 1)


def zero_result_map(dims: Sequence[int]) -> IndexingMap:
    """``(d0, ...) -> ()``: every element of ``dims`` reads the one element of a scalar."""
    return IndexingMap.from_shape_dims(tuple(dims), ())


def generator_map(dims: Sequence[int]) -> IndexingMap:
    """``()[s0, ...] -> (s0, ...)``: nothing (or a scalar) feeds every element of ``dims``."""
    dims = tuple(dims)
    return IndexingMap((), [full_interval(d) for d in dims], (), [range_var(i) for i in range(len(dims))])


def identity_map(dims: Sequence[int]) -> IndexingMap:
    return IndexingMap.identity(tuple(dims))


def major_to_minor(shape: Shape) -> tuple[int, ...]:
    """Logical dims from most to least major; the default (descending) layout when none is given."""
    if shape.layout is None or len(shape.layout.minor_to_major) != shape.rank:
        return tuple(range(shape.rank))
    return tuple(reversed(shape.layout.minor_to_major))


def _groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Minimal runs of non-unit dims with equal products ("common factors"), as index lists."""
    src_idx = [i for i, n in enumerate(src) if n != 1]
    dst_idx = [j for j, n in enumerate(dst) if n != 1]
    groups, i, j = [], 0, 0
    while i < len(src_idx) and j < len(dst_idx):
        gs, gd = [src_idx[i]], [dst_idx[j]]
        ps, pd = src[src_idx[i]], dst[dst_idx[j]]
        i, j = i + 1, j + 1
        while ps != pd:
            if ps < pd:
                gs.append(src_idx[i])
                ps *= src[src_idx[i]]
                i += 1
            else:
                gd.append(dst_idx[j])
                pd *= dst[dst_idx[j]]
                j += 1
        groups.append((gs, gd))
    return groups


def reshape_exprs(src_exprs: Sequence[Expr], src_dims: Sequence[int], dst_dims: Sequence[int]) -> list[Expr]:
    """Index expressions in ``dst_dims`` of the row-major element at ``src_exprs`` in ``src_dims``.

    Each common-factor group is linearized then delinearized, so collapse and expand shapes give
    the plain ``d0 * 8 + d1`` / ``(d0 floordiv 8, d0 mod 8)`` forms; size-1 dims are always 0.
    Both shapes must hold the same (non-zero) number of elements.
    """
    out: list[Expr] = [const(0)] * len(dst_dims)
    for gs, gd in _groups(src_dims, dst_dims):
        if len(gs) == 1 and len(gd) == 1:
            out[gd[0]] = src_exprs[gs[0]]
            continue
        linear: Expr | None = None
        stride = 1
        for k in reversed(gs):
            term = src_exprs[k] * stride if stride != 1 else src_exprs[k]
            linear = term if linear is None else term + linear
            stride *= src_dims[k]
        stride = 1
        strides = {}
        for k in reversed(gd):
            strides[k] = stride
            stride *= dst_dims[k]
        whole: Expr = linear  # type: ignore[assignment]  # no group is empty
        for pos, k in enumerate(gd):
            e = whole if strides[k] == 1 else whole.floordiv(strides[k])
            if pos > 0:
                e = e % dst_dims[k]
            out[k] = e
    return out
