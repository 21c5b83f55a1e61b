"""One normal form: every map hlo-index prints is a fixpoint of its own simplifier.

``parse_map(text).simplified()`` prints ``text`` again, for random maps and for every map the
commands print on the shared corpus and field dumps (when ``../shared`` is on this machine).
A dimension of one point is printed as its value, as XLA's ``Simplify`` does (its ConstantDims test).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings

from hlo_index.affine import parse_map
from hlo_index.hlo import load, parse_shape
from hlo_index.layout import bitcast_map, to_physical

from .affine_helpers import maps

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def _is_fixpoint(text: str) -> bool:
    return text == "KNOWN EMPTY" or str(parse_map(text).simplified()) == text


@settings(max_examples=300, deadline=None)
@given(maps(max_dims=3, max_range=2, max_results=3, max_constraints=3, runtime=1))
def test_printed_simplified_maps_are_fixpoints(m):
    s = m.simplified()
    assert _is_fixpoint(str(s)), str(s)


@pytest.mark.parametrize(
    "text, normal",
    [
        ("(d0) -> (d0), domain: d0 in [5, 5]", "(d0) -> (5), domain: d0 in [5, 5]"),  # XLA's ConstantDims
        ("(d0) -> (d0 - 1), domain: d0 in [0, 16], d0 in [1, 16]", "(d0) -> (d0 - 1), domain: d0 in [1, 16]"),
        (
            "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 1], rt0 in [0, 1]",
            "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 1]",
        ),
        (
            "(d0, d1) -> (d0, (d1 floordiv 128) * 128 + d1 mod 128), domain: d0 in [0, 255], d1 in [0, 511]",
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 255], d1 in [0, 511]",
        ),
    ],
)
def test_issue_examples_reach_the_normal_form(text, normal):
    s = str(parse_map(text).simplified())
    assert s == (normal or text)
    assert _is_fixpoint(s)


@pytest.mark.parametrize(
    "shape",
    [
        "bf16[256,512]{1,0:T(8,128)(2,1)}",
        "bf16[1024,128]{1,0:T(8,128)(2,1)}",
        "bf16[1024]{0:T(1024)(128)(2,1)}",
        "f32[3,5]{1,0:T(2,2)}",
        "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
        "f32[2,8,3,16]{3,1,2,0:T(8,128)}",
    ],
)
def test_layout_maps_are_printed_normal(shape):
    s = parse_shape(shape)
    bitcast = bitcast_map(s, s)
    assert _is_fixpoint(str(bitcast))
    identity = parse_map(
        "(" + ", ".join(f"d{i}" for i in range(s.rank)) + ") -> (" + ", ".join(f"d{i}" for i in range(s.rank)) + ")"
        ", domain: " + ", ".join(f"d{i} in [0, {n - 1}]" for i, n in enumerate(s.dims))
    )
    assert str(bitcast) == str(identity.simplified())  # a bitcast onto its own layout reads in place
    assert _is_fixpoint(str(to_physical(identity, s)))


def _shared_files() -> list[Path]:
    """Field and corpus dumps; without HLO_INDEX_CONFORMANCE only those under 2 MB (the big
    whole-program dumps take minutes)."""
    everything = os.environ.get("HLO_INDEX_CONFORMANCE") == "1"
    files = []
    for base in ("field", "corpus"):
        root = SHARED / base
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            dump = path.is_file() and not path.name.endswith((".md", ".json"))
            if dump and (everything or (not path.name.endswith(".gz") and path.stat().st_size < 2_000_000)):
                files.append(path)
    return files


SHARED_FILES = _shared_files()


@pytest.mark.skipif(not SHARED_FILES, reason="the shared dumps are not on this machine")
@pytest.mark.parametrize("path", SHARED_FILES, ids=[p.name for p in SHARED_FILES])
def test_every_map_printed_on_the_shared_dumps_is_a_fixpoint(path):
    from hlo_index.report.build import module_report

    texts: set[str] = set()
    for loaded in load(str(path)):
        if loaded.module is None:
            continue
        report = module_report(loaded.module, "both", options={"physical": True})
        for target in report.targets:
            for row in target.output_to_input + target.input_to_output:
                texts.update(m.text for m in row.maps if m.text is not None)
                texts.update(p["map"] for p in row.extra.get("physical_maps", ()) if p.get("map"))
    bad = sorted(t for t in texts if not _is_fixpoint(t))
    assert not bad, f"{len(bad)} of {len(texts)} printed maps change under the simplifier, e.g. {bad[:3]}"
