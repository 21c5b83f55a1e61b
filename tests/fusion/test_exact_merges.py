"""Exact compaction of map sets: domain unions, whole-box images, containment in box readers.

Every map here is built from random integer formulas that the test also evaluates in plain
Python; the relation a merged set stands for (every (output point, operand element) pair) must be
exactly the union the pieces' formulas give, point by point. Constructive cases check that the
merge also happens where it must (pieces of one domain, strips filling a box, a whole-box read).
"""

from __future__ import annotations

import itertools

from hypothesis import event, given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, const, dim, range_var
from hlo_index.context import AnalysisContext
from hlo_index.fusion.domain_union import domain_join
from hlo_index.fusion.image_union import reads_fixed_set, whole_box_of
from hlo_index.fusion.mapset import distinct, finalize, is_overflow, union
from hlo_index.fusion.merge import compact_maps
from hlo_index.fusion.subsume import drop_subsumed, read_box

SETTINGS = settings(deadline=None, derandomize=True, max_examples=80)


# ----------------------------------------------------------------------------- plain-Python truth
class Piece:
    """One access pattern given twice: as an IndexingMap, and as Python formulas.

    dims: (lo, hi) per dimension; dim_rule: (k, a, b, m, lo, hi) for ``(a*d_k + b) mod m in [lo, hi]``
    or None; ranges: (lo, hi) per range variable; results: per result (coefficients on dims,
    coefficients on range variables, constant, divisor or 0, kind 'floordiv'|'mod'|None);
    mixed: (k, j, m, lo, hi) for ``(d_k + s_j) mod m in [lo, hi]`` or None."""

    def __init__(self, dims, ranges, results, dim_rule=None, mixed=None):
        self.dims, self.ranges, self.results = dims, ranges, results
        self.dim_rule, self.mixed = dim_rule, mixed

    def _value(self, spec, d, s):
        cd, cs, c0, q, kind = spec
        v = c0 + sum(a * x for a, x in zip(cd, d)) + sum(a * x for a, x in zip(cs, s))
        if kind == "floordiv":
            return v // q
        if kind == "mod":
            return v % q
        return v

    def _expr(self, spec):
        cd, cs, c0, q, kind = spec
        e = const(c0)
        for i, a in enumerate(cd):
            if a:
                e = e + dim(i) * a
        for j, a in enumerate(cs):
            if a:
                e = e + range_var(j) * a
        if kind == "floordiv":
            return e.floordiv(q)
        if kind == "mod":
            return e.mod(q)
        return e

    def in_domain(self, d) -> bool:
        if not all(lo <= x <= hi for x, (lo, hi) in zip(d, self.dims)):
            return False
        if self.dim_rule:
            k, a, b, m, lo, hi = self.dim_rule
            if not lo <= (a * d[k] + b) % m <= hi:
                return False
        return True

    def reads(self, d) -> set:
        if not self.in_domain(d):
            return set()
        out = set()
        for s in itertools.product(*(range(lo, hi + 1) for lo, hi in self.ranges)):
            if self.mixed:
                k, j, m, lo, hi = self.mixed
                if not lo <= (d[k] + s[j]) % m <= hi:
                    continue
            out.add(tuple(self._value(spec, d, s) for spec in self.results))
        return out

    def to_map(self) -> IndexingMap:
        constraints = []
        if self.dim_rule:
            k, a, b, m, lo, hi = self.dim_rule
            constraints.append(((dim(k) * a + b).mod(m), Interval(lo, hi)))
        if self.mixed:
            k, j, m, lo, hi = self.mixed
            constraints.append(((dim(k) + range_var(j)).mod(m), Interval(lo, hi)))
        return IndexingMap(
            [Interval(lo, hi) for lo, hi in self.dims],
            [Interval(lo, hi) for lo, hi in self.ranges],
            (),
            [self._expr(spec) for spec in self.results],
            constraints,
        ).simplified()


def truth(pieces, box) -> set:
    return {(d, r) for p in pieces for d in itertools.product(*(range(n) for n in box)) for r in p.reads(d)}


def relation(maps, box) -> set:
    """The relation of IndexingMaps, by the map engine's evaluation (the definition of a map's
    meaning; it shares nothing with the merge logic)."""
    out = set()
    for m in maps:
        assert not m.is_undefined
        if m.is_known_empty:
            continue
        for d in itertools.product(*(range(n) for n in box)):
            if all(iv.lo <= x <= iv.hi for x, iv in zip(d, m.dims)):
                out |= {(d, r) for r in m.read_set(d)}
    return out


