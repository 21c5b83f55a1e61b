"""``--verify`` checks a full reduction of millions of elements (a loss, a global norm) rather than
skipping it: its read set is listed a chunk of range points at a time, the same set as at once."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_index import verify
from hlo_index.affine import parse_map
from hlo_index.api import SelectedTarget
from hlo_index.hlo import parse_module_text
from hlo_index.verify import points

# 2,048 x 2,048: 4,194,304 elements read by the one output element, past 2^20
FULL_REDUCTION = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  p0 = f32[2048,2048] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[] reduce(p0, c), dimensions={0,1}, to_apply=add
}

ENTRY main {
  p0 = f32[2048,2048] parameter(0)
  ROOT f = f32[] fusion(p0), kind=kInput, calls=fused
}
"""


def test_a_full_reduction_of_millions_of_elements_is_checked():
    module = parse_module_text(FULL_REDUCTION)
    [fusion] = module.fusions
    outcome = verify.verify_target(SelectedTarget("fusion", fusion), samples=2, seed=0)
    assert not outcome.errors
    assert not outcome.notes, outcome.notes  # not skipped
    assert outcome.checked_points == 1


@pytest.mark.parametrize(
    "text, dims",
    [
        ("()[s0] -> (s0 floordiv 768, s0 mod 768), domain: s0 in [0, 49151]", (64, 768)),
        ("()[s0] -> (s0 mod 768), domain: s0 in [0, 49151]", (768,)),
        (
            "(d0)[s0, s1] -> (s1, s0), domain: d0 in [0, 3], s0 in [0, 99], s1 in [0, 299], s0 + s1 in [5, 250]",
            (300, 100),
        ),
    ],
)
def test_listing_in_chunks_gives_the_set_listed_at_once(monkeypatch, text, dims):
    m = parse_map(text)
    point = (1,) * m.num_dims
    whole = points.predicted_linear((m,), point, dims)
    monkeypatch.setattr(points, "_CHUNK", 1000)
    assert len(list(points._range_chunks(m.range_vars))) > 1
    chunked = points.predicted_linear((m,), point, dims)
    assert whole is not None and len(whole) > 0
    np.testing.assert_array_equal(chunked, whole)
