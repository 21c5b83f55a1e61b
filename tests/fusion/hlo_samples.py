"""Small HLO modules (text) for fusion tests: the spec's fusion examples and a few data-movement fusions."""

from __future__ import annotations


def fusion_module(fused_body: str, params: list[str], root_shape: str, name: str = "fused") -> str:
    """A module whose ENTRY calls ``fused_body`` (a computation named ``name``) as one kLoop fusion."""
    entry_params = "\n".join(f"  p{i} = {shape} parameter({i})" for i, shape in enumerate(params))
    operands = ", ".join(f"p{i}" for i in range(len(params)))
    return f"""HloModule test_module

{name} {{
{fused_body}
}}

ENTRY main {{
{entry_params}
  ROOT fusion = {root_shape} fusion({operands}), kind=kLoop, calls={name}
}}
"""


TRANSPOSE_ADD = fusion_module(
    """
  p0 = f32[1000, 1000] parameter(0)
  transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}
  ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)""",
    ["f32[1000,1000]"],
    "f32[1000,1000]",
)

TRANSPOSE_CHAIN = fusion_module(
    """
  p0 = f32[20, 10, 50] parameter(0)
  lhs_transpose_1 = f32[10, 20, 50] transpose(p0), dimensions={1, 0, 2}
  lhs_e = f32[10, 20, 50] exponential(lhs_transpose_1)
  lhs_transpose_2 = f32[10, 50, 20] transpose(lhs_e), dimensions={0, 2, 1}
  rhs_transpose_1 = f32[50, 10, 20] transpose(p0), dimensions={2, 1, 0}
  rhs_log = f32[50, 10, 20] exponential(rhs_transpose_1)
  rhs_transpose_2 = f32[10, 50, 20] transpose(rhs_log), dimensions={1, 0, 2}
  ROOT output = f32[10, 50, 20] add(lhs_transpose_2, rhs_transpose_2)""",
    ["f32[20,10,50]"],
    "f32[10,50,20]",
)

SOFTMAX = """HloModule softmax_module

max_computation {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add_computation {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused_softmax {
  param_0 = f32[2,65,125] parameter(0)
  neg_inf = f32[] constant(-inf)
  reduce_max = f32[2,65] reduce(param_0, neg_inf), dimensions={2}, to_apply=max_computation
  bcast_max = f32[2,65,125] broadcast(reduce_max), dimensions={0,1}
  shifted = f32[2,65,125] subtract(param_0, bcast_max)
  exp = f32[2,65,125] exponential(shifted)
  zero = f32[] constant(0)
  reduce_sum = f32[2,65] reduce(exp, zero), dimensions={2}, to_apply=add_computation
  bcast_sum = f32[2,65,125] broadcast(reduce_sum), dimensions={0,1}
  ROOT softmax = f32[2,65,125] divide(exp, bcast_sum)
}

ENTRY main {
  p0 = f32[2,65,125] parameter(0)
  ROOT fusion = f32[2,65,125] fusion(p0), kind=kLoop, calls=fused_softmax
}
"""

RESHAPE_ROUND_TRIP = fusion_module(
    """
  p0 = f32[10, 10, 10] parameter(0)
  reshape1 = f32[50, 20] reshape(p0)
  ROOT reshape2 = f32[10, 10, 10] reshape(reshape1)""",
    ["f32[10,10,10]"],
    "f32[10,10,10]",
)


def slice_of_concat(start: int, limit: int) -> str:
    """concatenate(p0[2,5], p1[2,6]) along dim 1, then a slice of columns [start, limit)."""
    width = limit - start
    return fusion_module(
        f"""
  p0 = f32[2, 5] parameter(0)
  p1 = f32[2, 6] parameter(1)
  concat = f32[2, 11] concatenate(p0, p1), dimensions={{1}}
  ROOT s = f32[2, {width}] slice(concat), slice={{[0:2], [{start}:{limit}]}}""",
        ["f32[2,5]", "f32[2,6]"],
        f"f32[2,{width}]",
    )


MULTI_OUTPUT = fusion_module(
    """
  p0 = f32[4, 6] parameter(0)
  p1 = f32[6, 4] parameter(1)
  t = f32[6, 4] transpose(p0), dimensions={1, 0}
  n = f32[6, 4] negate(p1)
  r = f32[24] reshape(p1)
  ROOT out = (f32[6, 4], f32[6, 4], f32[24]) tuple(t, n, r)""",
    ["f32[4,6]", "f32[6,4]"],
    "(f32[6,4], f32[6,4], f32[24])",
)