# ----------------------------------------------------------------------------------- strategies
@st.composite
def sub_box(draw, box):
    out = []
    for n in box:
        lo = draw(st.integers(0, n - 1))
        out.append((lo, draw(st.integers(lo, n - 1))))
    return out


@st.composite
def dim_rule(draw, rank):
    if not draw(st.booleans()):
        return None
    m = draw(st.integers(2, 5))
    lo = draw(st.integers(0, m - 1))
    return (
        draw(st.integers(0, rank - 1)),
        draw(st.sampled_from([1, 1, 2, -1])),
        draw(st.integers(0, 4)),
        m,
        lo,
        draw(st.integers(lo, m - 1)),
    )


@st.composite
def body(draw, rank, dims_in_results=True):
    """Range variables, results and the mixed constraint shared by the pieces of one test."""
    ranges = draw(
        st.lists(
            st.tuples(st.integers(0, 2), st.integers(0, 3)).map(lambda t: (t[0], t[0] + t[1])), min_size=0, max_size=2
        )
    )
    results = []
    for _ in range(draw(st.integers(1, 2))):
        cd = [draw(st.integers(-2, 2)) if dims_in_results else 0 for _ in range(rank)]
        cs = [draw(st.integers(-2, 3)) for _ in ranges]
        kind = draw(st.sampled_from([None, None, "floordiv", "mod"]))
        results.append((cd, cs, draw(st.integers(0, 6)), draw(st.integers(2, 4)), kind))
    mixed = None
    if ranges and dims_in_results and draw(st.booleans()):
        m = draw(st.integers(2, 4))
        lo = draw(st.integers(0, m - 1))
        mixed = (
            draw(st.integers(0, rank - 1)),
            draw(st.integers(0, len(ranges) - 1)),
            m,
            lo,
            draw(st.integers(lo, m - 1)),
        )
    return ranges, results, mixed


boxes = st.lists(st.integers(1, 9), min_size=1, max_size=2)


# ------------------------------------------------------------------------------- domain unions
@SETTINGS
@given(data=st.data(), box=boxes)
def test_domain_join_is_the_exact_union_or_nothing(data, box):
    ranges, results, mixed = data.draw(body(len(box)))
    first = data.draw(sub_box(box))
    if data.draw(st.booleans()):  # often: the second piece continues the first along one dimension
        k = data.draw(st.integers(0, len(box) - 1))
        lo = min(first[k][1] + data.draw(st.integers(0, 1)), box[k] - 1)
        second = list(first)
        second[k] = (lo, data.draw(st.integers(lo, box[k] - 1)))
    else:
        second = data.draw(sub_box(box))
    rule_a = data.draw(dim_rule(len(box)))
    rule_b = rule_a if data.draw(st.booleans()) else data.draw(dim_rule(len(box)))
    pieces = [Piece(first, ranges, results, rule_a, mixed), Piece(second, ranges, results, rule_b, mixed)]
    maps = [p.to_map() for p in pieces]
    assert relation(maps, box) == truth(pieces, box)
    joined = domain_join(*maps)
    event(f"joined: {joined is not None}")
    if joined is not None:
        assert relation([joined], box) == truth(pieces, box)


@SETTINGS
@given(data=st.data(), box=boxes, period=st.integers(2, 5))
def test_a_domain_cut_by_a_congruence_joins_back_into_one_map(data, box, period):
    """The pieces ``d_k mod p in [0, h-1]`` and ``d_k mod p in [h, p-1]`` of one box (what a
    rotary embedding's half-split leaves) are the whole box again."""
    ranges, results, mixed = data.draw(body(len(box)))
    k = data.draw(st.integers(0, len(box) - 1))
    cut = data.draw(st.integers(1, period - 1))
    dims = data.draw(sub_box(box))
    pieces = [
        Piece(dims, ranges, results, (k, 1, 0, period, 0, cut - 1), mixed),
        Piece(dims, ranges, results, (k, 1, 0, period, cut, period - 1), mixed),
    ]
    maps = [p.to_map() for p in pieces]
    if (
        any(m.is_known_empty for m in maps)
        or maps[0].results != maps[1].results
        or maps[0].range_vars != maps[1].range_vars
    ):
        return  # the simplifier specialised one piece's formula to its domain: another rule's case
    joined = domain_join(*maps)
    assert joined is not None
    assert relation([joined], box) == truth(pieces, box) == truth([Piece(dims, ranges, results, None, mixed)], box)


