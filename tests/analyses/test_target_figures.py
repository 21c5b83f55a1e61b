"""``analyses.target_figures`` returns the coalescing figures as data, one per output-to-input row;
the report layer stores them (no report object goes in)."""

from hlo_index import Session
from hlo_index.analyses.target_figures import TargetCoalescing, target_coalescing
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text

MODULE = """HloModule figures

transposed {
  p0 = f32[8,16] parameter(0)
  t = f32[16,8] transpose(p0), dimensions={1,0}
  ROOT n = f32[16,8] negate(t)
}

straight {
  p0 = f32[16,8] parameter(0)
  ROOT n = f32[16,8] negate(p0)
}

ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16,8] parameter(1)
  f1 = f32[16,8] fusion(a), kind=kLoop, calls=transposed
  f2 = f32[16,8] fusion(b), kind=kLoop, calls=straight
  c = f32[16,8] copy(b)
  ROOT t = (f32[16,8], f32[16,8], f32[16,8]) tuple(f1, f2, c)
}
"""


def _figures(name: str, asked: str) -> TargetCoalescing:
    module = parse_module_text(MODULE)
    target = module.by_name[name] if name in module.by_name else next(i for i in module.instructions if i.name == name)
    rows = output_to_input(target)

    def shapes(row):
        return target.operands[row.operand].shape, target.shape

    return target_coalescing(target, module, rows, shapes, asked)


def test_cpu_figures_follow_the_innermost_loop_through_the_layout():
    with Session():
        across = _figures("f1", "cpu")
        along = _figures("f2", "cpu")
    assert across.target.startswith("cpu") and across.gpu_emitter is None
    # the innermost output dim walks p0's outer dim (stride 16 elements): not contiguous
    assert [f["verdict"] for f in across.operands] == ["not contiguous"]
    # step 1 along the innermost loop: contiguous, so the loop vectorises
    assert [f["verdict"] for f in along.operands] == ["vectorisable"]


def test_a_gpu_target_that_is_not_a_fusion_is_unknown_for_every_row():
    with Session():
        copy = _figures("c", "gpu")
    assert copy.target.startswith("gpu") and copy.gpu_emitter is None
    assert len(copy.operands) == 1
    assert copy.operands[0]["verdict"] == "unknown" and "not a fusion" in copy.operands[0]["reason"]


def test_a_gpu_fusion_names_its_emitter():
    with Session():
        fused = _figures("f2", "gpu")
    assert fused.gpu_emitter
    assert [f["target"] for f in fused.operands] == ["gpu"]
