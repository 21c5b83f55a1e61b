"""``report.build``: a fusion equal in structure to one reported before in its module is reported
from that one (its twin), under its own names, and says exactly what analysing it afresh says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo import parse_module_text
from hlo_index.report import build
from hlo_index.report.build import module_report

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"

# Two loop fusions of one structure (different names inside and out), and two Triton GEMM fusions
# of one structure whose operands XLA's heuristic judges, naming the transpose inside each.
MODULE = """HloModule twins

add_a {
  p0.a = f32[16,8]{1,0} parameter(0)
  p1.a = f32[16,8]{1,0} parameter(1)
  ROOT s.a = f32[16,8]{1,0} add(p0.a, p1.a)
}

add_b {
  p0.b = f32[16,8]{1,0} parameter(0)
  p1.b = f32[16,8]{1,0} parameter(1)
  ROOT s.b = f32[16,8]{1,0} add(p0.b, p1.b)
}

gemm_a {
  g0.a = f32[32,64]{1,0} parameter(0)
  t.a = f32[64,32]{1,0} transpose(g0.a), dimensions={1,0}
  g1.a = f32[32,16]{1,0} parameter(1)
  ROOT d.a = f32[64,16]{1,0} dot(t.a, g1.a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

gemm_b {
  g0.b = f32[32,64]{1,0} parameter(0)
  t.b = f32[64,32]{1,0} transpose(g0.b), dimensions={1,0}
  g1.b = f32[32,16]{1,0} parameter(1)
  ROOT d.b = f32[64,16]{1,0} dot(t.b, g1.b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY main {
  x = f32[16,8]{1,0} parameter(0)
  y = f32[16,8]{1,0} parameter(1)
  u = f32[32,64]{1,0} parameter(2)
  v = f32[32,16]{1,0} parameter(3)
  w = f32[32,64]{1,0} parameter(4)
  first = f32[16,8]{1,0} fusion(x, y), kind=kLoop, calls=add_a, metadata={op_name="jit(f)/first" source_file="f.py" source_line=3}
  second = f32[16,8]{1,0} fusion(y, first), kind=kLoop, calls=add_b, metadata={op_name="jit(f)/second" source_file="f.py" source_line=4}
  gemm.1 = f32[64,16]{1,0} fusion(u, v), kind=kCustom, calls=gemm_a, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
  gemm.2 = f32[64,16]{1,0} fusion(w, v), kind=kCustom, calls=gemm_b, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
  ROOT out = (f32[16,8]{1,0}, f32[64,16]{1,0}, f32[64,16]{1,0}) tuple(second, gemm.1, gemm.2)
}
"""  # noqa: E501  (one instruction per line, as XLA prints it)

OPTIONS = {"analyses": True, "target": "gpu"}


def _targets(monkeypatch, share: bool) -> dict:
    if not share:
        monkeypatch.setattr(build, "new_twins", lambda: None)
    report = module_report(parse_module_text(MODULE), "both", options=OPTIONS)
    assert not report.diagnostics
    return {t.name: t for t in report.targets}


def test_a_twin_is_analysed_once_and_named_as_itself(monkeypatch):
    tables = []
    real = build.output_to_input_table

    def counted(target):
        tables.append(target.name)
        return real(target)

    monkeypatch.setattr(build, "output_to_input_table", counted)
    targets = _targets(monkeypatch, share=True)
    assert tables.count("first") == 1 and "second" not in tables  # the twin's maps, not a new analysis
    second = targets["second"]
    # every entry names the fusion's own operands, in both directions
    assert {(e.operand, e.operand_name) for e in second.output_to_input} == {(0, "y"), (1, "first")}
    assert {(e.operand, e.operand_name) for e in second.input_to_output} == {(0, "y"), (1, "first")}
    assert second.calls == "add_b" and second.extra["source"]["op_name"] == "jit(f)/second"
    # an elementwise add reads each operand at the output's own index
    assert {m.text for e in second.output_to_input for m in e.maps} == {
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 15], d1 in [0, 7]"
    }


def test_a_figure_naming_an_instruction_is_the_fusions_own(monkeypatch):
    targets = _targets(monkeypatch, share=True)
    for name, transpose in (("gemm.1", "%t.a"), ("gemm.2", "%t.b")):
        reasons = {e.extra["coalescing"]["reason"] for e in targets[name].output_to_input}
        assert all(transpose in r for r in reasons), reasons


def _json(targets: dict) -> str:
    return json.dumps({name: t.to_json() for name, t in targets.items()}, sort_keys=True)


def test_twins_report_what_a_fresh_analysis_reports(monkeypatch):
    shared = _json(_targets(monkeypatch, share=True))
    assert shared == _json(_targets(monkeypatch, share=False))


def _dumps() -> list[Path]:
    """The bundled samples and GPU dumps, and the field's accelerator dumps where ../shared is
    beside the checkout (each has fusions repeated by the dozen)."""
    found = sorted((ROOT / "samples").glob("*.txt")) + sorted((ROOT / "tests/data/gpu").glob("*/*after_optimizations*"))
    if SHARED.is_dir():
        found += sorted(p for p in (SHARED / "field").rglob("*after_optimizations*") if p.stat().st_size < 4 << 20)
    return found


@pytest.mark.parametrize("path", _dumps(), ids=lambda p: p.name[:60])
def test_the_json_is_the_same_with_and_without_twins(path, monkeypatch):
    runner = CliRunner()
    args = ["analyze", str(path), "--format", "json", "--direction", "both"]
    shared = runner.invoke(main, args)
    monkeypatch.setattr(build, "new_twins", lambda: None)
    fresh = runner.invoke(main, args)
    assert shared.exit_code == fresh.exit_code
    assert shared.output == fresh.output
