"""``shift_range_vars``: a range variable read only beside the same dims is renamed to what it
reads, and the map reads the same (output, element) pairs, checked by brute force."""

from __future__ import annotations

import random
from itertools import product

from hypothesis import given, settings

from hlo_index.affine import IndexingMap, Interval, parse_map
from hlo_index.affine.evaluate import evaluate_expr
from hlo_index.affine.expr import DIM, RANGE, dim, linear, range_var
from hlo_index.affine.shift import shift_range_vars
from tests.affine.affine_helpers import maps as random_maps


def _pairs(m: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (dim point, element read) pair of ``m``, by evaluating it at each point of its box."""
    out = set()
    boxes = [range(b.lo, b.hi + 1) for b in m.dims]
    ranges = [range(b.lo, b.hi + 1) for b in m.range_vars]
    for d in product(*boxes):
        for s in product(*ranges):
            env = {**{(DIM, i): v for i, v in enumerate(d)}, **{(RANGE, i): v for i, v in enumerate(s)}}
            if all(b.lo <= int(evaluate_expr(e, env, {})) <= b.hi for e, b in m.constraints):
                out.add((d, tuple(int(evaluate_expr(e, env, {})) for e in m.results)))
    return out


def test_a_window_over_a_whole_row_becomes_the_row():
    window = parse_map(
        "(d0, d1)[s0] -> (d0, d1 + s0 - 127), domain: d0 in [0, 1], d1 in [0, 127], s0 in [0, 254], "
        "d1 + s0 in [127, 254]"
    )
    shifted = shift_range_vars(window)
    assert str(shifted) == "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 127], s0 in [0, 127]"
    assert _pairs(shifted) == _pairs(window)


def test_a_partial_window_keeps_what_bounds_it():
    window = parse_map("(d0)[s0] -> (d0 + s0 - 1), domain: d0 in [0, 9], s0 in [0, 2], d0 + s0 in [1, 10]")
    shifted = shift_range_vars(window)
    assert shifted.results == (range_var(0),) and shifted.constraints  # d0 - s0 in [-1, 1] stays
    assert _pairs(shifted) == _pairs(window)


def test_maps_that_are_no_plain_shift_are_kept_as_they_are():
    for text in (
        "(d0)[s0] -> ((d0 + s0) floordiv 2), domain: d0 in [0, 9], s0 in [0, 2]",  # inside a division
        "(d0)[s0] -> (d0 + s0 * 2), domain: d0 in [0, 9], s0 in [0, 2]",  # coefficient 2
        "(d0, d1)[s0] -> (d0 + s0, d1 + s0), domain: d0 in [0, 3], d1 in [0, 3], s0 in [0, 2]",  # two sums
        "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 2]",  # already bare
    ):
        m = parse_map(text)
        assert shift_range_vars(m) is m


def _shift_map(rng: random.Random) -> IndexingMap:
    """A map whose range variables are read beside one dim sum each (with differing constants),
    among results and constraints that read dims only."""
    n = rng.randint(1, 2)
    dims = [Interval(lo, lo + rng.randint(0, 4)) for lo in (rng.randint(0, 2) for _ in range(n))]
    k = rng.randint(1, 2)
    ranges = [Interval(lo, lo + rng.randint(0, 5)) for lo in (rng.randint(-3, 3) for _ in range(k))]
    rests = [[(dim(i), rng.randint(-2, 2)) for i in range(n)] for _ in range(k)]
    results, constraints = [], []
    for j in range(k):
        uses = rng.randint(1, 3)
        for u in range(uses):
            e = linear(rng.randint(-4, 4), [(range_var(j), 1), *rests[j]])
            if u == 0 or rng.random() < 0.5:
                results.append(e)
            else:
                lo = rng.randint(-6, 6)
                constraints.append((e, Interval(lo, lo + rng.randint(0, 8))))
    if rng.random() < 0.5:
        results.append(linear(rng.randint(0, 3), [(dim(rng.randrange(n)), 1)]))
    rng.shuffle(results)
    return IndexingMap(dims, ranges, (), results, constraints)


def test_seeded_shift_maps_read_the_same_pairs():
    rng = random.Random(7)
    renamed = 0
    for _ in range(300):
        m = _shift_map(rng)
        shifted = shift_range_vars(m)
        if shifted is not m:
            renamed += 1
        assert _pairs(shifted) == _pairs(m), str(m)
    assert renamed > 250  # the cases were of the form the rename takes


@settings(max_examples=300, deadline=None)
@given(random_maps(max_dims=2, max_range=2, max_results=2, max_constraints=2))
def test_any_map_reads_the_same_pairs_after_the_shift(m):
    shifted = shift_range_vars(m)
    if shifted is m or m.is_known_empty:
        return
    assert m.semantically_equal(shifted), f"{m}\n{shifted}"
