"""Every example of the core spec as data: the HLO snippet (wrapped into a module, otherwise as the
spec writes it) and the maps the spec prints for it, in the spec's own layout.

Where the spec's printed map is wrong (a documented slip), ``MapCheck.spec_says`` keeps what the
spec prints and ``maps`` holds the true map; docs/SPEC_AUDIT.md lists each case.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OUT2IN, IN2OUT = "out2in", "in2out"

MAX = """max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
"""

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


@dataclass(frozen=True)
class MapCheck:
    direction: str
    operand: int
    output: int
    maps: tuple[str, ...]
    spec_says: str | None = None  # the spec's (wrong) text when `maps` corrects a slip
    # The spec's map over-approximates; the true relation is the spec's map restricted by these
    # extra constraints (e.g. results inside the operand's shape) ...
    restrict: str | None = None
    # ... or the spec's relation minus the output points where operand `except_where_read` is read.
    except_where_read: int | None = None


@dataclass(frozen=True)
class Example:
    name: str  # the spec's section
    hlo: str
    checks: tuple[MapCheck, ...]
    instruction: str | None = None
    fusion: str | None = None
    computation: str | None = None
    source: str = "en"  # which translation the example comes from
    notes: tuple[str, ...] = field(default_factory=tuple)


def entry_module(body: str, extra: str = "") -> str:
    indented = "\n".join("  " + ln if ln.strip() else ln for ln in body.strip().splitlines())
    return f"HloModule spec\n\n{extra}\nENTRY main {{\n{indented}\n}}\n"


def check(direction, operand, maps, output=0, spec_says=None, restrict=None, except_where_read=None) -> MapCheck:
    if isinstance(maps, str):
        maps = (maps,)
    return MapCheck(direction, operand, output, tuple(maps), spec_says, restrict, except_where_read)


EXAMPLES: list[Example] = []


def example(*args, **kwargs) -> Example:
    ex = Example(*args, **kwargs)
    EXAMPLES.append(ex)
    return ex


# ---------------------------------------------------------------------------------- intro
example(
    "Intro: broadcast",
    entry_module("""
p0 = f32[20] parameter(0)
ROOT bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2) -> (d1),
domain:
d0 in [0, 9],
d1 in [0, 19],
d2 in [0, 29]""",
            spec_says="(i, j, k) -> (j) for i in [0, 10], j in [0, 20] and k in [0, 30]",
        ),
    ),
    instruction="bc0",
    notes=("the intro writes half-open sizes as inclusive intervals; true is [0, 9] x [0, 19] x [0, 29]",),
)

example(
    "Intro: reduce dimensions={0,3}",
    entry_module(
        """
in = f32[2, 4, 8, 16] parameter(0)
c0 = f32[] constant(0)
ROOT out = f32[4, 8] reduce(in, c0), dimensions={0,3}, to_apply=add
""",
        ADD,
    ),
    (
        check(
            IN2OUT,
            0,
            """(d0, d1, d2, d3) -> (d1, d2),
domain:
d0 in [0, 1], d1 in [0, 3], d2 in [0, 7], d3 in [0, 15]""",
        ),
        check(
            OUT2IN,
            0,
            """(d0, d1)[s0, s1] -> (s0, d0, d1, s1),
domain:
d0 in [0, 3], d1 in [0, 7], s0 in [0,1], s1 in [0, 15]""",
        ),
    ),
    instruction="out",
)

# ------------------------------------------------------------------------------- unfused ops
example(
    "Elementwise",
    entry_module("""
p0 = f32[10, 20] parameter(0)
p1 = f32[10, 20] parameter(1)
ROOT output = f32[10, 20] add(p0, p1)
"""),
    tuple(
        check(
            d,
            op,
            """(d0, d1) -> (d0, d1),
