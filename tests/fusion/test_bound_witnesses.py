"""Range variables bounding runtime values and dims are eliminated exactly (Fourier-Motzkin).

Each case is checked by brute force: for every dimension point and every runtime value, the map
before and after elimination read the same elements (a runtime value outside a narrowed
variable's interval reads nothing).
"""

from __future__ import annotations

import itertools
import random

import pytest

from hlo_index.affine import IndexingMap, Interval, parse_map
from hlo_index.context import AnalysisContext
from hlo_index.fusion.bound_witnesses import eliminate_bound_witnesses


def _reads(m: IndexingMap, point: tuple[int, ...], runtime: tuple[int, ...]) -> set[tuple[int, ...]]:
    if m.is_known_empty:
        return set()
    if any(not v.interval.contains(x) for v, x in zip(m.runtime_vars, runtime)):
        return set()
    return m.read_set(point, list(runtime))


def _same_reads(before: IndexingMap, after: IndexingMap) -> None:
    dims = [range(iv.lo, iv.hi + 1) for iv in before.dims]
    runtime = [range(v.interval.lo, v.interval.hi + 1) for v in before.runtime_vars]
    for point in itertools.product(*dims):
        for values in itertools.product(*runtime):
            assert _reads(before, point, values) == _reads(after, point, values), (point, values)


def test_key_rows_before_both_lengths_and_the_query_row():
    # a padded causal attention's key row s1: at or before d0, before both lengths
    before = parse_map(
        "(d0)[s0, s1]{rt0, rt1} -> (s0), domain: d0 in [0, 5], s0 in [0, 3], s1 in [0, 5], "
        "rt0 in [0, 6], rt1 in [0, 6], d0 - s1 in [0, 5], s1 - rt0 in [-6, -1], s1 - rt1 in [-6, -1]"
    )
    after = eliminate_bound_witnesses(before)
    assert len(after.range_vars) == 1
    assert [v.interval for v in after.runtime_vars] == [Interval(1, 6)] * 2  # both lengths at least 1
    _same_reads(before, after)


def test_chained_witnesses_are_eliminated_in_turn():
    before = parse_map(
        "(d0)[s0, s1]{rt0} -> (d0), domain: d0 in [0, 6], s0 in [0, 6], s1 in [0, 6], rt0 in [0, 7], "
        "s0 - s1 in [-6, 0], s1 - rt0 in [-7, -1], d0 - s0 in [-2, 6]"
    )
    after = eliminate_bound_witnesses(before)
    assert not after.range_vars
    _same_reads(before, after)


def test_an_impossible_bound_makes_the_map_empty():
    before = parse_map("(d0)[s0]{rt0} -> (d0), domain: d0 in [0, 3], s0 in [0, 3], rt0 in [0, 3], s0 - rt0 in [5, 9]")
    after = eliminate_bound_witnesses(before)
    assert after.is_known_empty
    _same_reads(before, after)


@pytest.mark.parametrize(
    "text",
    [
        # coefficient 2: the integer shadow is not exact, kept
        "(d0)[s0]{rt0} -> (d0), domain: d0 in [0, 3], s0 in [0, 3], rt0 in [0, 7], s0 * 2 - rt0 in [0, 0]",
        # inside a division, kept
        "(d0)[s0]{rt0} -> (d0), domain: d0 in [0, 3], s0 in [0, 7], rt0 in [0, 3], s0 floordiv 2 - rt0 in [0, 0]",
        # in a result, kept
        "(d0)[s0]{rt0} -> (s0), domain: d0 in [0, 3], s0 in [0, 3], rt0 in [0, 3], s0 - rt0 in [-3, -1]",
        # no runtime variable among its constraints: left to the enumerating eliminations
        "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 3], d0 - s0 in [-3, -1]",
    ],
)
def test_what_is_not_eliminated_stays(text):
    m = parse_map(text)
    assert eliminate_bound_witnesses(m) is m


def _unit_constraints_on_s0(rng: random.Random, atoms: list[str]) -> list[str]:
    """One to four random constraints ``(+/-)s0 (+/-) atom in [lo, hi]``: unit coefficients on s0."""
    constraints = []
    for _ in range(rng.randint(1, 4)):
        sign = rng.choice(["", "-"])
        k = rng.choice([1, -1])
        lo = rng.randint(-4, 2)
        term = f"{sign}s0 {'+' if k == 1 else '-'} {rng.choice(atoms)}"
        constraints.append(f"{term} in [{lo}, {lo + rng.randint(0, 4)}]")
    return constraints


# (map head, atoms the constraints on s0 name, whether one constraint ties s0 to a runtime value,
# every): the runtime values are results too, so that no elimination renumbers them
_RANDOM_CASES = {
    "with runtime values": (
        "(d0, d1)[s0, s1]{rt0, rt1} -> (d0, s1, rt0, rt1), domain: d0 in [0, 2], d1 in [0, 2], s0 in [0, 3], "
        "s1 in [0, 2], rt0 in [0, 3], rt1 in [0, 3], ",
        ["d0", "d1", "rt0", "rt1", "s1"],
        True,
        False,
    ),
    "every witness, no runtime value": (
        "(d0, d1)[s0, s1, s2] -> (d0, s1), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 3], "
        "s1 in [0, 2], s2 in [0, 3], ",
        ["d0", "d1", "s1", "s2"],
        False,
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(_RANDOM_CASES))
def test_random_unit_bounds_match_brute_force(case):
    head, atoms, tied, every = _RANDOM_CASES[case]
    rng = random.Random(7)
    for _ in range(70):
        constraints = _unit_constraints_on_s0(rng, atoms)
        if tied:
            constraints.append(f"s0 - rt{rng.randint(0, 1)} in [-3, {rng.randint(-1, 1)}]")
        try:
            before = parse_map(head + ", ".join(constraints))
        except ValueError:  # a constraint the parser folds away as trivially false
            continue
        with AnalysisContext():
            after = eliminate_bound_witnesses(before, every=every)
        _same_reads(before, after)


def test_past_the_pair_budget_the_variable_stays():
    m = parse_map(
        "(d0)[s0, s1]{rt0, rt1} -> (s0), domain: d0 in [0, 5], s0 in [0, 3], s1 in [0, 5], "
        "rt0 in [0, 6], rt1 in [0, 6], d0 - s1 in [0, 5], s1 - rt0 in [-6, -1], s1 - rt1 in [-6, -1]"
    )
    with AnalysisContext(witness_bound_pairs=15):  # s1 has 4 lower and 4 upper bounds (its interval too): 16 pairs
        assert eliminate_bound_witnesses(m) is m
    with AnalysisContext(witness_bound_pairs=16):
        assert len(eliminate_bound_witnesses(m).range_vars) == 1


def test_every_witness_goes_when_asked_for_all_of_them():
    # a prefix of a prefix (loops and whole programs compose causal reads): the row between the
    # two is only a witness; asked for every variable, it goes, with no runtime value involved
    before = parse_map(
        "(d0)[s0, s1] -> (s0), domain: d0 in [0, 7], s0 in [0, 7], s1 in [0, 7], s0 - s1 in [-7, 0], d0 - s1 in [0, 7]"
    )
    assert eliminate_bound_witnesses(before) is before  # by default, XLA's printed form is kept
    with AnalysisContext():
        after = eliminate_bound_witnesses(before, every=True)
    assert len(after.range_vars) == 1
    _same_reads(before, after)
