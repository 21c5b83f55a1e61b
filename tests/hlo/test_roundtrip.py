"""Property: parse → format_module → parse gives the same graph, for generated modules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import format_module, parse_module_text

from .graph import graph_signature

TYPES = [
    "pred",
    "s4",
    "s8",
    "s32",
    "u8",
    "u64",
    "f16",
    "bf16",
    "f32",
    "f64",
    "c64",
    "f8e4m3fn",
    "f8e5m2",
    "f4e2m1fn",
    "f8e8m0fnu",
]


@st.composite
def array_shapes(draw):
    rank = draw(st.integers(0, 3))
    dims = [draw(st.integers(0, 6)) for _ in range(rank)]
    text_dims = []
    for d in dims:
        kind = draw(st.sampled_from(["static"] * 4 + ["bounded", "unbounded"]))
        text_dims.append({"static": str(d), "bounded": f"<={d}", "unbounded": "?"}[kind])
    text = f"{draw(st.sampled_from(TYPES))}[{','.join(text_dims)}]"
    if draw(st.booleans()):
        m2m = draw(st.permutations(list(range(rank))))
        suffix = ""
        if draw(st.booleans()):
            suffix += "T" + "".join(
                draw(st.sampled_from(["(8,128)", "(2,1)", "(4,*)", "(1)"])) for _ in range(draw(st.integers(1, 2)))
            )
        suffix += draw(st.sampled_from(["", "L(4)", "#(u16)", "D(D,C)"]))
        if draw(st.booleans()):
            suffix += f"E({draw(st.integers(1, 32))})"
        if draw(st.booleans()):
            suffix += f"S({draw(st.integers(0, 3))})"
        if m2m or suffix:  # XLA reads "{" after a shape as a layout only before an integer or ':'
            text += "{" + ",".join(map(str, m2m)) + (":" + suffix if suffix else "") + "}"
    return text


shapes = st.recursive(
    array_shapes(), lambda inner: st.lists(inner, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ")"), max_leaves=5
)

ATTRIBUTES = st.sampled_from(
    [
        "dimensions={1,0}",
        "dimensions={}",
        "slice={[0:4:1], [2:8:3]}",
        "window={size=3x3 stride=2x1 pad=1_1x0_2}",
        "window={size=2 lhs_dilate=2 rhs_reversal=1}",
        "dim_labels=b01f_01io->b01f",
        "dim_labels=f0b_i0o->0bf",
        "direction=GE",
        "kind=kLoop",
        "index=3",
        "iota_dimension=0",
        "is_stable=true",
        "largest=false",
        "sharding={devices=[2,1]<=[2]}",
        'frontend_attributes={a="b"}',
        'backend_config={"x":{"y":[1,2]}}',
        'custom_call_target="weird \\"name\\""',
        "lhs_contracting_dims={1}",
        "slice_sizes={1,2,3}",
        'metadata={op_type="Dot" op_name="jit(f)/dot" source_file="a.py" source_line=7}',
        'metadata={op_name="x" stack_frame_id=4}',
        "unknown_thing={a {b} c}",
        "replica_groups={{0,1}}",
    ]
)


@st.composite
def modules(draw):
    lines = [
        "HloModule gen, is_scheduled=true",
        "",
        "%helper (a: f32[], b: f32[]) -> f32[] {",
        "  %a = f32[] parameter(0)",
        "  %b = f32[] parameter(1)",
        "  ROOT %s = f32[] add(%a, %b)",
        "}",
        "",
        "ENTRY %main {",
    ]
    names = []
    shape_of = {}
    for i in range(draw(st.integers(1, 3))):
        shape_of[f"p{i}"] = shape = draw(shapes)
        lines.append(f"  %p{i} = {shape} parameter({i})")
        names.append(f"p{i}")
    for i in range(draw(st.integers(0, 6))):
        opcode = draw(st.sampled_from(["negate", "add", "tuple", "my-new-op", "reduce", "fusion", "constant"]))
        shape = draw(shapes)
        if opcode == "constant":  # a literal XLA reads for its shape
            shape, literal = draw(
                st.sampled_from(
                    [
                        ("f32[]", "-inf"),
                        ("f32[2]", "{1, 2}"),
                        ("c64[]", "(1, 2)"),
                        ("s32[2,1]{1,0}", "{ {1}, {2} }"),
                        ("bf16[]", "nan"),
                    ]
                )
            )
            call = f"constant({literal})"
        else:
            # XLA's verifier: negate and add take arrays (a tuple-shaped value only for the rest)
            arrays = [n for n in names if not shape_of[n].startswith("(")]
            if opcode in ("negate", "add") and not arrays:
                opcode = "tuple"
            pool = arrays if opcode in ("negate", "add") else names
            # XLA's parser: negate takes one operand, add two, a reduce inputs and as many initial values
            arity = {"negate": (1, 1), "add": (2, 2)}.get(opcode, (0, 3))
            ops = draw(st.lists(st.sampled_from(pool), min_size=arity[0], max_size=arity[1]))
            if opcode in ("negate", "add"):  # XLA's verifier: the operands' shape, and the result's
                shape = shape_of[ops[0]]
                ops = [n if shape_of[n] == shape else ops[0] for n in ops]
            if opcode == "tuple":  # XLA's verifier: a tuple's elements are its operands' shapes
                shape = "(" + ", ".join(shape_of[n] for n in ops) + ")"
            if opcode == "reduce":  # XLA's verifier: values and initial values the combiner's f32[]
                scalar = f"c{i}"
                lines.append(f"  %{scalar} = f32[] constant(0)")
                shape_of[scalar] = shape = "f32[]"
                ops = [scalar, scalar]
            call = f"{opcode}({', '.join('%' + n for n in ops)})"
        attrs = draw(st.lists(ATTRIBUTES, max_size=3, unique=True))
        # the attributes XLA's parser requires of these ops
        if opcode == "reduce":  # a scalar reduces no dimension
            attrs = [a for a in attrs if not a.startswith("dimensions=")] + ["to_apply=%helper", "dimensions={}"]
        if opcode == "fusion":
            attrs.append("calls=%helper")
            if not any(a.startswith("kind=") for a in attrs):
                attrs.append("kind=kLoop")
        name = f"i{i}.{draw(st.sampled_from(['x', 'y-z', '0']))}"
        lines.append(f"  %{name} = {shape} {call}" + "".join(", " + a for a in attrs))
        names.append(name)
        shape_of[name] = shape
    root_shape = "(" + ", ".join(shape_of[n] for n in names) + ")"
    lines.append(f"  ROOT %out = {root_shape} tuple({', '.join('%' + n for n in names)})")
    lines.append("}")
    return "\n".join(lines) + "\n"


@settings(deadline=None, derandomize=True, max_examples=150)
@given(modules())
def test_parse_print_parse_is_the_same_graph(text):
    first = parse_module_text(text)
    printed = format_module(first)
    second = parse_module_text(printed)
    assert graph_signature(second) == graph_signature(first)
    assert format_module(second) == printed
