"""The spec examples' maps (as ``hlo-index analyze`` prints them) against the numpy reference
``hlo_index.reference.read_set``: for sampled output elements the map's read set must be the op's
true read set; for small examples the input-to-output map must be the inverse of that relation.

This catches a spec map that is itself wrong (the dot rhs map); where the spec over-approximates
knowingly (dynamic-update-slice's src), ours must still be exact.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hlo_index.affine import parse_map
from hlo_index.hlo import parse_module_text
from hlo_index.reference import read_set as reference_read_set

from .examples import EXAMPLES, IN2OUT, OUT2IN
from .helpers import map_texts, relation
from .test_spec_maps import one_line_attributes, target_of

SAMPLES = 24


def _example(name):
    (ex,) = [e for e in EXAMPLES if e.name == name]
    return ex


def _root(example):
    module = parse_module_text(one_line_attributes(example.hlo))
    return module.entry.root


def _out_points(shape_dims, count, seed):
    rng = np.random.default_rng(seed)
    corners = [tuple(c) for c in itertools.product(*[(0, n - 1) for n in shape_dims])][:8]
    random = [tuple(int(rng.integers(0, n)) for n in shape_dims) for _ in range(count)]
    return list(dict.fromkeys(corners + random))


def _map_read_set(map_texts_, point, runtime=None):
    found = set()
    for text in map_texts_:
        found |= parse_map(text).read_set(point, runtime)
    return found


OUT2IN_CASES = [
    ("Slice", 0),
    ("Pad", 0),
    ("Pad", 1),
    ("Reshape: generic example 1", 0),
    ("Reshape: generic example 2", 0),
    ("Concatenate", 0),
    ("Concatenate", 1),
    ("Concatenate", 2),
    ("Dot", 0),
    ("Dot", 1),
    ("ReduceWindow", 0),
    ("ReduceWindow", 1),
    ("Transpose", 0),
    ("Reverse", 0),
    ("Broadcast", 0),
    ("Gather", 1),
    ("Bitcast: transpose-reshape-transpose", 0),
    ("Intro: reduce dimensions={0,3}", 0),
] + [("Reduce (variadic), both directions", op) for op in range(4)]


@pytest.mark.parametrize("name, operand", OUT2IN_CASES, ids=[f"{n}|operand{o}" for n, o in OUT2IN_CASES])
def test_out2in_map_is_the_reference_read_set(name, operand, tmp_path_factory):
    example = _example(name)
    instr = _root(example)
    target = target_of(example, tmp_path_factory)
    outputs = range(len(instr.shape.tuple_shapes)) if instr.shape.tuple_shapes else (0,)
    for output in outputs:
        texts = map_texts(target, OUT2IN, operand, output)
        shape = instr.shape.leaf(output) if instr.shape.tuple_shapes else instr.shape
        for point in _out_points(shape.dims, SAMPLES, seed=operand):
            want = reference_read_set(instr, output, point, operand)
            assert _map_read_set(texts, point) == want, f"output {output} element {point}"


@pytest.mark.parametrize("offsets", [(1, 0, 100), (0, 0, 226), (7, -3, 500)], ids=str)
def test_dynamic_slice_map_with_runtime_offsets(offsets, tmp_path_factory):
    """rt_i is the offset clamped into [0, dim - size] (so 500 reads like 226)."""
    example = _example("DynamicSlice")
    instr = _root(example)
    (text,) = map_texts(target_of(example, tmp_path_factory), OUT2IN, 0)
    runtime = {i + 1: np.array(v) for i, v in enumerate(offsets)}
    clamped = tuple(min(max(v, 0), hi) for v, hi in zip(offsets, (1, 0, 226)))
    for point in _out_points(instr.shape.dims, SAMPLES, seed=1):
        assert parse_map(text).read_set(point, clamped) == reference_read_set(instr, 0, point, 0, runtime)


def test_gather_map_with_runtime_indices(tmp_path_factory):
    """rt0/rt1 are indices[d0, 0] / indices[d0, 1] clamped into [0, 26] / [0, 68]."""
    example = _example("Gather")
    instr = _root(example)
    (text,) = map_texts(target_of(example, tmp_path_factory), OUT2IN, 0)
    rng = np.random.default_rng(7)
    indices = np.stack([rng.integers(-5, 40, 1806), rng.integers(-5, 80, 1806)], axis=1)
    m = parse_map(text)
    for point in _out_points(instr.shape.dims, SAMPLES, seed=2):
        rt = (min(max(int(indices[point[0], 0]), 0), 26), min(max(int(indices[point[0], 1]), 0), 68))
        assert m.read_set(point, rt) == reference_read_set(instr, 0, point, 0, {1: indices}), point


@pytest.mark.parametrize("offsets", [(0, 0), (15, 20), (3, 11), (30, -2)], ids=str)
def test_dynamic_update_slice_maps_with_runtime_offsets(offsets, tmp_path_factory):
    """upd and src: exactly the reference at the (clamped) offsets. The spec's src map is the
    identity (XLA's over-approximation); ours says "not overwritten" with constraints on the offsets."""
    example = _example("DynamicUpdateSlice")
    instr = _root(example)
    target = target_of(example, tmp_path_factory)
    (upd_text,) = map_texts(target, OUT2IN, 1)
    src_texts = map_texts(target, OUT2IN, 0)
    runtime = {2: np.array(offsets[0]), 3: np.array(offsets[1])}
    clamped = (min(max(offsets[0], 0), 15), min(max(offsets[1], 0), 20))
    for point in _out_points(instr.shape.dims, 40, seed=3):
        assert parse_map(upd_text).read_set(point, clamped) == reference_read_set(instr, 0, point, 1, runtime)
        assert _map_read_set(src_texts, point, clamped) == reference_read_set(instr, 0, point, 0, runtime)


IN2OUT_CASES = [
    ("Slice", 0),
    ("Concatenate", 0),
    ("Concatenate", 1),
    ("Concatenate", 2),
    ("Reshape: generic example 1", 0),
    ("Reshape: generic example 2", 0),
    ("Broadcast", 0),
    ("Reverse", 0),
    ("Bitcast: transpose-reshape-transpose", 0),
    ("Pad", 0),
    ("Intro: reduce dimensions={0,3}", 0),
    ("Intro: reduce dimensions={0,3}", 1),
]


@pytest.mark.parametrize("name, operand", IN2OUT_CASES, ids=[f"{n}|operand{o}" for n, o in IN2OUT_CASES])
def test_in2out_map_is_the_inverse_of_the_reference(name, operand, tmp_path_factory):
    """Every (input element, output element) pair of the in2out map is a read of the reference,
    and every read appears: enumerated over the whole (small) output."""
    example = _example(name)
    instr = _root(example)
    texts = map_texts(target_of(example, tmp_path_factory), IN2OUT, operand)
    want = set()
    for point in itertools.product(*[range(n) for n in instr.shape.dims]):
        for read in reference_read_set(instr, 0, point, operand):
            want.add(tuple(read) + tuple(point))
    assert relation([parse_map(t) for t in texts]) == want