domain:
d0 in [0, 9],
d1 in [0, 19]""",
        )
        for d in (OUT2IN, IN2OUT)
        for op in (0, 1)
    ),
    instruction="output",
    notes=("the spec prints p0 only; zh-TW gives the same map for every input_i",),
)

example(
    "Broadcast",
    entry_module("""
p0 = f32[20] parameter(0)
ROOT bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2) -> (d1),
domain:
d0 in [0, 9],
d1 in [0, 19],
d2 in [0, 29]""",
        ),
        check(
            IN2OUT,
            0,
            """(d0)[s0, s1] -> (s0, d0, s1),
domain:
d0 in [0, 19],
s0 in [0, 9],
s1 in [0, 29]""",
        ),
    ),
    instruction="bc0",
)

example(
    "Iota",
    entry_module("""
ROOT iota = f32[2,4] iota(), dimensions={1}
"""),
    (),
    instruction="iota",
    notes=(
        "iota has no operand: the spec's maps (d0, d1) -> () and ()[s0, s1] -> (s0, s1) "
        "have no operand to attach to; the test checks the JSON has no operand entries",
    ),
)

example(
    "DynamicSlice",
    entry_module("""
src = s32[2, 2, 258] parameter(0)
of1 = s32[] parameter(1)
of2 = s32[] parameter(2)
of3 = s32[] parameter(3)
ROOT ds = s32[1, 2, 32] dynamic-slice(src, of1, of2, of3), dynamic_slice_sizes={1, 2, 32}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2),
domain:
d0 in [0, 0],
d1 in [0, 1],
d2 in [0, 31],
rt0 in [0, 1],
rt1 in [0, 0],
rt2 in [0, 226]""",
        ),
    )
    + tuple(
        check(
            OUT2IN,
            op,
            """(d0, d1, d2) -> (),
domain:
d0 in [0, 0],
d1 in [0, 1],
d2 in [0, 31]""",
        )
        for op in (1, 2, 3)
    ),
    instruction="ds",
)

example(
    "DynamicUpdateSlice",
    entry_module("""
src = s32[20,30] parameter(0)
upd = s32[5,10] parameter(1)
of1 = s32[] parameter(2)
of2 = s32[] parameter(3)
ROOT dus = s32[20,30] dynamic-update-slice(
    s32[20,30] src, s32[5,10] upd, s32[] of1, s32[] of2)
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1) -> (d0, d1),
domain:
d0 in [0, 19],
d1 in [0, 29]""",
            except_where_read=1,
        ),
        check(
            OUT2IN,
            1,
            """(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1),
domain:
d0 in [0, 19],
d1 in [0, 29],
rt0 in [0, 15],
rt1 in [0, 20]""",
            restrict="d0 - rt0 in [0, 4], d1 - rt1 in [0, 9]",
        ),
    )
    + tuple(
        check(
            OUT2IN,
            op,
            """(d0, d1) -> (),
domain:
d0 in [0, 19],
d1 in [0, 29]""",
        )
        for op in (2, 3)
    ),
    instruction="dus",
    notes=(
        "the spec's upd map has no constraint, so read literally it also maps outputs outside "
        "the updated window to upd indices outside [0, 4] x [0, 9]; ours carries "
        "d0 - rt0 in [0, 4], d1 - rt1 in [0, 9] (exactly what is read): compared with the spec's "
        "map restricted to upd's shape",
        "the spec's src map is the identity (XLA's over-approximation: it reads src also under "
        "the update); ours reads src exactly where upd is not read (4 pieces constrained on "
        "rt0, rt1): compared with the spec's relation minus upd's points, per offset value",
    ),
)

example(
    "Gather",
    entry_module("""
operand = f32[33,76,70] parameter(0)
indices = s32[1806,2] parameter(1)
ROOT gather = f32[1806,7,8,4] gather(operand, indices),
  offset_dims={1,2,3},
  collapsed_slice_dims={},
  start_index_map={0,1},
  index_vector_dim=1,
  slice_sizes={7,8,4}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3),
