"""The fast map reader (``text_reader.py``) against the careful parser (``text.py``): on every
text the fast reader accepts, both give the same map; every text the careful parser rejects, the
fast reader rejects too (so errors keep their column)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, MapSyntaxError, parse_expr, parse_map
from hlo_index.affine.text import _default_scope, _parse_expr_carefully, _parse_map_carefully
from hlo_index.affine.text_reader import _MEMO_TOKENS, read_expr, read_map, tokens_of

from .affine_helpers import maps


def _same(a: IndexingMap, b: IndexingMap) -> bool:
    return (a.dims, a.range_vars, a.runtime_vars, a.results, a.constraints) == (
        b.dims,
        b.range_vars,
        b.runtime_vars,
        b.results,
        b.constraints,
    )


def _careful(text: str):
    try:
        return _parse_map_carefully(text)
    except MapSyntaxError:
        return None


@given(maps(runtime=1))
def test_printed_maps_are_read_fast_and_alike(m: IndexingMap):
    text = str(m)
    fast = read_map(text)
    if m.is_known_empty or m.is_undefined:
        assert fast is None  # special forms are left to the careful parser
        return
    assert fast is not None, text
    assert _same(fast, _parse_map_carefully(text))


# Hand-written text in the spellings people type: extra parentheses, unary minus, juxtaposed
# products, "/", negative divisors, a group repeated many times, custom names, newlines.
SPELLINGS = [
    "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
    "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floordiv 100, ((100d0 + 10d1 + d2) mod 100) floordiv "
    "10, d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "(d0, d1) -> (9 - ((-11d0 - d1 + 109) floordiv 11)), domain: d0 in [0, 9], d1 in [0, 10]",
    "(d0) -> (d0 / -3, d0 ceildiv -2, -(d0) * -2, - -d0, (((d0))), 2 * (d0 + 1) * 3), domain: d0 in [-7, 9]",
    "(d0)[s0] -> ((d0 + s0) mod 4 + (d0 + s0) mod 4 * 2 - ((d0 + s0) mod 4)), "
    "domain: d0 in [0, 9], s0 in [0, 3], (d0 + s0) floordiv 2 in [1, 5], d0 in [0, 3]",
    "(x, y)[k]{r} -> (x * 4 + k, y - r),\n domain:\n x in [0, 31],\n y in [0, 7],\n"
    " k in [0, 3],\n r in [-2, 2],\n is_simplified: false",
    "() -> (), domain: ",
    "() -> (3)",
    "(d0) -> ((5) * d0, d0 floordiv (2 + 2), d0 mod (3), (d0 - d0) * d0), domain: d0 in [0, 20]",
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_spellings_read_fast_and_alike(text: str):
    fast = read_map(text)
    careful = _parse_map_carefully(text)
    assert fast is not None, text
    assert _same(fast, careful)
    assert _same(parse_map(text), careful)


REJECTED = [
    "(d0) -> (d0 floordiv ), domain: d0 in [0, 31]",
    "(d0) -> (d1), domain: d0 in [0, 31]",
    "(d0) -> (d0 * d0), domain: d0 in [0, 31]",
    "(d0) -> (d0), domain: d0 in [0 31]",
    "(d0) -> (d0) $",
    "(d0) -> (d0 mod 0), domain: d0 in [0, 3]",
    "(d0) -> (d0 mod -2), domain: d0 in [0, 3]",
    "(d0) -> (d0 floordiv d0), domain: d0 in [0, 3]",
    "(d0) -> (16 d0), domain: d0 in [0, 3]",
    "(d0) -> (d0 \x01 d0), domain: d0 in [0, 3]",
    "(d0, d0) -> (d0), domain: d0 in [0, 3]",
    "(d0) -> ((d0), domain: d0 in [0, 3]",
    "(d0) -> (d0)), domain: d0 in [0, 3]",
    "(d0) -> (d0)",
    "(mod) -> (mod), domain: mod in [0, 3]",
    "(d0) -> (d0 + é), domain: d0 in [0, 3]",
]


@pytest.mark.parametrize("text", REJECTED)
def test_what_the_careful_parser_rejects_the_fast_reader_leaves_to_it(text: str):
    assert read_map(text) is None
    with pytest.raises(MapSyntaxError):
        parse_map(text)


@pytest.mark.parametrize(
    "text",
    [
        "KNOWN EMPTY",
        "UNDEFINED: no rule",
        "(d0) -> (d0 MOD 2), domain: d0 in [0, 3]",
        "(d0) -> (2 results): KNOWN EMPTY",
    ],
)
def test_rarer_spellings_go_to_the_careful_parser(text: str):
    assert read_map(text) is None
    assert parse_map(text) is not None


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SPELLINGS), st.integers(0, 2**32 - 1))
def test_mutated_text_is_read_alike_or_left_to_the_careful_parser(text: str, seed: int):
    rng = random.Random(seed)
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        position = rng.randrange(len(chars) + 1)
        action = rng.random()
        if action < 0.4 and position < len(chars):
            del chars[position]
        elif action < 0.8:
            chars.insert(position, rng.choice("()[]{},:+-*/ d0s1 7 mod floordiv in"))
        elif position < len(chars):
            chars[position] = rng.choice("0123456789-( )")
    mutated = "".join(chars)
    fast = read_map(mutated)
    careful = _careful(mutated)
    if fast is not None:
        assert careful is not None, mutated
        assert _same(fast, careful), mutated


@pytest.mark.parametrize(
    "text", ["d0 * 4 + d1 floordiv 8 + s0 mod 5 - 3", "-(d0 - 3) / -2", "(d0 + rt0) mod 3 + (d0 + rt0) mod 3"]
)
def test_expressions_read_fast_and_alike(text: str):
    scope = _default_scope(text, None, None, None)
    fast = read_expr(text, scope)
    assert fast is not None
    assert fast is _parse_expr_carefully(text, scope)
    assert parse_expr(text) is fast


@pytest.mark.parametrize("repeats", [0, 4, 40])
def test_long_text_with_repeated_groups_reads_alike_with_and_without_the_group_memo(repeats):
    # short text is read without the group memo, long text (made by substitution) with it
    group = "((d0 * 4 + d1) floordiv 3 + (d0 * 4 + d1) mod 3 * 2)"
    results = " + ".join([f"{group} mod 5", f"-{group}", "(d1 + 1) floordiv 2"] * repeats)
    text = (
        f"(d0, d1) -> ({results or '(d1 + 1) floordiv 2'}, {group}), domain: d0 in [0, 9], "
        f"d1 in [0, 3], {group} floordiv 7 in [0, 3]"
    )
    assert (len(tokens_of(text)) >= _MEMO_TOKENS) == (repeats > 0)
    fast = read_map(text)
    assert fast is not None
    assert _same(fast, _parse_map_carefully(text))