UNREACHED_PARAMETER = fusion_module(
    """
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT n = f32[8] negate(p0)""",
    ["f32[8]", "f32[8]"],
    "f32[8]",
)

NESTED = """HloModule nested_module

inner {
  a = f32[6, 4] parameter(0)
  ROOT t = f32[4, 6] transpose(a), dimensions={1, 0}
}

helper {
  x = f32[4, 6] parameter(0)
  ROOT r = f32[24] reshape(x)
}

outer {
  p0 = f32[6, 4] parameter(0)
  f = f32[4, 6] fusion(p0), kind=kLoop, calls=inner
  c = f32[24] call(f), to_apply=helper
  ROOT rev = f32[24] reverse(c), dimensions={0}
}

ENTRY main {
  p = f32[6, 4] parameter(0)
  ROOT fusion = f32[24] fusion(p), kind=kLoop, calls=outer
}
"""

DATA_MOVEMENT = [
    fusion_module(
        """
  p0 = f32[3, 4, 5] parameter(0)
  t = f32[5, 3, 4] transpose(p0), dimensions={2, 0, 1}
  r = f32[15, 4] reshape(t)
  s = f32[5, 2] slice(r), slice={[3:13:2], [1:4:2]}
  ROOT rev = f32[5, 2] reverse(s), dimensions={0}""",
        ["f32[3,4,5]"],
        "f32[5,2]",
    ),
    fusion_module(
        """
  p0 = f32[4, 3] parameter(0)
  p1 = f32[] parameter(1)
  pd = f32[8, 8] pad(p0, p1), padding=1_0_1x2_3_0
  b = f32[2, 8, 8] broadcast(pd), dimensions={1, 2}
  ROOT r = f32[16, 8] reshape(b)""",
        ["f32[4,3]", "f32[]"],
        "f32[16,8]",
    ),
    fusion_module(
        """
  p0 = f32[2, 3] parameter(0)
  p1 = f32[2, 4] parameter(1)
  c = f32[2, 7] concatenate(p0, p1), dimensions={1}
  t = f32[7, 2] transpose(c), dimensions={1, 0}
  n = f32[7, 2] negate(t)
  ROOT a = f32[7, 2] add(n, t)""",
        ["f32[2,3]", "f32[2,4]"],
        "f32[7,2]",
    ),
]


def while_sums_rows(beside_opaque: bool = False) -> str:
    """A while loop summing rows 1, 3, 5 of x into acc, its state a tuple read back through
    get-tuple-element; ``beside_opaque`` adds an opaque custom-call reading the same parameters
    through a tuple, so that an unknown op stands between them and the root too."""
    if beside_opaque:
        tail = """  state = (s32[], f32[4], f32[7,4]) tuple(i0, acc0, x)
  opaque = f32[4] custom-call(state), custom_call_target="unknown_target"
  loop = f32[4] get-tuple-element(w), index=1
  ROOT out = f32[4] add(loop, opaque)"""
    else:
        tail = "  ROOT out = f32[4] get-tuple-element(w), index=1"
    return f"""HloModule loop

body {{
  p = (s32[], f32[4], f32[7,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[4] get-tuple-element(p), index=1
  x = f32[7,4] get-tuple-element(p), index=2
  two = s32[] constant(2)
  one = s32[] constant(1)
  row = s32[] multiply(i, two)
  row1 = s32[] add(row, one)
  zero = s32[] constant(0)
  ds = f32[1,4] dynamic-slice(x, row1, zero), dynamic_slice_sizes={{1,4}}
  r = f32[4] reshape(ds)
  acc2 = f32[4] add(acc, r)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[7,4]) tuple(i2, acc2, x)
}}

cond {{
  p = (s32[], f32[4], f32[7,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}}

ENTRY main {{
  x = f32[7,4] parameter(0)
  acc0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  t = (s32[], f32[4], f32[7,4]) tuple(i0, acc0, x)
  w = (s32[], f32[4], f32[7,4]) while(t), condition=cond, body=body
{tail}
}}
"""
