"""Whole reads written as clamped windows: recognised only where every point of the domain reads
every operand element (brute force), and then counted exactly beside other maps."""

from __future__ import annotations

import itertools
import random
from math import prod

import pytest

from hlo_index.affine import IndexingMap, Interval, parse_map
from hlo_index.affine.expr import dim, linear, range_var
from hlo_index.analyses.clamped_reads import reads_whole_operand
from hlo_index.analyses.utilization import operand_utilization
from hlo_index.hlo.build import array_shape


def _reads_whole_by_brute_force(m: IndexingMap, operand_dims) -> bool:
    everything = set(itertools.product(*(range(n) for n in operand_dims)))
    points = 0
    for point in itertools.product(*(range(iv.lo, iv.hi + 1) for iv in m.dims)):
        read = m.read_set(point)
        if not read and not _feasible(m, point):
            continue  # outside the domain's own constraints
        points += 1
        if read != everything:
            return False
    return points > 0


def _feasible(m: IndexingMap, point) -> bool:
    from hlo_index.affine.evaluate import evaluate_expr
    from hlo_index.affine.expr import DIM

    env = {(DIM, i): v for i, v in enumerate(point)}
    return all(
        b.lo <= int(evaluate_expr(e, env, {})) <= b.hi
        for e, b in m.constraints
        if all(v.kind == DIM for v in e.variables())
    )


WHOLE = [
    # a stride-2 window of 3 over 16 positions, clamped to 32: a convolution's input read whole
    (
        "(d0)[s0, s1, s2, s3] -> (s2, s0 + s3 * 2), domain: d0 in [0, 3], s0 in [0, 2], s1 in [0, 1], "
        "s2 in [0, 3], s3 in [0, 15], s0 + s3 * 2 in [0, 31]",
        (4, 32),
    ),
    # several windows nested, offset below zero and clamped back, on a piece of the output
    (
        "(d0, d1)[s0, s1, s2] -> (s0 + s1 * 2 + s2 * 4 - 3, d1 * 0), domain: d0 in [0, 2], d1 in [0, 1], "
        "s0 in [0, 1], s1 in [0, 1], s2 in [0, 5], s0 + s1 * 2 + s2 * 4 - 3 in [0, 19], d0 in [1, 2]",
        (20, 1),
    ),
    # the clamp written on the sum before its offset (as XLA composes a padded convolution)
    (
        "(d0)[s0, s1] -> (s0 + s1 * 2 - 1), domain: d0 in [0, 2], s0 in [0, 2], s1 in [0, 7], s0 + s1 * 2 in [1, 16]",
        (16,),
    ),
    # a window position that exists at every point (a witness no result reads)
    (
        "(d0, d1)[s0, s1] -> (s0), domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 5], s1 in [0, 6], d0 + s1 in [1, 7]",
        (6,),
    ),
    # a bare row beside a clamped one
    ("(d0)[s0, s1, s2] -> (s0, s1 + s2 * 3), domain: d0 in [0, 1], s0 in [0, 4], s1 in [0, 2], s2 in [0, 3]", (5, 12)),
]

NOT_WHOLE = [
    # a gap: steps of 3 over a window of 2
    ("(d0)[s0, s1] -> (s0 + s1 * 3), domain: d0 in [0, 1], s0 in [0, 1], s1 in [0, 3], s0 + s1 * 3 in [0, 11]", (12,)),
    # the clamp cuts the extent short
    ("(d0)[s0, s1] -> (s0 + s1 * 2), domain: d0 in [0, 1], s0 in [0, 1], s1 in [0, 7], s0 + s1 * 2 in [0, 9]", (12,)),
    # a constraint that is no result: the window depends on the output point
    ("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 7], d0 + s0 in [0, 7]", (8,)),
    # one variable in two results: the diagonal
    ("(d0)[s0] -> (s0, s0), domain: d0 in [0, 1], s0 in [0, 3]", (4, 4)),
    # a result of a dim
    ("(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 3]", (4, 4)),
    # a window position that does not exist at every point: nothing is read at d0 < 6
    ("(d0)[s0, s1] -> (s0), domain: d0 in [0, 9], s0 in [0, 5], s1 in [0, 2], d0 + s1 in [8, 9]", (6,)),
    # a witness in two constraints, and one with a coefficient of 2
    (
        "(d0)[s0, s1] -> (s0), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 6], d0 + s1 in [1, 7], s1 in [0, 3]",
        (6,),
    ),
    ("(d0)[s0, s1] -> (s0), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 6], d0 + s1 * 2 in [1, 7]", (6,)),
]