domain:
d0 in [0, 1805],
d1 in [0, 6],
d2 in [0, 7],
d3 in [0, 3],
rt0 in [0, 26],
rt1 in [0, 68]""",
        ),
        check(
            OUT2IN,
            1,
            """(d0, d1, d2, d3)[s0] -> (d0, s0),
domain:
d0 in [0, 1805],
d1 in [0, 6],
d2 in [0, 7],
d3 in [0, 3],
s0 in [0, 1]""",
        ),
    ),
    instruction="gather",
)

example(
    "Transpose",
    entry_module("""
p0 = f32[3, 12288, 6, 128] parameter(0)
ROOT transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2, d3) -> (d0, d3, d1, d2),
domain:
d0 in [0, 2],
d1 in [0, 5],
d2 in [0, 127],
d3 in [0, 12287],""",
        ),
        check(
            IN2OUT,
            0,
            """(d0, d1, d2, d3) -> (d0, d2, d3, d1),
domain:
d0 in [0, 2],
d1 in [0, 12287],
d2 in [0, 5],
d3 in [0, 127]""",
        ),
    ),
    instruction="transpose",
)

_REVERSE = """(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3),
domain:
d0 in [0, 0],
d1 in [0, 16],
d2 in [0, 8],
d3 in [0, 8]"""
example(
    "Reverse",
    entry_module("""
p0 = f32[1, 17, 9, 9] parameter(0)
ROOT reverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}
"""),
    (check(OUT2IN, 0, _REVERSE), check(IN2OUT, 0, _REVERSE)),
    instruction="reverse",
)

_REDUCE_OUT_TO_INPUT = """(d0)[s0] -> (s0, d0),
domain:
d0 in [0, 9],
s0 in [0, 255]"""
_REDUCE_OUT_TO_INIT = """(d0) -> (),
domain:
d0 in [0, 9]"""
_REDUCE_INPUT_TO_OUT = """(d0, d1) -> (d1),
domain:
d0 in [0, 255],
d1 in [0, 9]"""
_REDUCE_INIT_TO_OUT = """()[s0] -> (s0),
domain:
s0 in [0, 9]"""
example(
    "Reduce (variadic), both directions",
    entry_module(
        """
p0 = f32[256,10] parameter(0)
p0_init = f32[] constant(-inf)
p1 = s32[256,10] parameter(1)
p1_init = s32[] constant(0)
ROOT out = (f32[10], s32[10]) reduce(p0, p1, p0_init, p1_init),
  dimensions={0}, to_apply=max
""",
        """max {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  m = f32[] maximum(a, c)
  n = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(m, n)
}
""",
    ),
    tuple(
        # zh-TW: "for i, j = 0, ... INPUT_COUNT": every output reads every input and every init.
        check(OUT2IN, op, _REDUCE_OUT_TO_INPUT if op < 2 else _REDUCE_OUT_TO_INIT, output=out)
        for out in (0, 1)
        for op in range(4)
    )
    + tuple(
        check(IN2OUT, op, _REDUCE_INPUT_TO_OUT if op < 2 else _REDUCE_INIT_TO_OUT, output=out)
        for out in (0, 1)
        for op in range(4)
    ),
    instruction="out",
    notes=(
        "the spec's `max` for a 2-input reduce must be a variadic (tuple) reducer; written here",
        "en prints out[0]/p0 and p0_init; zh-TW states the same maps for every input_i/init_i, output_j",
    ),
)

example(
    "Slice",
    entry_module("""
p0 = f32[10, 20, 50] parameter(0)
ROOT slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0),
  slice={[5:10:1], [3:20:7], [0:50:2]}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2),
domain:
d0 in [0, 4],
d1 in [0, 2],
d2 in [0, 24]""",
        ),
        check(
            IN2OUT,
            0,
            """(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2),