# ----------------------------------------------------------------------------- whole-box images
@SETTINGS
@given(
    rows=st.integers(1, 4),
    period=st.integers(2, 6),
    strips=st.integers(1, 4),
    cut=st.integers(1, 5),
    drop=st.integers(-1, 2),
    shift=st.integers(-1, 2),
    out_box=boxes,
    rule=st.data(),
)
def test_strips_that_fill_a_box_become_one_whole_box_read(rows, period, strips, cut, drop, shift, out_box, rule):
    """Column strips ``x mod p in [0, h-1]`` and ``[h, p-1]`` of a ``rows x (p*strips)`` operand,
    read at every output point, are one whole-box read; a dropped or shifted strip is not."""
    cut = min(cut, period - 1)
    width = period * strips
    dims = [(0, n - 1) for n in out_box]
    rule_ = rule.draw(dim_rule(len(out_box)))
    zero = [0] * len(out_box)
    low = Piece(
        dims,
        [(0, rows - 1), (0, cut - 1), (0, strips - 1)],
        [(zero, [1, 0, 0], 0, 0, None), (zero, [0, 1, period], 0, 0, None)],
        rule_,
    )
    high = Piece(
        dims,
        [(0, rows - 1), (0, period - cut - 1), (0, strips - 1)],
        [(zero, [1, 0, 0], 0, 0, None), (zero, [0, 1, period], cut + max(shift, 0), 0, None)],
        rule_,
    )
    pieces = [p for k, p in enumerate([low, high]) if k != drop]
    maps = [p.to_map() for p in pieces]
    if any(m.is_known_empty for m in maps):
        return
    assert all(reads_fixed_set(m) for m in maps)
    whole = whole_box_of(maps)
    fills = drop not in (0, 1) and shift <= 0
    if whole is not None:
        assert relation([whole], out_box) == truth(pieces, out_box)
    if fills:
        assert whole is not None
        assert relation([whole], out_box) == truth(
            [
                Piece(
                    dims,
                    [(0, rows - 1), (0, width - 1)],
                    [(zero, [1, 0], 0, 0, None), (zero, [0, 1], 0, 0, None)],
                    rule_,
                )
            ],
            out_box,
        )


@SETTINGS
@given(data=st.data(), box=boxes, count=st.integers(2, 4))
def test_fixed_set_readers_join_only_into_their_exact_union(data, box, count):
    dims = [(0, n - 1) for n in box]
    width = data.draw(st.integers(1, 2))
    pieces = []
    for _ in range(count):
        ranges, results, _ = data.draw(body(len(box), dims_in_results=False))
        pieces.append(Piece(dims, ranges, (results * width)[:width], None))
    maps = [p.to_map() for p in pieces]
    if any(m.is_known_empty for m in maps):
        return
    whole = whole_box_of(maps)
    event(f"whole box: {whole is not None}")
    if whole is not None:
        assert relation([whole], box) == truth(pieces, box)


# ---------------------------------------------------------------------------------- containment
@SETTINGS
@given(data=st.data(), box=boxes, count=st.integers(1, 4))
def test_dropping_maps_inside_a_box_reader_keeps_the_union(data, box, count):
    read = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=2))
    rule_ = data.draw(dim_rule(len(box)))
    zero = [0] * len(box)
    reader = Piece(
        data.draw(sub_box(box)),
        [(0, n - 1) for n in read],
        [(zero, [1 if j == k else 0 for j in range(len(read))], 0, 0, None) for k in range(len(read))],
        rule_,
    )
    others = []
    for _ in range(count):
        ranges, results, mixed = data.draw(body(len(box)))
        results = (results * len(read))[: len(read)]
        if data.draw(st.booleans()):  # often: results that stay inside the box, on the reader's domain
            results = [(cd, cs, c0, read[k], "mod") for k, (cd, cs, c0, q, kind) in enumerate(results)]
            domain = data.draw(sub_box([hi + 1 for _, hi in reader.dims]))
            domain = [
                (max(lo, rlo), hi) if max(lo, rlo) <= hi else (rlo, rhi)
                for (lo, hi), (rlo, rhi) in zip(domain, reader.dims)
            ]
            others.append(Piece(domain, ranges, results, rule_, mixed))
        else:
            others.append(Piece(data.draw(sub_box(box)), ranges, results, data.draw(dim_rule(len(box))), mixed))
    pieces = [reader, *others]
    maps = tuple(m for m in (p.to_map() for p in pieces) if not m.is_known_empty)
    kept = drop_subsumed(maps)
    event(f"dropped: {len(maps) - len(kept)}")
    assert relation(kept, box) == truth(pieces, box)
    # a map reading inside the box on a part of the reader's domain is always dropped
    if not maps or maps[0] is not pieces[0].to_map() or read_box(maps[0]) is None:
        return
    inside = Piece(
        reader.dims,
        [(0, n - 1) for n in read],
        [(zero, [1 if j == k else 0 for j in range(len(read))], 0, read[k], "mod") for k in range(len(read))],
        rule_,
    )
    assert len(drop_subsumed((maps[0], inside.to_map()))) == 1


