"""Syntax XLA's parser reads (hlo_parser.cc / hlo_lexer.cc) and shapes it infers, one test each."""

from __future__ import annotations

import pytest

from hlo_index.hlo import ParseError, format_shape, load, parse_module_text
from hlo_index.hlo.loader import parse_checked


def entry(body: str, header: str = "HloModule m") -> str:
    return f"{header}\n\nENTRY main {{\n{body}\n}}\n"


def root(text: str):
    return parse_module_text(text).entry.root


def shape_of(text: str, name: str) -> str:
    m = parse_module_text(text)
    return format_shape(next(i for i in m.instructions if i.name == name).shape)


def rejected(text: str, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    assert fragment in info.value.diagnostic.message, info.value.diagnostic.message


def test_nested_operand_instructions_become_instructions_before_their_user():
    m = parse_module_text(entry("  ROOT r = f32[10,10] sqrt(f32[10,10] broadcast(f32[] parameter(0)))"))
    names = [i.opcode for i in m.entry.instructions]
    assert names == ["parameter", "broadcast", "sqrt"]
    assert m.entry.root.operands[0].opcode == "broadcast"
    assert m.entry.root.operands[0].operands[0].parameter_number == 0


def test_execution_thread_after_the_body_and_name_with_colon():
    text = (
        'HloModule m:\n\nasync_comp {\n  ROOT p = f32[2] parameter(0)\n}, execution_thread="host"\n\n'
        "ENTRY main {\n  ROOT p = f32[2] parameter(0)\n}\n"
    )
    m = parse_module_text(text)
    assert m.name == "m" and m.by_name["async_comp"].execution_thread == "host"


@pytest.mark.parametrize(
    "body",
    [
        "  p = f32[2] parameter(0)\n  ROOT w = f32[2]{0} copy(\n    p)",
        "  ROOT p = s32 [5,10] parameter(0)",
        "  ROOT p = f32[3, 6] {1, 0} parameter(0)",
        '  p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), custom_call_target=\n    "foo"',
        (
            '  p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), custom_call_target="x", '
            'backend_config="{\n  \\"a\\": 1\n}"'
        ),
    ],
)
def test_blanks_and_newlines_where_xla_skips_them(body):
    assert root(entry(body)).shape.element_type in ("f32", "s32")


def test_buffer_shapes_empty_tuple_and_parameters_without_colons():
    text = (
        "HloModule m\n\nENTRY main (input f32[2], b (s32[], b(s32[2]))) -> () {\n"
        "  input = f32[2] parameter(0)\n  b = (s32[], b(s32[2])) parameter(1)\n  ROOT t = () tuple()\n}\n"
    )
    m = parse_module_text(text)
    assert format_shape(m.entry.by_name["b"].shape) == "(s32[], b(s32[2]))"
    assert m.entry.root.shape.tuple_shapes == ()


def test_attribute_forms():
    body = (
        "  a = f32[128,32] parameter(0)\n  b = f32[128,128] parameter(1)\n  c = s32[] constant(0)\n"
        "  t = (s32[], s32[]) tuple(c, c)\n"
        "  ROOT cp = f32[128,128] collective-permute(a, b, t, t), source_target_pairs={{0,1}}, "
        'slice_sizes={{128,32}}, metadata={source_line=5, op_type="x"}'
    )
    r = root(entry(body))
    assert r.attrs["slice_sizes"] == ((128, 32),)
    assert r.metadata.source_line == 5 and r.metadata.op_type == "x"
    conv = root(
        entry(
            # '?' marks a dimension of no role: five letters, five dimensions; the kernel takes the
            # input's 5 features
            "  l = f32[1,2,3,4,5] parameter(0)\n  k = f32[1,2,3,5,4] parameter(1)\n"
            "  ROOT c = f32[1,2,3,4,4] convolution(l, k), window={size=1x1}, dim_labels=?b01f_0?1io->b01?f"
        )
    )
    assert conv.attrs["dim_labels"].input_batch == 1


# Attribute forms of recent XLA (hlo_parser.cc: named shardings over a mesh, iota device lists, origin,
# result_accuracy, statistics, the collective group mode, mesh-axes replica groups); jaxlib 0.10.2's
# hlo_module_from_text accepts each of these lines.
RECENT_FORMS = [
    'ROOT a = f32[4] add(p, p), origin={{"p" {1}}}',
    "ROOT a = f32[4] exponential(p), result_accuracy={mode=highest}",
    "ROOT a = f32[4] exponential(p), result_accuracy={tolerance={atol=1e-05,rtol=0.001,ulps=2}}",
    'ROOT a = f32[4] add(p, p), frontend_attributes={_xla_x="1",attr={"k":1}}',
    "ROOT a = f32[4] add(p, p), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}",
    "ROOT a = f32[4] add(p, p), sharding={devices=[4]<=[2,2]T(1,0)}",
    "ROOT a = f32[4] add(p, p), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}",
    "ROOT a = f32[4] add(p, p), sharding={mesh['x'=2,'y'=2], [{'x'}]}",
    "ROOT a = f32[4] add(p, p), sharding={mesh['x'=2,'y'=2], [{}], replicated={'y'}}",
    "ROOT a = f32[4] add(p, p), sharding={mesh['x'=2,'y'=2], [{'x'}], unreduced={'y'}}",
    "ROOT a = f32[4] add(p, p), sharding={mesh[], replicated}",
    "ROOT a = f32[4] add(p, p), sharding={unknown shard_as 1}",
    "ROOT a = f32[4] add(p, p), statistics={visualizing_index=1,stat-1=33,stat-2=44}",
    'ROOT a = f32[4] add(p, p), metadata={op_name="x" scheduling_name="a" stack_frame_id=1}',
    "ROOT a = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,1}}, to_apply=sum, mode=cross_replica",
    "ROOT a = f32[4] all-reduce(p), channel_id=1, replica_groups=mesh['a'=2,'b'=4] {'b','a'},"
    " use_global_device_ids=true, to_apply=sum",
    "ROOT a = f32[8] all-gather(p), channel_id=1, replica_groups=mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0))"
    " {'a'}, dimensions={0}, use_global_device_ids=true",
    "ROOT a = f32[8] all-gather(p), channel_id=1, replica_groups=mesh['a'=8] {'a':(2)2}, dimensions={0},"
    " use_global_device_ids=true",
]
SUM = "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"


@pytest.mark.parametrize("line", RECENT_FORMS)
def test_recent_attribute_forms_read_as_xla_reads_them(line):
    text = "HloModule m, num_partitions=8\n\n" + SUM + "ENTRY e {\n  p = f32[4] parameter(0)\n  " + line + "\n}\n"
    r = parse_module_text(text).entry.root
    if "replica_groups" in r.attrs:
        groups = r.replica_groups()
        assert groups and all(len(g) == len(groups[0]) > 1 for g in groups)
        assert sorted(d for g in groups for d in g) == list(range(sum(len(g) for g in groups)))


def test_same_named_inline_bodies_in_two_computations():
    body = "{\n    x = f32[] parameter(0)\n    y = f32[] parameter(1)\n    ROOT s = f32[] add(x, y)\n  }"
    text = (
        f"HloModule m\n\nother {{\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        f"  ROOT r = f32[] reduce(p, z), dimensions={{0}}, to_apply={body}\n}}\n\n"
        f"ENTRY main {{\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        f"  ROOT r = f32[] reduce(p, z), dimensions={{0}}, to_apply={body}\n}}\n"
    )
    m = parse_module_text(text)
    assert sorted(c.name for c in m.computations) == ["main", "other", "r.to_apply", "r.to_apply.1"]