domain:
d0 in [5, 9],
d1 in [3, 17],
d2 in [0, 48],
(d1 - 3) mod 7 in [0, 0],
d2 mod 2 in [0, 0]""",
        ),
    ),
    instruction="slice",
)

_COLLAPSE = """(d0) -> (d0 floordiv 8, d0 mod 8),
domain:
d0 in [0, 31]"""
_EXPAND = """(d0, d1) -> (d0 * 8 + d1),
domain:
d0 in [0, 3],
d1 in [0, 7]"""
example(
    "Reshape: collapse shape",
    entry_module("""
p0 = f32[4,8] parameter(0)
ROOT reshape = f32[32] reshape(p0)
"""),
    (check(OUT2IN, 0, _COLLAPSE), check(IN2OUT, 0, _EXPAND)),
    instruction="reshape",
)

example(
    "Reshape: expand shape",
    entry_module("""
p0 = f32[32] parameter(0)
ROOT reshape = f32[4, 8] reshape(p0)
"""),
    (check(OUT2IN, 0, _EXPAND), check(IN2OUT, 0, _COLLAPSE)),
    instruction="reshape",
)

example(
    "Reshape: generic example 1",
    entry_module("""
p0 = f32[4,8] parameter(0)
ROOT reshape = f32[2, 4, 4] reshape(p0)
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4),
domain:
d0 in [0, 1],
d1 in [0, 3],
d2 in [0, 3]""",
        ),
        check(
            IN2OUT,
            0,
            """(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4),
domain:
d0 in [0, 3],
d1 in [0, 7]""",
        ),
    ),
    instruction="reshape",
    notes=(
        "vi prints the same maps as (2d0 + (4d1 + d2) / 8, (4d1 + d2) mod 8) and "
        "((8d0 + d1) / 16, ((8d0 + d1) mod 16) / 4, d1 mod 4); checked too",
    ),
)

example(
    "Reshape: generic example 2",
    entry_module("""
p0 = f32[4, 8, 12] parameter(0)
ROOT reshape = f32[32, 3, 4] reshape(p0)
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2),
domain:
d0 in [0, 31],
d1 in [0, 2]
d2 in [0, 3]""",
        ),
        check(
            IN2OUT,
            0,
            """(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4),
domain:
d0 in [0, 3],
d1 in [0, 7],
d2 in [0, 11]""",
        ),
    ),
    instruction="reshape",
)

# The spec gives no bitcast snippet, only "a composition of transpose-reshape-transpose": two
# bitcasts whose maps follow from the layouts by hand (linear physical index equal on both sides).
example(
    "Bitcast: layout-only (a transpose)",
    entry_module("""
p0 = f32[3,4]{0,1} parameter(0)
ROOT bitcast = f32[4,3]{1,0} bitcast(p0)
"""),
    (
        # in: linear = d1 * 3 + d0 ; out: linear = e0 * 3 + e1  =>  e0 = d1, e1 = d0
        check(OUT2IN, 0, "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 2]"),
        check(IN2OUT, 0, "(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 3]"),
    ),
    instruction="bitcast",
    notes=("no spec snippet; expected maps derived by hand from the layouts",),
)

example(
    "Bitcast: transpose-reshape-transpose",
    entry_module("""
