"""Joining maps whose union is one map: the sample's concatenate, and random splits checked
point by point against the pieces they came from."""

from __future__ import annotations

import itertools
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, const, dim, parse_map
from hlo_index.fusion import output_to_input
from hlo_index.fusion.merge import join, merge_maps
from hlo_index.hlo import parse_module_text

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "samples")


def test_concatenate_of_two_columns_reads_its_operand_through_one_map():
    with open(os.path.join(SAMPLES, "gather_scatter_zoo.after_optimizations.hlo.txt")) as f:
        module = parse_module_text(f.read())
    [fusion] = [f for f in module.fusions if f.name == "bitcast_concatenate_fusion"]
    [row] = [r for r in output_to_input(fusion) if r.operand == 0]
    assert row.maps == (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 63], d1 in [0, 1]"),)
    assert row.deduplicated


def test_two_single_value_pieces_join_and_a_gap_does_not():
    a = parse_map("(d0, d1) -> (d0, 0), domain: d0 in [0, 3], d1 in [0, 0]")
    b = parse_map("(d0, d1) -> (d0, 1), domain: d0 in [0, 3], d1 in [1, 1]")
    far = parse_map("(d0, d1) -> (d0, 5), domain: d0 in [0, 3], d1 in [3, 3]")
    assert join(a, b) == parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 1]")
    assert join(a, far) is None
    # results that do not lie on one line along d1 stay apart
    bent = parse_map("(d0, d1) -> (d0, 7), domain: d0 in [0, 3], d1 in [2, 2]")
    assert len(merge_maps((a, b, bent))) == 2


def _truth(pieces, box) -> set:
    """(point, result) pairs of the pieces, by plain evaluation of their Python formulas."""
    out = set()
    for lo_hi, formula in pieces:
        for point in itertools.product(*(range(n) for n in box)):
            if all(lo <= x <= hi for x, (lo, hi) in zip(point, lo_hi)):
                out.add((point, formula(point)))
    return out


def _relation(maps, box) -> set:
    out = set()
    for m in maps:
        for point in itertools.product(*(range(n) for n in box)):
            if all(iv.lo <= x <= iv.hi for x, iv in zip(point, m.dims)):
                out |= {(point, r) for r in m.read_set(point)}
    return out


@settings(deadline=None, derandomize=True, max_examples=60)
@given(
    box=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    coefficients=st.lists(st.lists(st.integers(-2, 2), min_size=3, max_size=3), min_size=1, max_size=2),
    offsets=st.lists(st.integers(0, 3), min_size=2, max_size=2),
    axis_seed=st.integers(0, 10),
    bend=st.integers(-1, 3),
    drop=st.integers(-1, 3),
)
def test_random_splits_join_soundly(box, coefficients, offsets, axis_seed, bend, drop):
    """Split a linear map along one dimension into single-value pieces (maybe bending one piece's
    result, maybe dropping one); merging must keep the exact union, and rebuild one map when the
    pieces are an unbent contiguous run."""
    k = axis_seed % len(box)
    rank = len(box)
    rows = [c[:rank] for c in coefficients]
    offs = offsets[: len(rows)]

    def formula_at(c_bend):
        return lambda p: tuple(off + sum(a * x for a, x in zip(row, p)) + c_bend for row, off in zip(rows, offs))

    pieces, maps = [], []
    for value in range(box[k]):
        if value == drop:
            continue
        extra = 1 if value == bend else 0
        lo_hi = [(0, n - 1) for n in box]
        lo_hi[k] = (value, value)
        pieces.append((lo_hi, formula_at(extra)))
        results = [
            const(off + extra + row[k] * value) + sum((dim(i) * a for i, a in enumerate(row) if i != k and a), const(0))
            for row, off in zip(rows, offs)
        ]
        maps.append(IndexingMap([Interval(lo, hi) for lo, hi in lo_hi], (), (), results).simplified())
    merged = merge_maps(tuple(maps))
    assert _relation(merged, box) == _truth(pieces, box) == _relation(maps, box)
    contiguous = drop < 0 or drop >= box[k] or drop in (0, box[k] - 1)
    unbent = bend < 0 or bend >= box[k] or (bend == drop)
    if maps and contiguous and unbent:
        assert len(merged) == 1