def test_single_instruction_operands_known_by_shape_become_parameters():
    [result] = parse_checked("f32[4] add(f32[4] x, f32[4])", "<s>")
    comp = result.module.entry
    assert [(i.name, i.opcode, i.parameter_number) for i in comp.instructions] == [
        ("x", "parameter", 0),
        ("_1", "parameter", 1),
        ("add", "add", None),
    ]


def test_bare_instructions_read_as_an_entry_computation_with_a_note(tmp_path):
    path = tmp_path / "snippet.hlo"
    path.write_text("p0 = f32[20] parameter(0)\nbc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}\n")
    [result] = load(str(path))
    assert result.module is not None and result.module.entry.root.name == "bc0"
    assert [d.severity for d in result.diagnostics] == ["note"]
    assert "read as one ENTRY computation" in result.diagnostics[0].message


def test_old_dynamic_slice_form_and_all_gather_start_with_an_array_result():
    from hlo_index.fusion import output_to_input

    text = entry(
        "  p = f32[8,4] parameter(0)\n  s = s32[2] parameter(1)\n"
        "  ROOT d = f32[2,4] dynamic-slice(p, s), dynamic_slice_sizes={2,4}"
    )
    rows = output_to_input(parse_module_text(text).entry)
    assert [len(r.maps) for r in rows] == [1, 1] and not any(m.is_undefined for r in rows for m in r.maps)


