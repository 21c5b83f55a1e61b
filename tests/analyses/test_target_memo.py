"""The target figures' memos (the module's target, the CPU figures) live in the analysis context,
not in the options dict the caller passes: the library path gets them, the caller's dict is left
as it was given, and the memos die with the context."""

from hlo_index import Session
from hlo_index.hlo import parse_module_text
from hlo_index.report.build import module_report

# Two fusions calling one fused computation (a repeated layer): one map set, one pair of shapes.
REPEATED = """HloModule repeated

fused {
  p0 = f32[8,16] parameter(0)
  t = f32[16,8] transpose(p0), dimensions={1,0}
  ROOT n = f32[16,8] negate(t)
}

ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[8,16] parameter(1)
  f1 = f32[16,8] fusion(a), kind=kLoop, calls=fused
  f2 = f32[16,8] fusion(b), kind=kLoop, calls=fused
  ROOT t = (f32[16,8], f32[16,8]) tuple(f1, f2)
}
"""


def test_target_memos_live_in_the_context_not_in_the_options():
    module = parse_module_text(REPEATED)
    options = {"analyses": True, "target": "cpu"}
    given = dict(options)
    with Session() as session:
        report = module_report(module, "out2in", options=options, own_context=False)
        sizes = session.sizes()
    assert options == given, "the caller's options must not carry per-run state"
    assert sizes["analyses.gpu_target.targets"] == 1  # one module: decided once
    assert sizes["analyses.target_figures.cpu_access"] == 1  # both fusions share the figure
    figures = [entry.extra["coalescing"] for target in report.targets for entry in target.output_to_input]
    assert len(figures) == 2 and figures[0] == figures[1]
    assert figures[0]["target"] == "cpu"
    assert session.sizes() == {}  # gone with the context


def test_the_asked_target_is_part_of_the_memo():
    module = parse_module_text(REPEATED)
    with Session() as session:
        chosen = []
        for target in ("cpu", "gpu", "cpu"):
            report = module_report(module, "out2in", options={"analyses": True, "target": target}, own_context=False)
            chosen.append(report.targets[0].extra["target"].split()[0])
        assert session.sizes()["analyses.gpu_target.targets"] == 2
    assert chosen == ["cpu", "gpu", "cpu"]
