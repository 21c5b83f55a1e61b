"""The streamed ``analyze --format json`` text is exactly what ``json`` writes for the document."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from hlo_index.hlo import load_path
from hlo_index.render.json_out import render_json, write_json
from hlo_index.report.build import module_report

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"

WHOLE = """HloModule whole
ENTRY e {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  p2 = f32[16] parameter(2)
  a = f32[8,16] add(p0, p1)
  b = f32[8,16] broadcast(p2), dimensions={1}
  c = f32[8,16] multiply(a, b)
  u = f32[8,16] custom-call(p0), custom_call_target="opaque\\u00e9"
  ROOT t = (f32[8,16], f32[8,16], f32[8,16]) tuple(c, a, u)
}
"""


def _files() -> list[Path]:
    picked = sorted(CORPUS.glob("*/*.before_optimizations.hlo.txt"))[:6] if CORPUS.is_dir() else []
    return picked + sorted(SAMPLES.glob("*.hlo.txt"))[:2]


def _same(path: Path, options: dict) -> None:
    reports = [module_report(m, "both", options=options) for m in load_path(str(path))]
    out = io.StringIO()
    write_json(reports, out)
    assert out.getvalue() == render_json(reports) + "\n"
    json.loads(out.getvalue())


@pytest.mark.parametrize("options", [{"analyses": True}, {"analyses": False}, {"analyses": True, "physical": True}])
def test_streamed_json_is_the_document(tmp_path, options):
    path = tmp_path / "whole.hlo"
    path.write_text(WHOLE)
    _same(path, options)


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_streamed_json_is_the_document_on_real_dumps(path):
    _same(path, {"analyses": True})
