"""Operand utilization: how much of an operand the whole output reads, and how often.

Input: the operand's output->input maps (one per distinct access pattern) and its shape.

* ``distinct_elements``: elements of the operand read at least once. Exact by interval
  reasoning when every map is a *box* (each result is ``c * v + k`` of its own variable, and
  every constraint bounds a single variable), else by vectorised enumeration of each map's
  independent components (``components.decompose``: variables that share no result or
  constraint vary independently, so a reshape's ``(d0 floordiv 128, d0 mod 128, d1)`` is two
  small enumerations, not one big one). A component above ``budget`` points is sampled
  (seeded): the answer is then a lower bound, ``distinct_upper_bound`` the matching upper bound
  from interval reasoning (equal bounds make it exact again).
* ``element_reads``: element reads over every feasible point, range variables included (a reduce
  over 16 elements reads 16 per output element). Several maps count their *union*: an (output
  element, operand element) pair read by two maps is one read (a pad's padding value is read at
  most once per output element); beyond the budget, maps that read one element per point are
  counted by inclusion-exclusion over where they agree, else the per-map sum is given, as an
  estimate.
* Runtime variables (dynamic offsets, gathered indices) are treated as ranging over their
  whole feasible range: the read set is the union over all runtime values, an *upper bound*
  on what one execution reads; ``element_reads`` is then per execution (runtime values fixed).
* ``bytes_read``: bytes of the operand's storage holding a read element. Whole-byte types:
  ``distinct * bits / 8``. Sub-byte types (s4, u2, f4e2m1fn, E(n) ...) are packed densely in
  the layout's physical order, so bytes are counted exactly as the distinct bytes the read
  elements touch (a 4-bit element shares its byte with a neighbour); when the read set is too
  large to materialise, ``ceil(distinct * bits / 8)`` is used and ``exact`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations, product
from math import ceil, gcd, prod
from typing import TYPE_CHECKING, TypedDict

from ..affine import IndexingMap, Interval, dim, range_var
from ..affine.bounds import Domain
from ..affine.evaluate import LISTED_IN_PYTHON, box_points, distinct_sorted, relation_on_lists
from ..affine.expr import DIM, RANGE, RUNTIME, Expr, const, replace_variables
from ..affine.shift import shift_range_vars
from ..context import current
from ..fusion.full_read import is_full_read
from ..fusion.rule_cache import full_box
from ..hlo.model import Shape
from .clamped_reads import reads_whole_operand
from .components import (
    Component,
    Decomposition,
    charge,
    charge_linear_indices,
    decompose,
    linear_indices,
    lists_indices,
)
from .forms import runtime_as_range, split_linear

if TYPE_CHECKING:
    import numpy as np

    from ..layout.plan import LayoutPlan


class _OperandFacts(TypedDict):
    """The fields of ``Utilization`` that describe the operand, whatever is read of it."""

    operand_dims: tuple[int, ...]
    element_type: str
    element_bits: int
    total_elements: int
    total_bytes: int


@dataclass(frozen=True)
class Utilization:
    """How much of one operand its maps read: distinct elements and bytes against the whole."""

    operand_dims: tuple[int, ...]
    element_type: str
    element_bits: int
    total_elements: int
    distinct_elements: int | None  # None when a map is undefined
    distinct_upper_bound: int | None  # == distinct_elements when exact
    element_reads: int | None
    bytes_read: int | None
    total_bytes: int
    method: str  # interval | enumeration | sampled | undefined | none
    exact: bool
    runtime_union: bool  # read set is a union over runtime values
    notes: tuple[str, ...] = field(default=())

    @property
    def fraction(self) -> float | None:
        if self.distinct_elements is None or self.total_elements == 0:
            return None
        return self.distinct_elements / self.total_elements

    @property
    def multiplicity(self) -> float | None:
        if self.element_reads is None or not self.distinct_elements:
            return None
        return self.element_reads / self.distinct_elements

    def to_json(self) -> dict:
        return {
            "distinct_elements": self.distinct_elements,
            "distinct_upper_bound": self.distinct_upper_bound,
            "total_elements": self.total_elements,
            "fraction": self.fraction,
            "element_reads": self.element_reads,
            "multiplicity": self.multiplicity,
            "bytes_read": self.bytes_read,
            "total_bytes": self.total_bytes,
            "element_bits": self.element_bits,
            "method": self.method,
            "exact": self.exact,
            "runtime_union": self.runtime_union,
            "notes": list(self.notes),
        }


def storage_bits(shape: Shape) -> int:
    """Bits one element occupies in memory: the layout's ``E(n)`` if given, else the type's."""
    if shape.layout is not None and shape.layout.element_size_bits:
        return shape.layout.element_size_bits
    return shape.element_bits


def _base(operand_shape: Shape) -> dict:
    dims = tuple(operand_shape.dims)
    total = prod(dims)
    bits = storage_bits(operand_shape)
    return {
        "operand_dims": dims,
        "element_type": operand_shape.element_type,
        "element_bits": bits,
        "total_elements": total,
        "total_bytes": ceil(total * bits / 8),
    }


def skipped_utilization(operand_shape: Shape, reason: str) -> Utilization:
    """Utilization not counted (``reason``: the budget that stopped it): unknown, saying why."""
    return Utilization(
        **_base(operand_shape),
        distinct_elements=None,
        distinct_upper_bound=None,
        element_reads=None,
        bytes_read=None,
        method="skipped",
        exact=False,
        runtime_union=False,
        notes=(reason,),
    )


def operand_utilization(
    maps: Sequence[IndexingMap], operand_shape: Shape, *, budget: int | None = None, seed: int = 0
) -> Utilization:
    """Utilization of one operand read through ``maps`` (all from the same output space);
    ``budget``: points of one component enumerated before sampling (default: the context's)."""
    if budget is None:
        budget = current().budgets.utilization_component_points
    dims = tuple(operand_shape.dims)
    total = prod(dims)
    bits = storage_bits(operand_shape)
    total_bytes = ceil(total * bits / 8)
    base: _OperandFacts = {
        "operand_dims": dims,
        "element_type": operand_shape.element_type,
        "element_bits": bits,
        "total_elements": total,
        "total_bytes": total_bytes,
    }
    undefined = [m for m in maps if m.is_undefined]
    if undefined:
        return Utilization(
            **base,
            distinct_elements=None,
            distinct_upper_bound=None,
            element_reads=None,
            bytes_read=None,
            method="undefined",
            exact=False,
            runtime_union=False,
            notes=(undefined[0].undefined_reason,),
        )
    live = [m for m in maps if not m.is_known_empty]
    if not live:
        return Utilization(
            **base,
            distinct_elements=0,
            distinct_upper_bound=0,
            element_reads=0,
            bytes_read=0,
            method="none",
            exact=True,
            runtime_union=False,
            notes=("the output reads no element of this operand",),
        )
    runtime_union = any(m.runtime_vars for m in live)
    overlapping = len(live) > 1 and not _pairs_apart(live)
    # overlapping maps: their pairs' union by inclusion-exclusion where it applies (no
    # enumeration), else enumerated within the budget; each map's reads and the shared pairs
    # are counted once, whichever way the union goes
    union = shared = counted = None
    if overlapping:
        shared = _shared_pairs(live, dims, budget, seed)
        if shared is not None:
            counted = [_element_reads(m, budget, seed) for m in live]
            if all(e for _, e in counted):
                union = sum(c for c, _ in counted) - shared
        if union is None:
            union = _union_reads(live, dims, budget)
    if union is not None:
        reads, reads_exact = union, True
    else:
        counted_maps = live
        if overlapping:
            # too many pairs to union one by one: maps inside another add no pair (a row's own
            # element beside the whole row a reduction reads of it)
            kept = _without_contained(live, dims)
            if len(kept) == 1 or (kept is not live and _pairs_apart(kept)):
                counted_maps, overlapping = kept, False
        if counted is None or counted_maps is not live:
            counted = [_element_reads(m, budget, seed) for m in counted_maps]
        reads, reads_exact = sum(c for c, _ in counted), all(e for _, e in counted)
        if overlapping:
            if counted_maps is not live:
                shared = _shared_pairs(counted_maps, dims, budget, seed) if reads_exact else None
            if shared is None or not reads_exact:
                # Overlapping maps would count an (output, element) pair once per map: only an upper bound.
                reads_exact = False
            else:
                reads -= shared
    unioned = [runtime_as_range(m) for m in live]
    boxes = [_box(m) for m in unioned]
    notes: list[str] = []
    if runtime_union:
        notes.append("union over every runtime value: an upper bound on one execution's reads")
    if reads_exact and all(b is not None for b in boxes):
        return _from_boxes(base, boxes, reads, dims, operand_shape, bits, runtime_union, notes)
    return _from_components(
        base, unioned, reads, reads_exact, dims, operand_shape, bits, runtime_union, notes, budget, seed
    )


# ---- read counts ---------------------------------------------------------------------------


def _element_reads(m: IndexingMap, budget: int, seed: int) -> tuple[int, bool]:
    """Feasible (dims, range vars) points of ``m`` with runtime vars at their lower bounds,
    and whether the count is exact (a sampled component makes it an estimate)."""
    bounds = _narrowed_bounds(m)
    if bounds is not None:
        return _points(m, bounds), True
    if m.runtime_vars:
        m = m.substitute_runtime_values([rv.interval.lo for rv in m.runtime_vars])
        if m.is_known_empty:
            return 0, True
    dec = decompose(m, None, budget=budget, seed=seed)
    return dec.points, dec.points_exact


def _without_contained(maps: list[IndexingMap], operand_dims: tuple[int, ...]) -> list[IndexingMap]:
    """``maps`` less each one whose in-bounds (output element, operand element) pairs another's
    include, where the other reads each of its pairs at one point, in bounds
    (``_one_point_per_pair``): the pairs of the maps left are those of ``maps`` (the union counts
    the pairs inside the operand), each counted once by the points of its map. ``maps`` itself
    when none is left out."""
    if len(maps) > _CONTAINMENT_MAPS:
        return maps
    # each map with its range variables renamed to what it reads (a window over a whole row,
    # ``d3 + s0 - 127`` under a constraint, becomes the bare row ``s0``): the same pairs, in the
    # form the containment test reads
    shifted = [shift_range_vars(m) for m in maps]
    # the maps that can contain another, each judged once
    outers = [j for j, m in enumerate(shifted) if _one_point_per_pair(m, operand_dims)]
    dropped: set[int] = set()
    pieces: dict[int, list[IndexingMap]] = {}  # a map inside others on part of its dims: the rest
    for i, inner in enumerate(shifted):
        others = [shifted[j] for j in outers if j != i and j not in dropped]
        left = _left_beside(maps[i], inner, others, operand_dims)
        if left is None:
            # inside other maps value by value of a short dim (``1 - d2`` over d2 in [0, 1]: the
            # row of one map at d2 = 0, of another at d2 = 1)
            left = _left_by_values(maps[i], inner, others, operand_dims)
        if left is not None:
            dropped.add(i)
            pieces[i] = left
    if not dropped:
        return maps
    return [m for k, m in enumerate(maps) if k not in dropped] + [p for k in sorted(pieces) for p in pieces[k]]


def _left_beside(
    original: IndexingMap, inner: IndexingMap, outers: list[IndexingMap], operand_dims: tuple[int, ...]
) -> list[IndexingMap] | None:
    """What of ``original`` (``inner`` as written) no map of ``outers`` holds: nothing where one
    holds it whole, its dims outside one's where that one holds the rest; None where none does."""
    for outer in outers:
        if _contains(outer, inner, operand_dims):
            return []
        left = _left_outside(original, inner, outer, operand_dims)
        if left is not None:
            return left
    return None


_SPLIT_VALUES = 8  # a dim with at most this many values may be split value by value


def _left_by_values(
    original: IndexingMap, inner: IndexingMap, outers: list[IndexingMap], operand_dims: tuple[int, ...]
) -> list[IndexingMap] | None:
    """``_left_beside`` of ``inner`` pinned at each value of one short dim its results read,
    where that leaves out some value's piece; None otherwise."""
    if not outers or inner.constraints or inner.runtime_vars:
        return None
    used = {v.value for r in inner.results for v in r.variables() if v.kind == DIM}
    for k in sorted(used):
        span = inner.dims[k]
        if not 1 < span.size <= _SPLIT_VALUES:
            continue
        left: list[IndexingMap] = []
        held = False  # whether another map holds some value's piece, whole or in part
        for value in range(span.lo, span.hi + 1):
            box = [Interval(value, value) if i == k else d for i, d in enumerate(inner.dims)]
            cut = _cut_to(original, box)
            if cut is None:
                continue
            rest = _left_beside(cut, _pinned(inner, k, value), outers, operand_dims)
            held = held or rest is not None
            left.extend([cut] if rest is None else rest)
        # the pieces left are counted by their points, so each must read inside the operand (a
        # point past its end is no pair)
        if held and all(_reads_inside(piece, operand_dims) for piece in left):
            return left
    return None


def _pinned(m: IndexingMap, k: int, value: int) -> IndexingMap:
    """``m`` with dim ``k`` fixed to ``value`` in its results (the containment test compares
    results as written: ``1 - d2`` at d2 = 1 must read as ``0``)."""
    fixed = {dim(k): const(value)}
    dims = [Interval(value, value) if i == k else d for i, d in enumerate(m.dims)]
    results = [replace_variables(e, fixed.get) for e in m.results]
    return IndexingMap(dims, m.range_vars, (), results, ()).simplified()


def _left_outside(
    original: IndexingMap, inner: IndexingMap, outer: IndexingMap, operand_dims: tuple[int, ...]
) -> list[IndexingMap] | None:
    """Where ``outer``'s dims cover only part of ``inner``'s and ``inner`` cut to them is inside
    ``outer`` (a loop's first iteration reads an element its later ones read in a whole row):
    ``original`` (``inner`` as written) over the rest of its dims, in boxes apart from ``outer``'s.
    None otherwise."""
    if all(b.lo <= a.lo and a.hi <= b.hi for a, b in zip(inner.dims, outer.dims)):
        return None  # inside already: ``_contains`` said no for another reason
    cut = _cut_to(inner, outer.dims)
    if cut is None or not _contains(outer, cut, operand_dims):
        return None
    boxes = _boxes_outside(inner.dims, [outer.dims])
    left = [c for box in boxes if (c := _cut_to(original, box)) is not None]
    # counted by their points: each must read inside the operand (a point past its end is no pair)
    return left if all(_reads_inside(piece, operand_dims) for piece in left) else None


_CONTAINMENT_MAPS = 16  # maps compared pairwise at most


def _one_point_per_pair(m: IndexingMap, operand_dims: tuple[int, ...]) -> bool:
    """Whether ``m`` (no constraint, no runtime variable) reads inside the operand only, with
    each range variable a whole result of its own: its points and its pairs are then as many."""
    if m.constraints or m.runtime_vars or m.num_results != len(operand_dims):
        return False
    bare = [e.value for e in m.results if e.kind == RANGE]
    if not len(bare) == len(set(bare)) == len(m.range_vars):
        return False
    return _reads_inside(m, operand_dims)


def _reads_inside(m: IndexingMap, operand_dims: tuple[int, ...]) -> bool:
    """Whether every result of ``m`` stays inside its operand dim over the whole box of ``m``'s
    variables (constraints aside: a sufficient test)."""
    domain = Domain(m.dims, m.range_vars)
    return all((b := domain.bounds(e)).lo >= 0 and b.hi < n for e, n in zip(m.results, operand_dims))


def _contains(outer: IndexingMap, inner: IndexingMap, operand_dims: tuple[int, ...]) -> bool:
    """Whether every in-bounds (output element, operand element) pair ``inner`` reads ``outer``
    reads too: a sufficient test. ``outer`` (without constraints or runtime variables) reads at
    a point of ``inner`` what ``inner`` reads when each of its results either is ``inner``'s, a
    function of the dims alone, or is a range variable set to ``inner``'s result (the same one
    wherever it occurs) within the variable's range, which a range spanning the operand dim
    holds for every in-bounds value; ``inner``'s dims lie inside ``outer``'s."""
    if outer.constraints or outer.runtime_vars or inner.runtime_vars:
        return False
    if outer.num_dims != inner.num_dims or outer.num_results != inner.num_results:
        return False
    if any(a.lo < b.lo or a.hi > b.hi for a, b in zip(inner.dims, outer.dims)):
        return False
    domain: Domain | None = None
    chosen: dict[int, Expr] = {}
    for mine, theirs, size in zip(inner.results, outer.results, operand_dims):
        if theirs.kind == RANGE:
            value = chosen.get(theirs.value)
            if value is not None:
                if value != mine:
                    return False
                continue
            allowed = outer.range_vars[theirs.value]
            if allowed.lo > 0 or allowed.hi < size - 1:  # not the whole dim: inner's values must lie in it
                domain = domain or Domain(inner.dims, inner.range_vars)
                bounds = domain.bounds(mine)
                if bounds.lo < allowed.lo or bounds.hi > allowed.hi:
                    return False
            chosen[theirs.value] = mine
        elif mine != theirs or any(v.kind != DIM for v in theirs.variables()):
            return False
    return True


def _pairs_apart(maps: Sequence[IndexingMap]) -> bool:
    """No (output, element) pair is read by two maps: their domains are apart (a dim interval, or a
    constraint on the same expression of the dims bounded disjointly) or some result of one is the
    other's plus a nonzero constant, both functions of the dims alone (two maps' range and runtime
    variables are their own: ``s0`` of one is not ``s0`` of the other). Then the union of their
    reads is their sum."""
    for i, a in enumerate(maps):
        bounds = {e: iv for e, iv in a.constraints if _of_dims(e)}
        for b in maps[i + 1 :]:
            if any(x.hi < y.lo or y.hi < x.lo for x, y in zip(a.dims, b.dims)):
                continue
            if any(e in bounds and (bounds[e].hi < iv.lo or iv.hi < bounds[e].lo) for e, iv in b.constraints):
                continue
            if any(
                (d := x - y).is_constant and d.constant_value != 0 and _of_dims(x) and _of_dims(y)
                for x, y in zip(a.results, b.results)
            ):
                continue  # some coordinate always differs by a constant: never the same element
            if _some_coordinate_never_equal(a, b):
                continue
            return False
    return True


def _some_coordinate_never_equal(a: IndexingMap, b: IndexingMap) -> bool:
    """Whether some coordinate of ``a`` and ``b``, both functions of the dims alone, differs at
    every point of both boxes: the difference's bounds over the boxes' meet leave out zero
    (``0`` beside ``d2 * 2`` where the boxes meet at ``d2 = 1``), or the difference is a sum
    of dims whose coefficients' common divisor does not divide its constant (``1`` beside
    ``d2 * 2``)."""
    meet = [Interval(max(x.lo, y.lo), min(x.hi, y.hi)) for x, y in zip(a.dims, b.dims)]
    domain: Domain | None = None
    for x, y in zip(a.results, b.results):
        if not (_of_dims(x) and _of_dims(y)) or x == y:
            continue
        d = x - y
        constant, terms = d.linear_terms()
        if terms and all(atom.kind == DIM for atom, _ in terms):
            divisor = 0
            for _, c in terms:
                divisor = gcd(divisor, c)
            if divisor and constant % divisor:
                return True
        domain = domain or Domain(meet)
        bounds = domain.bounds(d)
        if bounds.lo > 0 or bounds.hi < 0:
            return True
    return False


def _shared_pairs(maps: Sequence[IndexingMap], operand_dims: tuple[int, ...], budget: int, seed: int) -> int | None:
    """By inclusion-exclusion, the (output element, operand element) pairs the per-map sum of
    ``maps``' points counts more than once: the sum less this is the size of their union. For maps
    that read one element per point (no range or runtime variable) inside the operand, so a map's
    points are its pairs; two maps share a pair where their domains meet and their results agree,
    which is a map of equality constraints whose points are counted (exactly, or None). None also
    past ``_INCLUSION_EXCLUSION_MAPS`` maps."""
    if len(maps) > _INCLUSION_EXCLUSION_MAPS:
        return None
    for m in maps:
        if m.range_vars or m.runtime_vars or m.num_results != len(operand_dims) or m.num_dims != maps[0].num_dims:
            return None
        if not _reads_inside(m, operand_dims):
            return None
    # sum of the points of the maps' union = sum over non-empty subsets S of (-1)^(|S|+1) |meet(S)|
    extra = 0
    for size in range(2, len(maps) + 1):
        for subset in combinations(maps, size):
            meet = _meet(subset)
            if meet is None:
                continue  # their domains do not meet
            points, exact = _element_reads(meet, budget, seed)
            if not exact:
                return None
            extra += points if size % 2 == 0 else -points
    return extra


_INCLUSION_EXCLUSION_MAPS = 4  # 11 meets


def _meet(maps: Sequence[IndexingMap]) -> IndexingMap | None:
    """The points where every map of ``maps`` (same dims, no range or runtime variable) is defined
    and all read the same element, as a map without results; None when the dim boxes are apart."""
    dims = []
    for intervals in zip(*(m.dims for m in maps)):
        lo, hi = max(iv.lo for iv in intervals), min(iv.hi for iv in intervals)
        if lo > hi:
            return None
        dims.append((lo, hi))
    first = maps[0]
    constraints = [c for m in maps for c in m.constraints]
    constraints += [(b - a, Interval(0, 0)) for m in maps[1:] for a, b in zip(first.results, m.results) if a != b]
    return IndexingMap(dims, (), (), (), constraints)


def _of_dims(e: Expr) -> bool:
    """Whether ``e`` is a function of the dims alone (the output's coordinates two maps share)."""
    return all(v.kind == DIM for v in e.variables())


def _whole_read_domain(m: IndexingMap, space: Sequence[int], operand_dims: tuple[int, ...]) -> IndexingMap | None:
    """``m``'s domain as a map without results, where each of its points reads every element of
    the operand (results of range variables alone covering the operand, constraints on the dims
    alone); else None."""
    if m.runtime_vars:
        return None
    if any(v.kind != DIM for e, _ in m.constraints for v in e.variables()):
        # range variables clamped to the operand (a whole program's convolution window)
        if not reads_whole_operand(m, operand_dims):
            return None
        return IndexingMap(m.dims, (), (), (), [(e, b) for e, b in m.constraints if _of_dims(e)])
    box = full_box(tuple(space))
    # a map over the whole space without constraints is its own probe (its answer is memoised)
    probe = m if not m.constraints and m.dims == box else IndexingMap(box, m.range_vars, (), m.results, ())
    if not is_full_read(probe, tuple(space), operand_dims):
        return None
    return IndexingMap(m.dims, (), (), (), m.constraints)


def _pairs_beside_whole_reads(
    whole: Sequence[IndexingMap], rest: Sequence[IndexingMap], space: Sequence[int], operand_dims: tuple[int, ...]
) -> int:
    """Distinct (output element, operand element) pairs: every operand element for the points of
    ``space`` (from 0) in one of the ``whole`` domains (maps without results), and elsewhere the
    in-bounds elements ``rest`` read there (runtime variables at their lower bounds); with no
    ``whole`` domain, the union of ``rest``'s pairs."""
    total = prod(operand_dims)
    rank = len(space)

    def inside(x: Sequence[int]) -> bool:
        return all(0 <= v < n for v, n in zip(x, operand_dims))

    if sum(box_points(m) for m in (*whole, *rest)) <= LISTED_IN_PYTHON:  # a few thousand points: no numpy
        covered: set[tuple[int, ...]] = set()
        for d in whole:
            covered.update(p for p in relation_on_lists(d) if all(x >= 0 for x in p))
        pairs: set[tuple[int, ...]] = set()
        for m in rest:
            for r in relation_on_lists(m, [rv.interval.lo for rv in m.runtime_vars]):
                if all(x >= 0 for x in r[:rank]) and r[:rank] not in covered and inside(r[rank:]):
                    pairs.add(r)
        return len(covered) * total + len(pairs)
    import numpy as np

    from ..affine.evaluate import relation_at

    grid = _output_grid(space)
    outputs = max(prod(space), 1)

    def linear(rows: np.ndarray, dims: Sequence[int]) -> np.ndarray:
        return np.ravel_multi_index(tuple(rows.T), tuple(dims)) if len(dims) else np.zeros(len(rows), dtype=np.int64)

    mask = np.zeros(outputs, dtype=bool)
    for d in whole:
        feasible, _ = relation_at(d, grid, [])
        mask[linear(feasible, space)] = True
    dims_arr = np.asarray(operand_dims, dtype=np.int64)
    per_map = []  # (output, operand element) linear pairs of each of ``rest``, outside the whole reads
    for m in rest:
        feasible, results = relation_at(m, grid, [rv.interval.lo for rv in m.runtime_vars])
        keep = np.all((results >= 0) & (results < dims_arr), axis=1)  # all True for a scalar operand
        out_lin = linear(feasible[:, :rank], space)
        keep &= ~mask[out_lin]
        per_map.append((out_lin[keep], linear(results[keep], operand_dims)))
    whole_pairs = int(np.count_nonzero(mask)) * total
    if any(m.range_vars for m in rest):
        keys = np.concatenate([out_lin * max(total, 1) + in_lin for out_lin, in_lin in per_map])
        return whole_pairs + int(distinct_sorted(keys).size)
    # at most one element per map and output point: per point, the distinct values of the maps
    table = np.full((max(len(rest), 1), outputs), -1, dtype=np.int64)
    for k, (out_lin, in_lin) in enumerate(per_map):
        table[k, out_lin] = in_lin
    table.sort(axis=0)
    fresh = (table[1:] != table[:-1]) & (table[1:] >= 0)
    return whole_pairs + int(np.count_nonzero(table[0] >= 0) + np.count_nonzero(fresh))


def _boxes_outside(space: Sequence[Interval], pieces: Sequence[Sequence[Interval]]) -> list[list[Interval]]:
    """Disjoint boxes that together are the points of the box ``space`` in none of ``pieces``:
    each piece cut out of every box left, one slab per side of each dim."""
    left = [list(space)]
    for piece in pieces:
        after = []
        for box in left:
            inner = [Interval(max(a.lo, b.lo), min(a.hi, b.hi)) for a, b in zip(box, piece)]
            if any(iv.lo > iv.hi for iv in inner):
                after.append(box)  # apart from the piece: kept whole
                continue
            rest = list(box)
            for i, (outer, mid) in enumerate(zip(box, inner)):
                if outer.lo < mid.lo:
                    after.append([*rest[:i], Interval(outer.lo, mid.lo - 1), *rest[i + 1 :]])
                if mid.hi < outer.hi:
                    after.append([*rest[:i], Interval(mid.hi + 1, outer.hi), *rest[i + 1 :]])
                rest[i] = mid  # the dims after this one are cut within the piece's interval here
        left = after
    return left


def _cut_to(m: IndexingMap, box: Sequence[Interval]) -> IndexingMap | None:
    """``m`` over the part of its dims inside ``box``; None where they do not meet."""
    dims = [Interval(max(a.lo, b.lo), min(a.hi, b.hi)) for a, b in zip(m.dims, box)]
    if any(iv.lo > iv.hi for iv in dims):
        return None
    return m.with_dims(dims)


def _output_grid(space: Sequence[int]) -> np.ndarray:
    """Every point of ``space`` (from 0), row-major, as an int64 array ``[points, rank]``."""
    import numpy as np

    axes = [np.arange(0, extent, dtype=np.int64) for extent in space]
    if not axes:
        return np.zeros((1, 0), dtype=np.int64)
    return np.stack([g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")], axis=1)


def _union_reads(maps: Sequence[IndexingMap], operand_dims: tuple[int, ...], budget: int) -> int | None:
    """Distinct (output element, operand element) pairs over the *union* of ``maps`` (range
    variables projected away; runtime variables at their lower bounds, as for one map), so an
    element two maps both read for one output element counts once. None beyond the budget."""
    space = [max(m.dims[i].hi for m in maps) + 1 for i in range(maps[0].num_dims)]
    outputs = prod(space)
    if any(is_full_read(m, tuple(space), operand_dims) for m in maps):
        # every output element reads every operand element through one map: the other maps add
        # no pair (a softmax's row read directly and again through its reduction, broadcast back)
        return outputs * prod(operand_dims)
    domains = [_whole_read_domain(m, space, operand_dims) for m in maps]
    box = full_box(tuple(space))
    if any(d is not None and not d.constraints and d.dims == box for d in domains):
        return outputs * prod(operand_dims)  # one map reads everything everywhere, as above
    whole = [d for d in domains if d is not None]
    rest = [m for m, d in zip(maps, domains) if d is None]
    limit = min(budget, current().budgets.utilization_union_points)
    if whole and rest and all(not d.constraints for d in whole):
        # whole reads on boxes of the output (a loop's later iterations): the other maps count
        # only on the boxes left over, each map cut to them
        outside = _boxes_outside(box, [d.dims for d in whole])
        cut = [c for m in rest for box in outside if (c := _cut_to(m, box)) is not None]
        listed = sum(box_points(m) for m in cut)
        # listed on Python lists, or on numpy over the output's grid, which must fit as the
        # other paths' grids do
        if listed <= limit and (listed <= LISTED_IN_PYTHON or outputs <= 4 * budget):
            charge(listed)
            covered = outputs - sum(prod(b.size for b in box) for box in outside)
            pairs = _pairs_beside_whole_reads((), cut, space, operand_dims) if cut else 0
            return covered * prod(operand_dims) + pairs
    if whole and outputs * len(whole) <= 4 * budget:
        # maps that read the whole operand at each point of their domains (a reduction's result
        # broadcast back over pieces of the output): an output element in one of those domains
        # reads every operand element, whatever else reads; elsewhere, what the other maps read
        listed = sum(box_points(m) for m in rest)
        fits = (listed <= limit) if any(m.range_vars for m in rest) else (outputs * len(rest) <= 4 * budget)
        if fits:
            charge(outputs * len(whole) + listed)
            return _pairs_beside_whole_reads(whole, rest, space, operand_dims)
    if any(m.range_vars for m in maps):
        if sum(box_points(m) for m in maps) > limit:
            return None
    elif outputs * len(maps) > 4 * budget:
        return None
    charge(outputs * len(maps))
    return _pairs_beside_whole_reads((), maps, space, operand_dims)


# ---- boxes: each result an affine function of its own variable ----------------------------


@dataclass(frozen=True)
class _Box:
    """Read set ``prod_r {first_r + step_r * i : i < count_r}``."""

    progressions: tuple[tuple[int, int, int], ...]  # per result: (first, step, count)

    @property
    def distinct(self) -> int:
        return prod(c for _, _, c in self.progressions)


def _variables(m: IndexingMap) -> list[Expr]:
    return [dim(i) for i in range(m.num_dims)] + [range_var(i) for i in range(len(m.range_vars))]


def _narrowed_bounds(m: IndexingMap) -> dict | None:
    """Every dim / range var's interval narrowed by the constraints, when each constraint is
    ``c * v + k in [lo, hi]`` of one dim or range variable; None otherwise."""
    bounds = {}
    for v in _variables(m):
        iv = m.dims[v.value] if v.kind == DIM else m.range_vars[v.value]
        bounds[v] = (iv.lo, iv.hi)
    for expr, interval in m.constraints:
        vs = expr.variables()
        if len(vs) != 1:
            return None
        (v,) = vs
        split = split_linear(expr, vs)
        if v.kind == RUNTIME or split is None or not split[0].is_constant:
            return None
        k, c = split[0].constant_value, split[1].get(v, 0)
        if c == 0:
            return None
        lo, hi = interval.lo - k, interval.hi - k
        lo, hi = (-(-lo // c), hi // c) if c > 0 else (-(-hi // c), lo // c)
        prev = bounds[v]
        bounds[v] = (max(lo, prev[0]), min(hi, prev[1]))
    return bounds


def _points(m: IndexingMap, bounds: dict) -> int:
    return prod(max(0, hi - lo + 1) for lo, hi in bounds.values())


def _box(m: IndexingMap) -> _Box | None:
    if m.runtime_vars:
        return None
    bounds = _narrowed_bounds(m)
    if bounds is None:
        return None
    if _points(m, bounds) == 0:
        return _Box(tuple((0, 0, 0) for _ in m.results))
    used: set = set()
    progressions = []
    for expr in m.results:
        vs = expr.variables()
        if not vs:
            progressions.append((expr.constant_value, 0, 1))
            continue
        if len(vs) > 1 or (vs & used):
            return None
        (v,) = vs
        split = split_linear(expr, vs)
        if split is None or not split[0].is_constant:
            return None
        used |= vs
        c, k = split[1].get(v, 0), split[0].constant_value
        lo, hi = bounds[v]
        progressions.append((min(c * lo, c * hi) + k, abs(c), hi - lo + 1 if c else 1))
    return _Box(tuple(progressions))


def _from_boxes(base, boxes, reads, dims, shape, bits, runtime_union, notes) -> Utilization:
    total = prod(dims)
    bitmap_limit = current().budgets.utilization_bitmap_elements
    if len(boxes) == 1 and (bits % 8 == 0 or total > bitmap_limit):
        distinct = boxes[0].distinct
        return Utilization(
            **base,
            distinct_elements=distinct,
            distinct_upper_bound=distinct,
            element_reads=reads,
            bytes_read=_bytes_dense(distinct, bits),
            method="interval",
            exact=bits % 8 == 0,
            runtime_union=runtime_union,
            notes=tuple(notes),
        )
    union = _boxes_union(boxes) if bits % 8 == 0 else None
    if union is not None:  # counted, not marked: exact however large the operand
        return _counted_boxes(base, union, reads, bits, runtime_union, notes)
    if total > bitmap_limit:
        lower = max(b.distinct for b in boxes)
        upper = min(total, sum(b.distinct for b in boxes))
        notes.append("several boxes over an operand too large to mark: distinct is a lower bound")
        return Utilization(
            **base,
            distinct_elements=lower,
            distinct_upper_bound=upper,
            element_reads=reads,
            bytes_read=_bytes_dense(lower, bits),
            method="interval",
            exact=False,
            runtime_union=runtime_union,
            notes=tuple(notes),
        )
    if bits % 8 == 0 and sum(b.distinct for b in boxes) <= _LISTED_BOX_ELEMENTS:
        # few elements in all (five boxes of one element each): listed, not marked
        listed: set = set()
        for b in boxes:
            charge(b.distinct)
            listed.update(product(*(_progression_values(p, n) for p, n in zip(b.progressions, dims))))
        return _counted_boxes(base, len(listed), reads, bits, runtime_union, notes)
    import numpy as np

    marked = np.zeros(dims, dtype=bool)
    charge(marked.size // 16)
    for b in boxes:
        marked[tuple(_slice(p) for p in b.progressions)] = True
    distinct = int(marked.sum())
    return Utilization(
        **base,
        distinct_elements=distinct,
        distinct_upper_bound=distinct,
        element_reads=reads,
        bytes_read=_bytes_marked(marked, shape, bits),
        method="interval",
        exact=True,
        runtime_union=runtime_union,
        notes=tuple(notes),
    )


def _counted_boxes(base, distinct: int, reads, bits: int, runtime_union: bool, notes: list[str]) -> Utilization:
    """The utilization of boxes of whole-byte elements whose union was counted exactly."""
    return Utilization(
        **base,
        distinct_elements=distinct,
        distinct_upper_bound=distinct,
        element_reads=reads,
        bytes_read=distinct * bits // 8,
        method="interval",
        exact=True,
        runtime_union=runtime_union,
        notes=tuple(notes),
    )


def _boxes_union(boxes: Sequence[_Box]) -> int | None:
    """The elements of the union of up to ``_INCLUSION_EXCLUSION_MAPS`` boxes, by
    inclusion-exclusion over their intersections (``_meet_progressions``); None past that many."""
    if len(boxes) > _INCLUSION_EXCLUSION_MAPS:
        return None
    total = 0
    for size in range(1, len(boxes) + 1):
        for subset in combinations(boxes, size):
            count = 1
            for progressions in zip(*(b.progressions for b in subset)):
                meet = progressions[0]
                for other in progressions[1:]:
                    meet = _meet_progressions(meet, other)
                    if meet is None:
                        return None
                count *= meet[2]
                if not count:
                    break
            total += count if size % 2 else -count
    return total


def _meet_progressions(p: tuple[int, int, int], q: tuple[int, int, int]) -> tuple[int, int, int] | None:
    """The common values of two progressions ``(first, step, count)`` as one: where both step, those
    of the least common multiple of the steps from the first common value (Chinese remainders);
    None only for a progression of several values without a step (``_box`` makes none)."""
    if p[2] == 0 or q[2] == 0:
        return (0, 1, 0)
    if p[2] == 1 or q[2] == 1:
        point, other = (p, q) if p[2] == 1 else (q, p)
        v, (first, step, count) = point[0], other
        inside = first <= v <= first + step * (count - 1) and (step == 0 or (v - first) % step == 0)
        return (v, 1, 1 if inside else 0)
    (a, s, n), (b, t, m) = p, q
    if s <= 0 or t <= 0:
        return None
    g = gcd(s, t)
    if (b - a) % g:
        return (0, 1, 0)  # a + s i = b + t j has no solution
    # the least i >= 0 with a + s i = b (mod t): s/g is invertible modulo t/g
    i = (b - a) // g * pow(s // g, -1, t // g) % (t // g)
    common, step = a + s * i, s // g * t
    low, high = max(a, b), min(a + s * (n - 1), b + t * (m - 1))
    first = common + max(0, -(-(low - common) // step)) * step
    return (first, step, (high - first) // step + 1) if first <= high else (0, 1, 0)


_LISTED_BOX_ELEMENTS = 1 << 12  # boxes with no more elements in all are listed, not marked


def _progression_values(progression: tuple[int, int, int], dim: int) -> list[int]:
    """The values of ``(first, step, count)`` inside ``[0, dim)``."""
    first, step, count = progression
    return [v for v in range(first, first + max(step, 1) * count, max(step, 1)) if 0 <= v < dim]


def _slice(progression: tuple[int, int, int]) -> slice:
    first, step, count = progression
    if count == 0:
        return slice(0, 0)
    return slice(first, first + max(step, 1) * (count - 1) + 1, max(step, 1))


# ---- enumeration by components -------------------------------------------------------------


def _from_components(
    base, maps, reads, reads_exact, dims, shape, bits, runtime_union, notes, budget, seed
) -> Utilization:
    total = prod(dims)
    decs = [decompose(m, dims, budget=budget, seed=seed) for m in maps]
    sampled = not all(d.distinct_exact for d in decs)
    bitmap_limit = current().budgets.utilization_bitmap_elements
    mark_limit = min(budget, bitmap_limit)
    apart = None if sampled or bits % 8 or len(decs) < 2 else _union_one_component_apart(decs, mark_limit)
    need_marks = apart is None and (len(decs) > 1 or bits % 8 != 0)
    # one map of whole bytes reading every element: the union is the whole operand, known without
    # marking (charged as the marking would be)
    whole = need_marks and bits % 8 == 0 and any(d.distinct_exact and d.distinct == total for d in decs)
    if need_marks and total <= bitmap_limit and not whole:
        indices = [linear_indices(d, dims, mark_limit) for d in decs]
    else:  # one map of whole bytes, or an operand too large to mark: the indices would go unused
        for d in decs:
            charge_linear_indices(d, mark_limit)
        indices = []
    if apart is not None:
        lower = upper = apart
        nbytes = apart * bits // 8
    elif whole and total <= bitmap_limit and all(lists_indices(d, mark_limit) for d in decs):
        charge(total // 16)
        lower = upper = total
        nbytes = total * bits // 8
    elif need_marks and all(i is not None for i in indices) and total <= bitmap_limit and not whole:
        import numpy as np

        marked = np.zeros(total, dtype=bool)
        charge(total // 16)
        for linear in indices:
            marked[linear] = True
        lower = int(np.count_nonzero(marked))
        upper = lower if not sampled else min(total, sum(d.distinct_upper for d in decs))
        upper = max(upper, lower)
        nbytes = _bytes_marked(marked.reshape(dims), shape, bits)
    elif whole:
        # one map reads every element: the union is the operand, whatever the others' counts
        lower = upper = total
        nbytes = total * bits // 8
        sampled = False
    elif len(decs) == 1:
        lower, upper = decs[0].distinct, decs[0].distinct_upper
        nbytes = _bytes_dense(lower, bits)
        sampled = sampled or bits % 8 != 0
    else:
        lower = max(d.distinct for d in decs)
        upper = min(total, sum(d.distinct_upper for d in decs))
        nbytes = _bytes_dense(lower, bits)
        sampled = sampled or lower != upper
        if lower != upper:
            notes.append(
                f"several maps too large to union element by element: distinct elements lie in [{lower}, {upper}]"
            )
    exact = not sampled and lower == upper and reads_exact
    if sampled and lower != upper:
        notes.append(
            f"a component above the enumeration budget {budget} was sampled: "
            f"distinct elements lie in [{lower}, {upper}]"
        )
    if not reads_exact:
        notes.append("element reads estimated from a sample")
    method = "enumeration" if not sampled and reads_exact else "sampled"
    return Utilization(
        **base,
        distinct_elements=lower,
        distinct_upper_bound=upper,
        element_reads=reads,
        bytes_read=nbytes,
        method=method,
        exact=exact,
        runtime_union=runtime_union,
        notes=tuple(notes),
    )


def _component_rows(c: Component):
    """What identifies a component's rows: its box, or its listed rows as tuples."""
    if c.box is not None:
        return ("box", c.box, c.start)
    listed = c.listed
    if type(listed) is tuple:
        return listed
    return ("array", listed.shape, listed.tobytes())  # type: ignore[union-attr]


def _one_component_apart(decs: list[Decomposition]) -> int | None:
    """The one position at which the decompositions' components differ, where every other
    component is the same in all of them (the same results, the same listed rows or box): their
    union is then those components times the union of the differing ones. -1 when they are all
    alike; None when they are not so (a count without rows, another partition of the results)."""
    first = decs[0].components
    if any(len(d.components) != len(first) for d in decs):
        return None
    if any(c.listed_count is None for d in decs for c in d.components):
        return None
    if any(c.results != f.results for d in decs[1:] for c, f in zip(d.components, first)):
        return None
    keys = [[_component_rows(c) for c in d.components] for d in decs]
    differing = {j for row in keys[1:] for j, (a, b) in enumerate(zip(row, keys[0])) if a != b}
    if len(differing) > 1:
        return None
    return differing.pop() if differing else -1


def _union_one_component_apart(decs: list[Decomposition], limit: int) -> int | None:
    """Distinct elements the decompositions read together, where they are one component apart
    (``_one_component_apart``): the rows of the differing component unioned (at most ``limit``
    of them listed), times the other components' counts. A rotary embedding's three maps of one
    table share the rows and differ in the columns, 512 x (256 + 128 + 128) rows, not 3 x 131,072
    marks."""
    j = _one_component_apart(decs)
    if j is None:
        return None
    if j == -1:
        return decs[0].distinct
    if sum(d.components[j].distinct for d in decs) > limit:
        return None
    union: set = set()
    for d in decs:
        c = d.components[j]
        charge(c.distinct)
        if c.box is not None:
            start = c.start or (0,) * len(c.box)
            union.update(product(*(range(lo, lo + size) for lo, size in zip(start, c.box))))
        else:
            listed = c.listed
            union.update(listed if type(listed) is tuple else map(tuple, listed.tolist()))  # type: ignore[union-attr]
    others = prod(c.distinct for k, c in enumerate(decs[0].components) if k != j)
    return others * len(union)


# ---- bytes ---------------------------------------------------------------------------------


def _bytes_dense(distinct: int, bits: int) -> int:
    return ceil(distinct * bits / 8)


def _bytes_marked(marked: np.ndarray, shape: Shape, bits: int) -> int:
    """Distinct storage bytes touched by the marked elements (exact for sub-byte types)."""
    import numpy as np

    distinct = int(np.count_nonzero(marked))
    if bits % 8 == 0 or shape.rank == 0 or distinct == 0:
        return ceil(distinct * bits / 8)
    from ..layout import LayoutError, layout_plan

    try:
        plan = layout_plan(shape)
    except LayoutError:
        plan = None  # read as row-major, as everywhere a layout cannot be used
    if (plan is None or not plan.steps) and 8 % bits == 0:
        # Elements in storage order (the array transposed major to minor), where no element
        # straddles a byte: the bytes touched are the runs of 8 / bits elements holding a mark.
        # Boolean arithmetic: an index array per element would take 8 bytes an element.
        in_order = (marked if plan is None else marked.transpose(plan.major_to_minor)).reshape(-1)
        per = 8 // bits
        whole = in_order.size // per * per
        return int(np.count_nonzero(in_order[:whole].reshape(-1, per).any(axis=1))) + bool(in_order[whole:].any())
    return _bytes_marked_tiled(marked, shape, bits, plan)


def _bytes_marked_tiled(marked: np.ndarray, shape: Shape, bits: int, plan: LayoutPlan | None) -> int:
    """``_bytes_marked`` through the layout's offsets (row-major without a usable layout), a
    bounded chunk of elements at a time: offsets of every element at once took 4 GB for 63 M."""
    import numpy as np

    from ..layout import layout_cells

    flat = marked.reshape(-1)
    stored = flat.size if plan is None else prod(plan.physical_dims)
    touched = np.zeros((stored * bits + 7) // 8 + 1, dtype=bool)
    chunk = 1 << 20
    for start in range(0, flat.size, chunk):
        offsets = np.flatnonzero(flat[start : start + chunk]) + start
        if plan is not None and offsets.size:
            offsets = layout_cells(shape, np.stack(np.unravel_index(offsets, shape.dims), axis=1))[0]
        touched[offsets * bits // 8] = True
        touched[((offsets + 1) * bits - 1) // 8] = True
    return int(np.count_nonzero(touched))


# ---- the read set itself -------------------------------------------------------------------


def read_mask(maps: Sequence[IndexingMap], operand_dims: Sequence[int], *, seed: int = 0) -> np.ndarray | None:
    """Which operand elements ``maps`` read (runtime values unioned), as a boolean array shaped
    like the operand; None when a map is undefined, or the set is sampled or too large to mark
    (beyond the context's utilization budgets)."""
    import numpy as np

    if any(m.is_undefined for m in maps):
        return None
    dims = tuple(operand_dims)
    total = prod(dims)
    budgets = current().budgets
    if total > budgets.utilization_bitmap_elements:
        return None
    marked = np.zeros(dims, dtype=bool)
    charge(total // 16)
    for m in maps:
        if m.is_known_empty:
            continue
        m = runtime_as_range(m)
        box = _box(m)
        if box is not None:
            marked[tuple(_slice(p) for p in box.progressions)] = True
            continue
        dec = decompose(m, dims, budget=budgets.utilization_component_points, seed=seed)
        if not dec.distinct_exact:
            return None
        linear = linear_indices(dec, dims, min(budgets.utilization_component_points, total))
        if linear is None:
            return None
        marked.reshape(-1)[linear] = True
    return marked
