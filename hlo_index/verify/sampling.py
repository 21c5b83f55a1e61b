"""Seeded sampling: every choice seeded from what it is about, so runs repeat exactly and equal
questions get equal answers across a module's targets."""

from __future__ import annotations

import random
import zlib

import numpy as np


def stable_seed(value) -> int:
    """A seed from a value's text: the same in every run and process (``hash()`` of a str is not)."""
    return zlib.crc32(repr(value).encode())


def sample_points(dims: tuple[int, ...], count: int, rng: random.Random) -> list[tuple]:
    """Up to ``count`` elements of ``dims``: the first and the last, then ``rng``'s picks; sorted."""
    if any(d == 0 for d in dims):
        return []
    points = {tuple(0 for _ in dims), tuple(d - 1 for d in dims)}
    while len(points) < min(count, int(np.prod(dims, dtype=np.int64)) if dims else 1):
        points.add(tuple(rng.randrange(d) for d in dims))
    return sorted(points)


def seeded_rng(seed: int, *parts) -> random.Random:
    """A generator for one sampling decision, from the base seed and what the decision is about:
    equal questions (same dimensions, same image) get equal answers, so walks shared between
    operands and targets are memoised rather than repeated. (``random.Random`` with an int seed
    gives the same stream on every platform and is far cheaper to make than numpy's.)"""
    return random.Random(stable_seed((seed, parts)))


def sampled_elements(seed: int, dims: tuple[int, ...], count: int) -> tuple[tuple, ...]:
    """The seeded sample of ``count`` elements of ``dims`` (the first, the last, random ones) (memoised by callers:
    on gpt12, 616 distinct sampling questions among 103,322, each a generator made and run)."""
    return tuple(sample_points(dims, count, seeded_rng(seed, "elements", dims)))


def sampled_indices(seed: int, about: tuple, n: int, k: int) -> tuple[int, ...]:
    """``k`` seeded positions among ``n``, for the decision ``about``."""
    return tuple(seeded_rng(seed, *about, n).sample(range(n), k))