p0 = f32[2,6]{1,0} parameter(0)
ROOT bitcast = f32[3,4]{0,1} bitcast(p0)
"""),
    (
        # out (e0, e1), dim 0 minor: linear = e1 * 3 + e0 ; in: linear = d0 * 6 + d1
        check(
            OUT2IN, 0, "(d0, d1) -> ((d1 * 3 + d0) floordiv 6, (d1 * 3 + d0) mod 6), domain: d0 in [0, 2], d1 in [0, 3]"
        ),
        check(
            IN2OUT, 0, "(d0, d1) -> ((d0 * 6 + d1) mod 3, (d0 * 6 + d1) floordiv 3), domain: d0 in [0, 1], d1 in [0, 5]"
        ),
    ),
    instruction="bitcast",
    notes=("no spec snippet; expected maps derived by hand from the layouts",),
)

_CONCAT_HLO = entry_module("""
p0 = f32[2, 5, 7] parameter(0)
p1 = f32[2, 11, 7] parameter(1)
p2 = f32[2, 17, 7] parameter(2)
ROOT output = f32[2, 33, 7] concatenate(f32[2, 5, 7] p0, f32[2, 11, 7] p1, f32[2, 17, 7] p2), dimensions={1}
""")
example(
    "Concatenate",
    _CONCAT_HLO,
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2) -> (d0, d1, d2),
domain:
d0 in [0, 1],
d1 in [0, 4],
d2 in [0, 6]""",
        ),
        check(
            OUT2IN,
            1,
            """(d0, d1, d2) -> (d0, d1 - 5, d2),
domain:
d0 in [0, 1],
d1 in [5, 15],
d2 in [0, 6]""",
        ),
        check(
            OUT2IN,
            2,
            """(d0, d1, d2) -> (d0, d1 - 16, d2),
domain:
d0 in [0, 1],
d1 in [16, 32],
d2 in [0, 6]""",
        ),
        check(
            IN2OUT,
            0,
            """(d0, d1, d2) -> (d0, d1, d2),
domain:
d0 in [0, 1],
d1 in [0, 4],
d2 in [0, 6]""",
        ),
        check(
            IN2OUT,
            1,
            """(d0, d1, d2) -> (d0, d1 + 5, d2),
domain:
d0 in [0, 1],
d1 in [0, 10],
d2 in [0, 6]""",
        ),
        check(
            IN2OUT,
            2,
            """(d0, d1, d2) -> (d0, d1 + 16, d2),
domain:
d0 in [0, 1],
d1 in [0, 16],
d2 in [0, 6]""",
        ),
    ),
    instruction="output",
    notes=(
        "out->in dims are the output's sub-range each operand covers (the spec's d1 in [5, 15]); "
        "a map over the whole output box with a constraint on d1 is the same relation",
    ),
)

example(
    "Concatenate (two inputs)",
    entry_module("""
p0 = f32[3,50] parameter(0)
p1 = f32[3,30] parameter(1)
ROOT concat = f32[3,80] concatenate(f32[3,50] p0, f32[3,30] p1),
  dimensions={1}
"""),
    (
        check(OUT2IN, 0, "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]"),
        check(OUT2IN, 1, "(d0, d1) -> (d0, d1 - 50), domain: d0 in [0, 2], d1 in [50, 79]"),
        check(IN2OUT, 0, "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]"),
        check(IN2OUT, 1, "(d0, d1) -> (d0, d1 + 50), domain: d0 in [0, 2], d1 in [0, 29]"),
    ),
    instruction="concat",
    source="vi",
)

example(
    "Dot",
    entry_module("""
p0 = f32[4, 128, 256] parameter(0)
p1 = f32[4, 256, 64] parameter(1)
ROOT output = f32[4, 128, 64] dot(p0, p1),
  lhs_batch_dims={0}, rhs_batch_dims={0},
  lhs_contracting_dims={2}, rhs_contracting_dims={1}
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1, d2)[s0] -> (d0, d1, s0),
domain:
d0 in [0, 3],
d1 in [0, 127],
d2 in [0, 63],
s0 in [0, 255]""",
        ),
        check(
            OUT2IN,
            1,
            """(d0, d1, d2)[s0] -> (d0, s0, d2),
domain:
d0 in [0, 3],
d1 in [0, 127],
d2 in [0, 63],
s0 in [0, 255]""",
        ),
        check(
            IN2OUT,
            0,
            """(d0, d1, d2)[s0] -> (d0, d1, s0),
domain:
d0 in [0, 3],
d1 in [0, 127],
d2 in [0, 255],
s0 in [0, 63]""",
        ),
        check(
            IN2OUT,
            1,
            """(d0, d1, d2)[s0] -> (d0, s0, d2),
domain:
d0 in [0, 3],
d1 in [0, 255],
d2 in [0, 63],
s0 in [0, 127]""",
            spec_says="(d0, d1, d2)[s0] -> (d0, s0, d1)",
        ),
    ),
    instruction="output",
    notes=(
        "p1 -> output: p1's d1 is the contracted dim (size 256) and d2 its free dim (size 64, "
        "output dim 2), so the output index is (d0, s0, d2); the spec's (d0, s0, d1) would put "
        "a value up to 255 into a size-64 dim",
    ),
)

