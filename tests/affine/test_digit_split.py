"""Splitting a variable read only through its digits: the same result rows, point for point.

Brute force is the oracle: every point of both maps evaluated from the printed text, and the
multisets of result rows compared (the split renames points one to one, so each row must come
from as many points after as before).
"""

import itertools
import random
from collections import Counter

import pytest

from hlo_index.affine import IndexingMap, parse_map
from hlo_index.affine.digits import split_digit_variables
from hlo_index.analyses.components import decompose


def _evaluate(text: str, env: dict) -> int:
    return eval(text.replace(" floordiv ", " // ").replace(" mod ", " % "), {}, env)  # noqa: S307


def row_multiset(m: IndexingMap) -> Counter:
    """Result rows of every feasible point, counted (plain loops over the printed expressions)."""
    results = [str(e) for e in m.results]
    constraints = [(str(e), iv) for e, iv in m.constraints]
    rows: Counter = Counter()
    for dims in itertools.product(*[range(b.lo, b.hi + 1) for b in m.dims]):
        for ranges in itertools.product(*[range(b.lo, b.hi + 1) for b in m.range_vars]):
            env = {f"d{i}": v for i, v in enumerate(dims)} | {f"s{i}": v for i, v in enumerate(ranges)}
            if all(iv.lo <= _evaluate(e, env) <= iv.hi for e, iv in constraints):
                rows[tuple(_evaluate(e, env) for e in results)] += 1
    return rows


SPLIT = [
    # a reshape's digits of a flat index, and a digit added to another variable (a TF ResNet
    # fusion reads its input this way, at 182,400 values of d0)
    "(d0, d1) -> (d0 floordiv 12, (d0 floordiv 3) mod 4, d1 + (d0 mod 3) * 4 + 2), domain: d0 in [0, 59], d1 in [0, 1]",
    # a range variable, with a constraint on one digit
    "(d0)[s0] -> (s0 floordiv 6, d0 + s0 mod 6), domain: d0 in [0, 3], s0 in [0, 23], s0 mod 6 in [1, 4]",
    # two variables split at once; one digit read twice
    "(d0, d1) -> (d0 floordiv 4 + d1 mod 3, d0 mod 4, d1 floordiv 3, d0 mod 4), domain: d0 in [0, 15], d1 in [0, 8]",
    # a middle digit alone (the others unread)
    "(d0) -> ((d0 floordiv 2) mod 5), domain: d0 in [0, 29]",
]

KEPT = [
    "(d0) -> (d0 floordiv 4, d0), domain: d0 in [0, 15]",  # read whole too
    "(d0) -> (d0 floordiv 4, d0 mod 6), domain: d0 in [0, 23]",  # 4 and 6: not a chain
    "(d0) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [0, 17]",  # 4 does not divide 18
    "(d0) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [1, 16]",  # not from 0
    "(d0) -> ((d0 * 3) floordiv 4), domain: d0 in [0, 15]",  # a digit of 3 * d0, not of d0
]


@pytest.mark.parametrize("text", SPLIT)
def test_split_maps_read_the_same_rows_from_as_many_points(text):
    m = parse_map(text)
    split = split_digit_variables(m)
    assert split.num_range_vars > m.num_range_vars
    assert row_multiset(split) == row_multiset(m)


@pytest.mark.parametrize("text", KEPT)
def test_a_variable_not_read_as_digits_of_a_chain_is_kept(text):
    m = parse_map(text)
    assert split_digit_variables(m) is m


def test_digits_read_apart_are_components_apart():
    # the flat index's three digits: the first two are boxes, the third shares a component with
    # d1 only (6 points, not 60 * 2)
    m = parse_map(SPLIT[0])
    dec = decompose(m, (5, 4, 12), budget=1 << 20)
    assert sorted(len(c.results) for c in dec.components) == [1, 1, 1]
    largest = max(c.points for c in dec.components)
    assert largest == 6
    rows = {row for row in row_multiset(m) if 0 <= row[0] < 5 and 0 <= row[1] < 4 and 0 <= row[2] < 12}
    assert dec.distinct == len(rows)
    assert dec.points == sum(row_multiset(m).values())


def _random_digit_map(rng: random.Random) -> str:
    radices = [rng.randint(2, 4) for _ in range(rng.randint(2, 3))]
    size = 1
    for r in radices:
        size *= r
    places = [1]
    for r in radices[:-1]:
        places.append(places[-1] * r)
    forms = []
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(places))
        j = rng.randrange(i + 1, len(places) + 1)
        low, high = places[i], places[j] if j < len(places) else size
        if low == 1 and high == size:
            forms.append("d0 floordiv 1")
        elif low == 1:
            forms.append(f"d0 mod {high}")
        elif high == size:
            forms.append(f"d0 floordiv {low}")
        else:
            forms.append(f"(d0 floordiv {low}) mod {high // low}")
    results = [f"{f} + d1 * {rng.randint(0, 3)}" if rng.random() < 0.3 else f for f in forms if f != "d0 floordiv 1"]
    if not results:
        results = [f"d0 mod {places[1]}"]
    constraint = f", {results[0]} in [0, {rng.randint(0, 3)}]" if rng.random() < 0.3 else ""
    return f"(d0, d1) -> ({', '.join(results)}), domain: d0 in [0, {size - 1}], d1 in [0, 2]{constraint}"


def test_random_digit_maps_read_the_same_rows():
    rng = random.Random(7)
    split_count = 0
    for _ in range(150):
        m = parse_map(_random_digit_map(rng))
        split = split_digit_variables(m)
        split_count += split is not m
        assert row_multiset(split) == row_multiset(m), str(m)
    assert split_count > 100
