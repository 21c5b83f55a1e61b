"""``report.build``: the figures ``TARGET_FIGURES`` lists fill a target's JSON in one fixed order,
whatever was imported before."""

from hlo_index.hlo import parse_module_text
from hlo_index.report.build import MODULE_FIGURES, TARGET_FIGURES, module_report

MODULE = """HloModule ordered

fused {
  p0 = f32[16,8] parameter(0)
  ROOT n = f32[16,8] negate(p0)
}

ENTRY main {
  a = f32[16,8] parameter(0)
  ROOT f = f32[16,8] fusion(a), kind=kLoop, calls=fused, metadata={op_name="jit(f)/neg" source_file="f.py" source_line=3}
}
"""  # noqa: E501  (one instruction per line, as XLA prints it)


def test_the_figures_are_an_explicit_table():
    names = [f.__module__.rsplit(".", 1)[-1] for f in TARGET_FIGURES]
    assert names == ["finding_kinds", "operand_figures", "source", "cost"]
    assert [f.__module__.rsplit(".", 1)[-1] for f in MODULE_FIGURES] == ["cost"]


def test_keys_come_in_the_published_order():
    module = parse_module_text(MODULE)
    report = module_report(module, "out2in", options={"analyses": True, "physical": True, "target": "gpu"})
    (target,) = report.targets
    assert list(target.extra) == ["target", "gpu_emitter", "source"]
    assert target.extra["source"]["op_name"] == "jit(f)/neg" and target.extra["source"]["line"] == 3
    (entry,) = target.output_to_input
    assert list(entry.extra) == ["utilization", "coalescing", "physical_maps"]
    # an elementwise read of the whole operand: every element once
    assert entry.extra["utilization"]["distinct_elements"] == 16 * 8