def test_box_readers_that_contain_each_other_keep_one():
    whole = IndexingMap([Interval(0, 3)], [Interval(0, 5)], (), [range_var(0)])
    same = IndexingMap([Interval(0, 3)], [Interval(0, 5)], (), [range_var(0).floordiv(1)])
    assert drop_subsumed((whole, same)) == (whole,)


# ------------------------------------------------------------------------ whole sets and budgets
@SETTINGS
@given(data=st.data(), box=boxes, count=st.integers(2, 6))
def test_merged_sets_keep_their_relation(data, box, count):
    ranges, results, mixed = data.draw(body(len(box)))
    pieces = []
    for _ in range(count):
        if data.draw(st.booleans()):  # pieces of one body over different domains
            pieces.append(Piece(data.draw(sub_box(box)), ranges, results, data.draw(dim_rule(len(box))), mixed))
        else:
            r, res, mx = data.draw(body(len(box), dims_in_results=data.draw(st.booleans())))
            res = (res * len(results))[: len(results)]
            pieces.append(Piece(data.draw(sub_box(box)), r, res, data.draw(dim_rule(len(box))), mx))
    maps = tuple(distinct(m for m in (p.to_map() for p in pieces) if not m.is_known_empty))
    merged = compact_maps(maps)
    event(f"merged away: {len(maps) - len(merged)}")
    assert len(merged) <= len(maps)
    assert relation(merged, box) == truth(pieces, box)


def _strip(c: int, lo: int, hi: int) -> IndexingMap:
    """(d0) reads column ``s0 + c`` for s0 in [lo, hi] of a 1-D operand, at every d0."""
    return IndexingMap([Interval(0, 3)], [Interval(lo, hi)], (), [range_var(0) + c])


def test_a_set_past_the_budget_is_compacted_before_it_gives_up():
    strips = [_strip(4 * k, 0, 3) for k in range(6)]  # columns 0..23 in six strips: one read
    with AnalysisContext(maps_per_value=4):
        compacted = distinct(strips)  # compacted when the fifth strip arrives, the sixth joins later
        assert len(compacted) <= 4 and not any(m.is_undefined for m in compacted)
        compacted = finalize(compacted)
        assert len(compacted) == 1
        assert relation(compacted, [4]) == relation(strips, [4]) == {((d,), (x,)) for d in range(4) for x in range(24)}
        gaps = [_strip(5 * k, 0, 3) for k in range(6)]  # a gap after every strip: nothing merges
        overflowed = distinct(gaps)
        assert len(overflowed) == 1 and is_overflow(overflowed[0])