@pytest.mark.parametrize("text, dims", WHOLE)
def test_clamped_windows_that_cover_the_operand_read_it_whole(text, dims):
    m = parse_map(text)
    assert _reads_whole_by_brute_force(m, dims)
    assert reads_whole_operand(m, dims)


@pytest.mark.parametrize("text, dims", NOT_WHOLE)
def test_near_misses_are_not_whole_reads(text, dims):
    m = parse_map(text)
    assert not reads_whole_operand(m, dims)


def _window_map(rng: random.Random) -> tuple[IndexingMap, tuple[int, ...]]:
    """One output dim; per operand dim a sum of up to three range variables with small
    coefficients and an offset, clamped (or not) to an extent near what it reaches."""
    ranges: list[Interval] = []
    results, constraints, dims = [], [], []
    for _ in range(rng.randint(1, 2)):
        terms = []
        for _ in range(rng.randint(1, 3)):
            ranges.append(Interval(0, rng.randint(0, 4)))
            terms.append((range_var(len(ranges) - 1), rng.choice([1, 1, 2, 3, -1])))
        e = linear(rng.randint(-3, 1), terms)
        n = rng.randint(1, 10)
        results.append(e)
        dims.append(n)
        if rng.random() < 0.8:
            # the clamp on the result, or on the sum before its offset (bounds moved to match)
            offset = rng.choice([0, 0, e.linear_terms()[0]])
            clamped = linear(e.linear_terms()[0] - offset, terms)
            constraints.append((clamped, Interval(-offset, n - 1 - offset + rng.choice([0, 0, 0, 1, -1]))))
    if rng.random() < 0.3:
        constraints.append((dim(0), Interval(1, 2)))
    if rng.random() < 0.4:  # a window position: satisfiable at every point or not
        ranges.append(Interval(0, rng.randint(0, 4)))
        lo = rng.randint(-1, 4)
        constraints.append(
            (
                linear(0, [(dim(0), 1), (range_var(len(ranges) - 1), rng.choice([1, -1]))]),
                Interval(lo, lo + rng.randint(0, 4)),
            )
        )
    return IndexingMap([Interval(0, 2)], ranges, (), results, constraints), tuple(dims)


def test_seeded_windows_are_whole_reads_exactly_when_brute_force_says_so():
    rng = random.Random(11)
    said = 0
    for _ in range(400):
        m, dims = _window_map(rng)
        if reads_whole_operand(m, dims):
            said += 1
            assert _reads_whole_by_brute_force(m, dims), str(m)
    assert said > 20  # the cases reach the whole reads the test is about


def _pairs(maps, dims) -> int:
    pairs = set()
    for m in maps:
        for point in itertools.product(*(range(iv.lo, iv.hi + 1) for iv in m.dims)):
            pairs |= {(point, e) for e in m.read_set(point) if all(0 <= x < n for x, n in zip(e, dims))}
    return len(pairs)


@pytest.mark.parametrize("text, dims", WHOLE[:1])
def test_a_clamped_whole_read_beside_other_maps_counts_every_pair_once(text, dims):
    whole = parse_map(text)
    own = parse_map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 31]")
    corner = parse_map("(d0) -> (0, d0 * 2), domain: d0 in [0, 3]")
    maps = [own, whole, corner]
    u = operand_utilization(maps, array_shape("f32", dims), budget=4)  # too small to union pair by pair
    assert u.exact and u.element_reads == _pairs(maps, dims) == 4 * prod(dims)
    assert u.distinct_elements == prod(dims)


def test_a_clamped_whole_read_makes_the_union_the_operand_beside_a_sampled_map():
    whole = parse_map(WHOLE[0][0])
    dims = WHOLE[0][1]
    # a scattered read whose component is over the enumeration budget: its own count is sampled
    scattered = parse_map("(d0)[s0] -> (d0, (s0 * 7) mod 32), domain: d0 in [0, 3], s0 in [0, 40], s0 mod 3 in [1, 1]")
    maps = [scattered, whole]
    alone = operand_utilization([scattered], array_shape("f32", dims), budget=4)
    assert not alone.exact  # sampled on its own
    u = operand_utilization(maps, array_shape("f32", dims), budget=4)
    assert u.exact and u.distinct_elements == prod(dims)
    assert u.element_reads == _pairs(maps, dims) == 4 * prod(dims)
