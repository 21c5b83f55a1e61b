"""The one-pass walks for many outputs / many parameters agree with the per-output / per-parameter
walks: same relation (union of read sets at sampled elements) for every (output, parameter) pair
of real before-optimizations ENTRY computations."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

from hlo_index.fusion.output_summaries import all_inputs_to_output
from hlo_index.fusion.summaries import bottom_up_output_to_input
from hlo_index.fusion.walk import forward_input_to_output, top_down_output_to_input, walk_of
from hlo_index.hlo import load
from hlo_index.verify import Skip, predicted_read_set

CORPUS = os.environ.get("HLO_INDEX_CORPUS", os.path.join(os.path.dirname(__file__), "../../../shared/corpus"))
MODULES = [
    "convnet/convnet_train_step",
    "embedding/gather_scatter_zoo",
    "misc_ops/concat_pad_reverse_iota",
    "train_step/train_step_mlp_adam",
    "misc_ops/cumsum_argmax_reductions",
]


def _entry(name: str):
    path = os.path.join(CORPUS, f"{name}.before_optimizations.hlo.txt")
    if not os.path.exists(path):
        pytest.skip("corpus not found")
    [result] = load(path)
    return result.module.entry


def _sample(dims, rng, count=3):
    if any(d == 0 for d in dims):
        return []
    corners = [tuple(0 for _ in dims), tuple(d - 1 for d in dims)]
    return corners + [tuple(int(rng.integers(0, d)) for d in dims) for _ in range(count)]


def _range_points(m) -> int:
    n = 1
    for iv in (*m.range_vars, *(v.interval for v in m.runtime_vars)):
        n *= max(iv.size, 1)
    return n


def _same_relation(a, b, dims, rng) -> bool | None:
    """None when the maps cannot be compared by enumeration (unknown, too many range points)."""
    if any(m.is_undefined or _range_points(m) > 4096 for m in (*a, *b)):
        return None
    try:
        return all(predicted_read_set(a, p) == predicted_read_set(b, p) for p in _sample(dims, rng))
    except Skip:
        return None


@pytest.mark.parametrize("name", MODULES)
def test_bottom_up_equals_top_down(name):
    comp = _entry(name)
    order = walk_of(comp).order
    every = bottom_up_output_to_input(comp, order)
    rng = np.random.default_rng(0)
    compared = 0
    for out, per_param in enumerate(every):
        alone = top_down_output_to_input(comp, out)
        assert set(per_param) == set(alone)
        dims = comp.root.shape.leaf(out).dims
        for key in per_param:
            verdict = _same_relation(per_param[key], alone[key], dims, rng)
            assert verdict is not False, (out, key, [str(m) for m in per_param[key]], [str(m) for m in alone[key]])
            compared += verdict is True
    assert compared > 0


@pytest.mark.parametrize("name", MODULES)
def test_top_down_summaries_equal_forward_walks(name):
    comp = _entry(name)
    walk = walk_of(comp)
    every = all_inputs_to_output(comp, walk.order, walk.users)
    rng = np.random.default_rng(1)
    compared = 0
    for number, per_output in every.items():
        alone = forward_input_to_output(comp, number)
        dims = comp.parameters[number].shape.dims
        for out, (a, b) in enumerate(itertools.zip_longest(per_output, alone, fillvalue=())):
            assert bool(a) == bool(b), (number, out)
            verdict = _same_relation(a, b, dims, rng)
            assert verdict is not False, (number, out, [str(m) for m in a], [str(m) for m in b])
            compared += verdict is True
    assert compared > 0