# ------------------------------------------------------ a whole computation against the reference
def _rotary_module(rows: int, heads: int, half: int) -> str:
    """q = x @ w, rotated per head as a rotary embedding does (halves swapped, one negated), then
    attention-like dots: the rotated pieces reach ``w`` through one map per head half."""
    width = 2 * heads * half
    lines, pieces = [], []
    for h in range(heads):
        lo = 2 * h * half
        lines.append(f"  a{h} = f32[{rows},{half}] slice(q), slice={{[0:{rows}], [{lo}:{lo + half}]}}")
        lines.append(f"  b{h} = f32[{rows},{half}] slice(q), slice={{[0:{rows}], [{lo + half}:{lo + 2 * half}]}}")
        lines.append(f"  n{h} = f32[{rows},{half}] negate(b{h})")
        pieces += [f"n{h}", f"a{h}"]
    body = "\n".join(lines)
    return f"""HloModule rotary

ENTRY main {{
  x = f32[{rows},{width}] parameter(0)
  w = f32[{width},{width}] parameter(1)
  q = f32[{rows},{width}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
{body}
  r = f32[{rows},{width}] concatenate({", ".join(pieces)}), dimensions={{1}}
  s = f32[{rows},{width}] add(q, r)
  t = f32[{width},{rows}] transpose(s), dimensions={{1,0}}
  a = f32[{rows},{rows}] dot(s, t), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  g = f32[{rows},{width}] dot(a, s), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT out = (f32[{rows},{rows}], f32[{rows},{width}], f32[{rows},{width}]) tuple(a, g, r)
}}
"""


@settings(deadline=None, derandomize=True, max_examples=12)
@given(rows=st.integers(1, 3), heads=st.integers(1, 4), half=st.integers(1, 3))
def test_rotary_attention_stays_known_under_a_small_budget_and_matches_the_reference(rows, heads, half):
    from hlo_index.fusion import output_to_input
    from hlo_index.hlo import parse_module_text
    from hlo_index.verify import backward_read_sets

    comp = parse_module_text(_rotary_module(rows, heads, half)).entry
    with AnalysisContext(maps_per_value=3):
        found = output_to_input(comp)
        assert all(r.known for r in found if r.maps)
        shapes = [leaf.dims for leaf in comp.root.shape.tuple_shapes]
        for out, dims in enumerate(shapes):
            for point in itertools.product(*(range(n) for n in dims)):
                exact = backward_read_sets(comp, out, point)
                for r in (r for r in found if r.output == out):
                    got = set().union(*(m.read_set(point) for m in r.maps)) if r.maps else set()
                    assert got == exact.get((r.operand, r.operand_element), set()), (out, point, r.operand)


# --------------------------------------------------------------------------------- progressions
@SETTINGS
@given(
    data=st.data(),
    box=boxes,
    count=st.integers(2, 5),
    size=st.integers(1, 3),
    gap=st.integers(0, 2),
    steps=st.lists(st.integers(-4, 4), min_size=2, max_size=2),
    break_at=st.integers(-1, 4),
)
def test_pieces_repeated_at_a_stride_join_exactly(data, box, count, size, gap, steps, break_at):
    """Pieces ``d_k in [lo + j*P, lo + j*P + size - 1]`` reading ``r + j*c``: one map for an unbroken
    run, the exact union whatever is broken (a piece moved off the stride or off the step)."""
    k = data.draw(st.integers(0, len(box) - 1))
    stride = size + gap
    lo = data.draw(st.integers(0, 2))
    box = list(box)
    box[k] = lo + stride * count + 2
    ranges, results, mixed = data.draw(body(len(box)))
    dims = [(0, n - 1) for n in box]
    pieces = []
    for j in range(count):
        shift = 1 if j == break_at else 0
        piece_dims = list(dims)
        piece_dims[k] = (lo + j * stride + shift, lo + j * stride + shift + size - 1)
        piece_results = [(cd, cs, c0 + j * step, q, kind) for (cd, cs, c0, q, kind), step in zip(results, steps)]
        pieces.append(Piece(piece_dims, ranges, piece_results, None, mixed))
    maps = tuple(distinct(m for m in (p.to_map() for p in pieces) if not m.is_known_empty))
    merged = compact_maps(maps)
    assert relation(merged, box) == truth(pieces, box)
    affine = all(kind is None for *_, kind in results)
    event(f"merged to one: {len(merged) == 1}")
    if affine and mixed is None and not (0 <= break_at < count) and len(maps) == count:
        assert len(merged) == 1


def test_box_readers_numbered_in_another_order_are_one_map():
    a = IndexingMap([Interval(0, 2)], [Interval(0, 3), Interval(0, 4)], (), [range_var(0), range_var(1)])
    b = IndexingMap([Interval(0, 2)], [Interval(0, 4), Interval(0, 3)], (), [range_var(1), range_var(0)])
    other = IndexingMap([Interval(0, 2)], [Interval(0, 4), Interval(0, 2)], (), [range_var(1), range_var(0)])
    assert relation([a], [3]) == relation([b], [3]) != relation([other], [3])
    assert finalize((a, b, other)) == (a, other)