# ---- shapes XLA infers ----------------------------------------------------------------------

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = add(a, b)\n}\n\n"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("r = negate(p)", "f32[4,6]"),
        ("r = compare(p, p), direction=LT", "pred[4,6]"),
        ("r = transpose(p), dimensions={1,0}", "f32[6,4]"),
        ("r = reduce(p, z), dimensions={1}, to_apply=add", "f32[4]"),
        ("r = broadcast(z), dimensions={}", "f32[]"),
        ("r = concatenate(p, p), dimensions={0}", "f32[8,6]"),
        ("r = pad(p, z), padding=1_2_1x0_0", "f32[10,6]"),
        ("r = tuple(p, z)", "(f32[4,6], f32[])"),
        ("r = dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={1}", "f32[4,4]"),
        ("r = reduce-window(p, z), window={size=2x3 stride=2x3}, to_apply=add", "f32[2,2]"),
        ("r = call(p, z), to_apply=add", "f32[]"),
    ],
)
def test_inferred_shapes(line, expected):
    text = (
        "HloModule m\n\n" + ADD + "ENTRY main {\n  p = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
        f"  ROOT {line}\n}}\n"
    )
    assert shape_of(text, "r") == expected


def test_gather_and_convolution_shapes_inferred():
    text = entry(
        "  o = f32[33,76] parameter(0)\n  i = s64[42,1] parameter(1)\n"
        "  ROOT g = gather(o, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
        "index_vector_dim=1, slice_sizes={1,1}"
    )
    assert shape_of(text, "g") == "f32[42,1,1]"
    conv = entry(
        "  l = f32[1,10,10,3] parameter(0)\n  k = f32[3,3,3,8] parameter(1)\n"
        "  ROOT c = convolution(l, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"
    )
    assert shape_of(conv, "c") == "f32[1,10,10,8]"


def test_shapeless_instruction_xla_cannot_infer_is_a_positioned_error():
    rejected(
        entry("  p = f32[4] parameter(0)\n  ROOT s = slice(p), slice={[0:2]}"), "cannot infer shape for opcode: slice"
    )
    rejected(
        entry('  p = f32[4] parameter(0)\n  ROOT c = custom-call(p), custom_call_target="f"'),
        "cannot infer shape for opcode: custom-call",
    )


# ---- what XLA rejects -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, fragment",
    [
        (entry("  ROOT x = f32[]{} parameter(0)"), "unexpected '{'"),
        (
            entry("  ROOT p = f32[2] parameter(0)", "HloModule m, input_output_alias={ {0}: (0 {0}) }"),
            "malformed input_output_alias",
        ),
        (
            entry("  ROOT p = f32[2] parameter(0)", "HloModule m, buffer_donor={ (zero, {0}) }"),
            "malformed buffer_donor",
        ),
        (
            entry(
                "  p = f32[2] parameter(0)\n  c = f32[2] constant({1, 2})\n  ROOT a = f32[2] add(f32[2] p, f32[3] c)"
            ),
            "The declared operand shape f32[3]",
        ),
        (entry("  p = f32[2] parameter(0)\n  ROOT i = f32[2] infeed(p)"), "infeed must have a non-empty tuple shape"),
        (
            entry("  p = f32[2] parameter(0)\n  ROOT e = f32[2] exponential(p), result_accuracy={mode=high}"),
            "expects ResultAccuracy",
        ),
        (
            "HloModule m\n\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\n\n"
            "ENTRY b {\n  ROOT p = f32[] parameter(0)\n}\n",
            "expects only one ENTRY",
        ),
    ],
)
def test_rejected_as_xla_rejects(text, fragment):
    rejected(text, fragment)