example(
    "Pad",
    entry_module("""
p0 = f32[4, 4] parameter(0)
p1 = f32[] parameter(1)
ROOT pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0
"""),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4),
domain:
d0 in [1, 7],
d1 in [4, 7],
(d0 - 1) mod 2 in [0, 0]""",
        ),
        check(
            OUT2IN,
            1,
            """(d0, d1) -> (),
domain:
d0 in [0, 11],
d1 in [0, 15]""",
            except_where_read=0,
        ),
    ),
    instruction="pad",
    notes=(
        "the spec's map reads the padding value at every output element, also the 16 that "
        "copy p0 (XLA's over-approximation); ours reads it exactly where p0 is not read "
        "(5 maps): compared with the spec's relation minus p0's points",
    ),
)

example(
    "ReduceWindow",
    entry_module(
        """
c_inf = f32[] constant(-inf)
p0 = f32[1024, 514] parameter(0)
ROOT outpu = f32[1024, 3] reduce-window(p0, c_inf),
  window={size=1x512 pad=0_0x0_0}, to_apply=max
""",
        MAX,
    ),
    (
        check(
            OUT2IN,
            0,
            """(d0, d1)[s0] -> (d0, d1 + s0),
domain:
d0 in [0, 1023],
d1 in [0, 2],
s0 in [0, 511]""",
        ),
        check(
            OUT2IN,
            1,
            """(d0, d1) -> (),
domain:
d0 in [0, 1023],
d1 in [0, 2]""",
        ),
    ),
    instruction="outpu",
    notes=("the spec names the instruction `outpu` (typo kept); operand order is (p0, c_inf)",),
)

# ------------------------------------------------------------------------------------ fusions


def fusion_module(body: str, params: list[str], root_shape: str, extra: str = "") -> str:
    indented = "\n".join("  " + ln if ln.strip() else ln for ln in body.strip().splitlines())
    entry_params = "\n".join(f"  q{i} = {shape} parameter({i})" for i, shape in enumerate(params))
    args = ", ".join(f"q{i}" for i in range(len(params)))
    return (
        f"HloModule spec\n\n{extra}\nf {{\n{indented}\n}}\n\nENTRY main {{\n{entry_params}\n"
        f"  ROOT fusion = {root_shape} fusion({args}), kind=kLoop, calls=f\n}}\n"
    )


example(
    "Fusion: one input, several indexing maps",
    fusion_module(
        """
p0 = f32[1000, 1000] parameter(0)
transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}
ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)
""",
        ["f32[1000,1000]"],
        "f32[1000,1000]",
    ),
    (
        check(
            OUT2IN,
            0,
            (
                "(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]",
                "(d0, d1) -> (d1, d0), domain: d0 in [0, 999], d1 in [0, 999]",
            ),
        ),
    ),
    fusion="fusion",
    notes=("the spec gives the maps without domains; the domain is the output shape",),
)

example(
    "Fusion: one input, deduplicated indexing map",
    fusion_module(
        """