def test_an_overflowed_set_absorbs_what_it_is_joined_with():
    with AnalysisContext(maps_per_value=2):
        overflowed = distinct(_strip(5 * k, 0, 3) for k in range(4))
        assert len(overflowed) == 1 and is_overflow(overflowed[0])
        known = (_strip(0, 0, 1),)
        for joined in (union(known, overflowed), union(overflowed, known)):
            assert len(joined) == 1 and is_overflow(joined[0])


# ------------------------------------------------- containment beside a range variable of its own
def _pairs(m: IndexingMap) -> set[tuple[int, ...]]:
    """Every (point, element) pair of ``m`` (runtime variables read as the union over their values)."""
    from hlo_index.verify import runtime_as_range

    flat = runtime_as_range(m)
    out = set()
    for point in itertools.product(*(range(iv.lo, iv.hi + 1) for iv in flat.dims)):
        out |= {point + tuple(e) for e in flat.read_set(point)}
    return out


def test_shifted_copies_beside_a_whole_row_are_dropped():
    # a rotary embedding's halves: the row read shifted by one each way, and its ends, beside the
    # whole row; only the whole row is left, and the union is the same
    from hlo_index.affine import parse_map
    from hlo_index.fusion.subsume import drop_inside_free_positions

    texts = [
        "(d0, d1)[s0]{rt0} -> (rt0, d0, s0), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 3], rt0 in [0, 1]",
        "(d0, d1)[s0]{rt0} -> (rt0, d0, s0 + 1), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 2], rt0 in [0, 1]",
        "(d0, d1)[s0]{rt0} -> (rt0, d0, s0 - 1), domain: d0 in [0, 2], d1 in [0, 3], s0 in [1, 3], rt0 in [0, 1]",
        "(d0, d1){rt0} -> (rt0, d0, 3), domain: d0 in [0, 2], d1 in [0, 2], rt0 in [0, 1]",
    ]
    maps = tuple(parse_map(t) for t in texts)
    kept = drop_inside_free_positions(maps)
    assert kept == maps[:1]
    # d1 in [0, 2] of the last one lies inside the first's; the other way round it would not
    assert set().union(*map(_pairs, maps)) == _pairs(kept[0])


@SETTINGS
@given(data=st.data())
def test_containment_beside_own_range_variables_is_sound(data):
    from hlo_index.affine import parse_map
    from hlo_index.fusion.subsume import contained_beside_free_positions, drop_inside_free_positions

    def draw_map(free_at: int | None) -> IndexingMap:
        d0 = data.draw(st.integers(0, 1)), data.draw(st.integers(1, 3))
        s0 = data.draw(st.integers(0, 1)), data.draw(st.integers(1, 3))
        s1 = data.draw(st.integers(0, 1)), data.draw(st.integers(1, 4))
        shared = data.draw(st.sampled_from(["d0", "s0", "d0 + s0", "s0 * 2", "d0 floordiv 2"]))
        own = "s1" if free_at is not None else data.draw(st.sampled_from(["s1", "s1 + 1", "s1 - 1", "d0", "0"]))
        results = (own, shared) if free_at == 0 or free_at is None else (shared, own)
        if free_at is None and data.draw(st.booleans()):
            results = results[::-1]
        constraint = data.draw(st.sampled_from(["", ", d0 - s0 in [0, 1]", ", s1 - d0 in [-1, 2]", ", d0 in [1, 3]"]))
        text = (
            f"(d0)[s0, s1] -> ({results[0]}, {results[1]}), domain: d0 in [{d0[0]}, {d0[1]}], "
            f"s0 in [{s0[0]}, {s0[1]}], s1 in [{s1[0]}, {s1[1]}]{constraint if free_at is None else ''}"
        )
        try:
            return parse_map(text)
        except ValueError:
            return IndexingMap.known_empty(1, 2)

    outer = draw_map(data.draw(st.integers(0, 1)))
    inner = draw_map(None)
    if outer.is_known_empty or inner.is_known_empty:
        return
    if contained_beside_free_positions(inner, outer):
        event("contained")
        assert _pairs(inner) <= _pairs(outer), (str(inner), str(outer))
    kept = drop_inside_free_positions((outer, inner))
    assert set().union(*map(_pairs, kept)) == _pairs(outer) | _pairs(inner)