p0 = f32[20, 10, 50] parameter(0)
lhs_transpose_1 = f32[10, 20, 50] transpose(p0), dimensions={1, 0, 2}
lhs_e = f32[10, 20, 50] exponential(lhs_transpose_1)
lhs_transpose_2 = f32[10, 50, 20] transpose(lhs_e), dimensions={0, 2, 1}
rhs_transpose_1 = f32[50, 10, 20] transpose(p0), dimensions={2, 1, 0}
rhs_log = f32[50, 10, 20] exponential(rhs_transpose_1)
rhs_transpose_2 = f32[10, 50, 20] transpose(rhs_log), dimensions={1, 0, 2}
ROOT output = f32[10, 50, 20] add(lhs_transpose_2, rhs_transpose_2)
""",
        ["f32[20,10,50]"],
        "f32[10,50,20]",
    ),
    (check(OUT2IN, 0, "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]"),),
    fusion="fusion",
)

_SOFTMAX_MAPS = (
    """(d0, d1, d2)[s0] -> (d0, d1, s0),
domain:
d0 in [0, 1],
d1 in [0, 64],
d2 in [0, 124],
s0 in [0, 124]""",
    """(d0, d1, d2) -> (d0, d1, d2),
domain:
d0 in [0, 1],
d1 in [0, 64],
d2 in [0, 124]""",
)
example(
    "Fusion: softmax",
    fusion_module(
        """
p0 = f32[2,65,125] parameter(0)
neg_inf = f32[] constant(-inf)
row_max = f32[2,65] reduce(p0, neg_inf), dimensions={2}, to_apply=max
max_b = f32[2,65,125] broadcast(row_max), dimensions={0,1}
shifted = f32[2,65,125] subtract(p0, max_b)
e = f32[2,65,125] exponential(shifted)
zero = f32[] constant(0)
row_sum = f32[2,65] reduce(e, zero), dimensions={2}, to_apply=add
sum_b = f32[2,65,125] broadcast(row_sum), dimensions={0,1}
ROOT out = f32[2,65,125] divide(e, sum_b)
""",
        ["f32[2,65,125]"],
        "f32[2,65,125]",
        MAX + "\n" + ADD,
    ),
    (check(OUT2IN, 0, _SOFTMAX_MAPS),),
    fusion="fusion",
    notes=(
        "the spec shows the softmax only as a picture; the HLO here is the textbook "
        "max-subtract-exp-sum-divide over the minor dim of f32[2,65,125]",
    ),
)

example(
    "Fusion: softmax through bitcasts",
    fusion_module(
        """
p0 = f32[2,65,125] parameter(0)
flat = f32[130,125] bitcast(p0)
neg_inf = f32[] constant(-inf)
row_max = f32[130] reduce(flat, neg_inf), dimensions={1}, to_apply=max
max_b = f32[130,125] broadcast(row_max), dimensions={0}
shifted = f32[130,125] subtract(flat, max_b)
e = f32[130,125] exponential(shifted)
zero = f32[] constant(0)
row_sum = f32[130] reduce(e, zero), dimensions={1}, to_apply=add
sum_b = f32[130,125] broadcast(row_sum), dimensions={0}
div = f32[130,125] divide(e, sum_b)
ROOT out = f32[2,65,125] bitcast(div)
""",
        ["f32[2,65,125]"],
        "f32[2,65,125]",
        MAX + "\n" + ADD,
    ),
    (check(OUT2IN, 0, _SOFTMAX_MAPS),),
    fusion="fusion",
    notes=(
        "same softmax with the rows flattened by bitcasts (as XLA's own softmax test does): "
        "the composed maps must simplify back to the spec's two maps",
    ),
)

example(
    "Simplifier: chained reshapes cancel",
    entry_module("""
p0 = f32[10, 10, 10] parameter(0)
reshape1 = f32[50, 20] reshape(p0)
ROOT reshape2 = f32[10, 10, 10] reshape(reshape1)
"""),
    (check(OUT2IN, 0, "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"),),
    computation="main",
)
