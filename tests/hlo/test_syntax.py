"""One test (positive and negative) per item of the HLO syntax the parser must accept."""

from __future__ import annotations

import pytest

from hlo_index.hlo import ParseError, parse_module_text, parse_modules_text
from hlo_index.hlo.model import ELEMENT_BITS, ConvDimLabels, PadDim, SliceDim, Tile, WindowDim
from hlo_index.hlo.parser import module_spans


def module(body: str, header: str = "HloModule m") -> str:
    return f"{header}\n\nENTRY %main {{\n{body}\n}}\n"


def entry_instr(body: str, name: str, header: str = "HloModule m"):
    return parse_module_text(module(body, header)).entry.by_name[name]


def fails(text: str, *fragments: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    message = info.value.diagnostic.message
    for fragment in fragments:
        assert fragment in message, message
    return info.value


# ---- module structure ----------------------------------------------------------------------


def test_header_attributes_are_kept_raw():
    header = (
        "HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, "
        "buffer_donor={ (1, {}) }, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, "
        'frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\\"x\\"=2]>}"}, num_partitions=2'
    )
    m = parse_module_text(module("  ROOT %p = f32[2]{0} parameter(0)", header))
    assert m.name == "m"
    assert m.attrs["is_scheduled"] == "true"
    assert m.attrs["input_output_alias"] == "{ {0}: (0, {}, may-alias) }"
    assert m.attrs["buffer_donor"] == "{ (1, {}) }"
    assert m.attrs["entry_computation_layout"] == "{(f32[2]{0})->f32[2]{0}}"
    assert m.attrs["num_partitions"] == "2"
    assert m.attrs["frontend_attributes"].startswith("{xla.sdy.meshes=")


def test_header_attribute_without_value_is_an_error():
    fails(module("  ROOT %p = f32[2] parameter(0)", "HloModule m, is_scheduled"), "unexpected")


TABLES = """
FileNames
1 "model.py"
2 "lib/layers.py"

FunctionNames
1 "main"
2 "dense"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=1 end_column=5}
2 {file_name_id=2 function_name_id=2 line=42 end_line=42 column=3 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=2 parent_frame_id=1}
"""


def test_stack_frame_tables_resolve_metadata_to_innermost_frame():
    text = (
        "HloModule m\n"
        + TABLES
        + ('\nENTRY %main {\n  ROOT %p = f32[2] parameter(0), metadata={op_name="jit(f)/dot" stack_frame_id=2}\n}\n')
    )
    m = parse_module_text(text)
    p = m.entry.root
    assert m.stack_frames[1].file == "model.py" and m.stack_frames[1].line == 10
    loc = m.source_location(p)
    assert (loc.file, loc.line, loc.function) == ("lib/layers.py", 42, "dense")
    assert p.metadata.op_name == "jit(f)/dot" and p.metadata.source_file == "lib/layers.py"
    assert p.metadata.source_line == 42 and p.metadata.stack_frame_id == 2


def test_unknown_stack_frame_id_leaves_location_unknown():
    text = (
        "HloModule m\n" + TABLES + "\nENTRY %main {\n  ROOT %p = f32[2] parameter(0), metadata={stack_frame_id=9}\n}\n"
    )
    m = parse_module_text(text)
    assert m.source_location(m.entry.root) is None


def test_headerless_module_and_missing_entry_marker():
    text = "%f (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n\n%g {\n  ROOT %y = f32[] parameter(0)\n}\n"
    m = parse_module_text(text)
    assert [c.name for c in m.computations] == ["f", "g"]
    assert m.entry.name == "g" and m.entry.is_entry  # XLA: the last computation is the entry


def test_entry_with_and_without_signature():
    with_sig = (
        "HloModule m\nENTRY %e (a: f32[2], b: (s32[], f32[])) -> f32[2] {\n  %a = f32[2] parameter(0)\n"
        "  %b = (s32[], f32[]) parameter(1)\n  ROOT %n = f32[2] negate(%a)\n}\n"
    )
    m = parse_module_text(with_sig)
    assert m.entry.name == "e" and m.entry.root.name == "n" and set(m.entry.parameters) == {0, 1}
    m2 = parse_module_text(module("  ROOT %a = f32[2] parameter(0)"))
    assert m2.entry.name == "main"


def test_signature_without_arrow_is_an_error():
    fails("HloModule m\nENTRY %e (a: f32[2]) f32[2] {\n  ROOT %a = f32[2] parameter(0)\n}\n", "unexpected")


def test_trailer_comment_and_execution_thread():
    text = (
        'HloModule m\n%side (x: f32[]) -> f32[], execution_thread="host" {\n  ROOT %x = f32[] parameter(0)\n'
        "} // side\n\nENTRY %main {\n  ROOT %p = f32[] parameter(0) /* a comment */\n} // main\n"
    )
    m = parse_module_text(text)
    assert m.by_name["side"].execution_thread == "host"
    assert m.entry.execution_thread is None


def test_unterminated_block_comment_is_an_error():
    fails(module("  ROOT %p = f32[] parameter(0) /* never closed"), "unexpected character")


def test_several_modules_in_one_file():
    text = module("  ROOT %p = f32[] parameter(0)", "HloModule a") + module(
        "  ROOT %q = s32[] parameter(0)", "HloModule b"
    )
    ms = parse_modules_text(text)
    assert [m.name for m in ms] == ["a", "b"]
    assert ms[1].entry.root.shape.element_type == "s32"


def test_a_line_starting_with_hlomodule_inside_a_string_does_not_begin_a_module():
    config = '"first line\nHloModule not_a_module, is_scheduled=true\nENTRY %x {\nlast line"'
    first = module(f"  ROOT %p = f32[2] parameter(0), backend_config={config}", "HloModule a")
    note = '{note="a frontend attribute\nHloModule y"}'
    second = module(f"  ROOT %q = s32[] parameter(0), frontend_attributes={note}", "HloModule b")
    third = module("  ROOT %r = u8[] parameter(0) /* a comment\nHloModule z */", "HloModule c")
    text = first + second + third + module("  ROOT %s = pred[] parameter(0)", "HloModule d")
    assert module_spans(text) == [
        (0, len(first)),
        (len(first), len(first + second)),
        (len(first + second), len(first + second + third)),
        (len(first + second + third), len(text)),
    ]
    ms = parse_modules_text(text)
    assert [m.name for m in ms] == ["a", "b", "c", "d"]
    assert ms[0].entry.root.attrs["backend_config"] == config  # kept as written
    assert ms[1].entry.root.attrs["frontend_attributes"] == note


def test_a_string_left_open_does_not_hide_the_modules_after_it():
    broken = module('  ROOT %p = f32[4] parameter(0), backend_config="abc', "HloModule a")
    text = broken + module("  ROOT %q = s32[] parameter(0)", "HloModule b")
    assert module_spans(text) == [(0, len(broken)), (len(broken), len(text))]


def test_a_name_that_begins_with_hlomodule_does_not_begin_a_module():
    text = (
        "HloModule a\n\nENTRY %main {\nHloModule.1 = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(HloModule.1)\n}\n"
    )
    assert module_spans(text) == [(0, len(text))]
    assert parse_module_text(text).entry.root.operands[0].name == "HloModule.1"


def test_missing_closing_brace_is_an_error():
    fails("HloModule m\nENTRY %main {\n  ROOT %p = f32[] parameter(0)\n", "end of input")


# ---- instructions -------------------------------------------------------------------------


def test_names_with_dots_and_dashes_and_bare_names():
    body = (
        "  %all-reduce.1-x = f32[2] parameter(0)\n  bare.name-2 = f32[2] negate(%all-reduce.1-x)\n"
        "  ROOT %r = f32[2] add(bare.name-2, all-reduce.1-x)"
    )
    m = parse_module_text(module(body))
    r = m.entry.root
    assert [o.name for o in r.operands] == ["bare.name-2", "all-reduce.1-x"]


def test_operands_with_inline_shapes_and_index_comments():
    body = (
        "  %a = f32[2]{0} parameter(0)\n  %b = f32[2]{0} parameter(1)\n"
        "  ROOT %t = (f32[2]{0}, /*index=1*/f32[2]{0}) tuple(f32[2]{0} %a, /*index=1*/f32[2]{0} %b)"
    )
    r = parse_module_text(module(body)).entry.root
    assert r.operand_names == ("a", "b")
    assert r.shape.num_outputs == 2 and r.shape.leaf(1).dims == (2,)


@pytest.mark.parametrize(
    "operands",
    [
        "%a, b",
        "b2, %a",
        "f32[2] %a, b",
        "f32[2]{0} a, f32[2]{0} %b",
        "f32[2]{0} a, /*index=1*/f32[2]{0} %b",
    ],
)
def test_operands_named_with_and_without_percent_in_one_list(operands):
    # XLA's parser (jaxlib 0.10.2) reads each of these lists as two operands; a hand-written list
    # (XLA's own emitter tests) may name some operands with % and some without
    body = "  a = f32[2]{0} parameter(0)\n  b = f32[2]{0} parameter(1)\n  b2 = f32[2]{0} negate(b)\n"
    body += f"  ROOT r = f32[2]{{0}} add({operands})"
    r = parse_module_text(module(body)).entry.root
    expected = ["b2", "a"] if operands.startswith("b2") else ["a", "b"]
    assert [o.name for o in r.operands] == expected


def test_instruction_without_result_shape():
    body = "  %a = f32[2] parameter(0)\n  ROOT %n = negate(%a)"
    r = parse_module_text(module(body)).entry.root
    assert r.opcode == "negate" and str(r.shape) == "f32[2]"  # inferred as XLA's parser does


def test_instruction_without_opcode_is_an_error():
    fails(module("  ROOT %a = f32[2]"), "unexpected")


def test_inline_computation_in_to_apply():
    body = (
        "  %a = f32[4] parameter(0)\n  %z = f32[] constant(0)\n"
        "  ROOT %r = f32[] reduce(%a, %z), dimensions={0}, to_apply={\n"
        "    %x = f32[] parameter(0)\n    %y = f32[] parameter(1)\n    ROOT %s = f32[] add(%x, %y)\n  }"
    )
    m = parse_module_text(module(body))
    callee = m.entry.root.called["to_apply"]
    assert callee.root.opcode == "add" and len(callee.parameters) == 2
    assert callee in m.computations
    assert callee.by_name["s"].line == 9


def test_inline_computation_with_syntax_error_reports_its_line():
    body = (
        "  %a = f32[4] parameter(0)\n  %z = f32[] constant(0)\n"
        "  ROOT %r = f32[] reduce(%a, %z), dimensions={0}, to_apply={\n"
        "    %x = f32[] parameter(0)\n    %y = f32[] add(%x %x) oops\n  }"
    )
    err = fails(module(body), "unexpected")
    assert err.diagnostic.line == 8


def test_async_start_done_and_control_predecessors():
    body = (
        "  %p = f32[8] parameter(0)\n"
        "  %ars = f32[8] all-reduce-start(%p), replica_groups={{0,1}}, to_apply=%sum\n"
        "  %ard = f32[8] all-reduce-done(%ars)\n"
        '  %cs = ((f32[8]), f32[8], u32[]) custom-call-start(%p), custom_call_target="foo"\n'
        "  %cd = f32[8] custom-call-done(%cs), control-predecessors={%ard}\n"
        "  ROOT %t = (f32[8], f32[8]) tuple(%ard, %cd)"
    )
    text = (
        "HloModule m\n%sum (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n" + module(body).split("\n", 1)[1]
    )
    m = parse_module_text(text)
    e = m.entry
    assert e.by_name["ard"].operands[0].opcode == "all-reduce-start"
    assert e.by_name["ars"].called["to_apply"].name == "sum"
    assert e.by_name["ars"].attrs["replica_groups"] == "{{0,1}}"
    assert e.by_name["ars"].attrs["replica_groups_typed"] == ((0, 1),)
    assert e.by_name["cd"].attrs["control-predecessors"] == ("ard",)
    assert e.by_name["cd"].control_predecessors == (e.by_name["ard"],)
    # custom-call-start is XLA's sugar for an async-start wrapping a custom-call (see test_async.py)
    assert e.by_name["cs"].opcode == "async-start"
    assert e.by_name["cs"].called["calls"].root.attrs["custom_call_target"] == "foo"


def test_unknown_opcodes_and_attributes_are_kept_raw():
    body = "  %p = f32[8] parameter(0)\n  ROOT %w = f32[8] brand-new-op(%p), shiny={a b {c}}, level=3x"
    r = parse_module_text(module(body)).entry.root
    assert r.opcode == "brand-new-op"
    assert r.attrs == {"shiny": "{a b {c}}", "level": "3x"}


def test_undefined_operand_is_a_diagnostic_with_position():
    err = fails(module("  %p = f32[8] parameter(0)\n  ROOT %n = f32[8] negate(%q)"), "%q", "not defined")
    assert (err.diagnostic.line, err.diagnostic.column) == (5, 8)


@pytest.mark.parametrize(
    "body",
    [
        # a use above the definition, as XLA's parser reads it: the operand does not exist yet
        "  %p = f32[8] parameter(0)\n  %n = f32[8] negate(%q)\n  %q = f32[8] exponential(%p)\n"
        "  ROOT %t = (f32[8], f32[8]) tuple(%n, %q)",
        # the same closing a cycle (each reads the other): no order computes it
        "  %p = f32[8] parameter(0)\n  %n = f32[8] add(%p, %q)\n  ROOT %q = f32[8] negate(%n)",
    ],
)
def test_an_operand_defined_below_its_user_is_a_diagnostic(body):
    err = fails(module(body), "%q of %n", "defined only below it", "instruction does not exist: q")
    assert (err.diagnostic.line, err.diagnostic.column) == (5, 3)


def test_an_instruction_reading_itself_is_a_diagnostic():
    body = "  %p = f32[8] parameter(0)\n  %n = f32[8] add(%n, %p)\n  ROOT %r = f32[8] negate(%n)"
    err = fails(module(body), "%n of %n is the instruction itself", "instruction does not exist: n")
    assert (err.diagnostic.line, err.diagnostic.column) == (5, 3)


def test_undefined_computation_is_a_diagnostic():
    fails(module("  %p = f32[8] parameter(0)\n  ROOT %c = f32[8] call(%p), to_apply=%nowhere"), "%nowhere")


def test_two_roots_are_a_diagnostic():
    fails(module("  ROOT %p = f32[8] parameter(0)\n  ROOT %n = f32[8] negate(%p)"), "more than one ROOT")


def test_parameter_numbers_must_be_dense():
    fails(module("  %p = f32[8] parameter(0)\n  ROOT %q = f32[8] parameter(2)"), "not dense")
    fails(module("  %p = f32[8] parameter(0)\n  ROOT %q = f32[8] parameter(0)"), "used twice")
    # a huge number: the missing ones are named without listing every number below it
    fails(module("  %p = f32[8] parameter(0)\n  ROOT %q = f32[8] parameter(99999999999)"), "missing [1, 2, 3, 4, 5]")


def test_reshape_element_counts_must_agree():
    ok = module("  %p = f32[2,3] parameter(0)\n  ROOT %r = f32[6] reshape(%p)")
    assert parse_module_text(ok).entry.root.operands[0].shape.num_elements == 6
    fails(module("  %p = f32[2,3] parameter(0)\n  ROOT %r = f32[7] reshape(%p)"), "element count")


@pytest.mark.parametrize(
    "root, fragment",
    [
        ("convolution(%x, %k), window={size=1x1}, dim_labels=b01f_01io->b01f, batch_group_count=0", "batch_group"),
        ("convolution(%x, %k), window={size=1x1 stride=0x1}, dim_labels=b01f_01io->b01f", "stride must be positive"),
        ("reduce-window(%x, %z), window={size=1x1x0x1}, to_apply=%add", "size must be positive"),
    ],
)
def test_a_shape_inferred_from_non_positive_counts_is_an_error(root, fragment):
    # written without its shape, the op's shape is inferred: a group count or a window figure of 0
    # divided by zero there (an internal failure); XLA's InferConvolveShape / InferWindowOutputShape
    body = (
        "  %x = f32[2,4,4,3] parameter(0)\n  %k = f32[1,1,3,3] parameter(1)\n  %z = f32[] constant(0)\n"
        f"  ROOT %r = {root}"
    )
    add = "%add {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n"
    error = fails(f"HloModule m\n\n{add}ENTRY %main {{\n{body}\n}}\n", "cannot infer the shape of %r", fragment)
    assert error.diagnostic.line == 13


def test_a_reshape_of_an_operand_written_without_its_shape_is_checked_once_inferred():
    # get-tuple-element(t) has its shape only after inference; the reshape's count was not
    # checked and its map failed inside (an internal error)
    body = (
        "  %p = f32[2,3] parameter(0)\n  %t = (f32[2,3], u8[0]) tuple(%p, u8[0] constant({{}}))\n"
        "  %g = get-tuple-element(%t), index=0\n  ROOT %r = f32[{n}] reshape(%g)"
    )
    error = fails(module(body.format(n=7)), "InferReshapeShape", "f32[2,3] has 6, f32[7] has 7")
    assert (error.diagnostic.line, error.diagnostic.column) == (7, 8)  # at %r
    assert parse_module_text(module(body.format(n=6))).entry.root.shape.dims == (6,)


def test_duplicate_instruction_name_is_a_diagnostic():
    fails(module("  %p = f32[8] parameter(0)\n  ROOT %p = f32[8] negate(%p)"), "defined twice")


# ---- shapes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("element_type", sorted(set(ELEMENT_BITS)))
def test_every_element_type(element_type):
    dims = "[]" if element_type in ("token", "opaque") else "[3]"
    r = entry_instr(f"  ROOT %p = {element_type}{dims} parameter(0)", "p")
    assert r.shape.element_type == element_type and r.shape.element_bits == ELEMENT_BITS[element_type]


def test_unknown_element_type_is_an_error():
    fails(module("  ROOT %p = f33[3] parameter(0)"), "unknown element type", "f33")


def test_tuples_nested_and_empty():
    r = entry_instr("  ROOT %p = (f32[2], (s32[], ()), ()) parameter(0)", "p")
    assert r.shape.is_tuple and r.shape.num_outputs == 3
    assert r.shape.leaf(1).leaf(1).tuple_shapes == () and r.shape.leaf(2).is_tuple


def test_unbalanced_tuple_is_an_error():
    fails(module("  ROOT %p = (f32[2], s32[] parameter(0)"), "unexpected")


def test_dynamic_dimensions():
    s = entry_instr("  ROOT %p = f32[<=8,?,4]{2,1,0} parameter(0)", "p").shape
    assert s.dims == (8, -1, 4) and s.dynamic == (True, True, False)


def test_malformed_dimension_is_an_error():
    fails(module("  ROOT %p = f32[<8] parameter(0)"), "malformed dimension")


def test_layout_with_every_suffix():
    s = entry_instr(
        "  ROOT %p = bf16[16,256]{1,0:D(D,C)T(8,128)(2,1)(4,*)L(8)#(u16)*(u32)E(16)S(1)SC(0:2)M(8)} parameter(0)", "p"
    ).shape
    lay = s.layout
    assert lay.minor_to_major == (1, 0)
    assert lay.tiles == (Tile((8, 128)), Tile((2, 1)), Tile((4, Tile.COMBINED)))
    assert lay.element_size_bits == 16 and lay.memory_space == 1
    for raw in ("D(D,C)", "L(8)", "#(u16)", "*(u32)", "SC(0:2)", "M(8)"):
        assert raw in lay.raw_suffixes


def test_layout_suffixes_xla_rejects():
    fails(module("  ROOT %p = bf16[16,256]{1,0:P(s4)} parameter(0)"), "physical shape")
    fails(module("  ROOT %p = bf16[16,256]{1,0:D(D,X)} parameter(0)"), "DimLevelType")


def test_permuted_layout_and_bad_layouts():
    assert entry_instr("  ROOT %p = f32[1,2,3,4]{1,3,2,0} parameter(0)", "p").shape.layout.minor_to_major == (
        1,
        3,
        2,
        0,
    )
    fails(module("  ROOT %p = f32[2,3]{0,0} parameter(0)"), "not a permutation")
    fails(module("  ROOT %p = f32[2,3]{1,0:Q} parameter(0)"), "malformed layout suffix")


# ---- literals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, literal",
    [
        ("f32[]", "-inf"),
        ("f32[]", "nan"),
        ("f32[]", "inf"),
        ("f32[]", "-0.5e-3"),
        ("f32[4]", "{...}"),
        ("f32[2,2]", "{ {1, 2}, {3, 4} }"),
        ("c64[]", "(1, -2.5)"),
        ("c64[2]", "{(1, 2), (3, nan)}"),
        ("(c64[], f32[2])", "((1, 2), {3, 4})"),
        ("pred[]", "true"),
        ("bf16[2]", "{nan(0x7f), -nan}"),
    ],
)
def test_constant_literals_kept_raw(shape, literal):
    r = entry_instr(f"  ROOT %c = {shape} constant({literal})", "c")
    assert r.literal == literal and r.operands == ()


@pytest.mark.parametrize(
    "shape, literal, complaint",
    [
        ("f32[2,2]", "{1, 2, 3, 4}", "expects nested array in rank 2, but sees 1"),
        ("f32[2]", "{1, 2, 3}", "expects 2 elements on the minor-most dimension, but sees more"),
        ("f16[]", "-65520", "value -65520 is out of range for literal's primitive type F16"),
        ("f16[]", "65519", None),  # rounds to the largest finite f16, as XLA's cast does
        ("u4[]", "16", "out of range for literal's primitive type U4 namely [0, 15]"),
        ("s4[]", "-8", None),
        ("s4[]", "-9", "out of range"),
        ("bf16[]", "1e100", "out of range"),
        ("f64[]", "1e309", "out of range for double"),
        ("bf16[]", "nan(0x3ff)", "NaN payload is out of range (0x7f)"),
        ("f8e4m3fn[]", "nan(0x1)", "does not support payloads"),
        ("c64[]", "(1e100, 0)", "real part 1e100 is out of range"),
        # jaxlib 0.10.2: "expect floating-point value for real part of complex number"
        ("c64[]", "(abc, 1)", "expect floating-point value for real part of complex number"),
        ("c64[1]", "{(-3.4e+, 3.4e+38)}", "expect floating-point value for real part"),
        ("c64[]", "(1, x)", "expect floating-point value for imaginary part"),
        ("c64[]", "(-inf, nan)", None),
        ("c128[]", "(0.5, -2.5e-3)", None),
        ("c128[]", "(.5, 1)", "expect floating-point value for real part"),
        ("c64[]", "(+1, 2)", "expect floating-point value for real part"),
        ("c64[]", "(1., -nan)", None),
    ],
)
def test_constant_literals_checked_as_xla_does(shape, literal, complaint):
    text = module(f"  ROOT %c = {shape} constant({literal})")
    if complaint is None:
        assert parse_module_text(text).entry.root.literal == literal
    else:
        fails(text, complaint)


def test_unterminated_literal_is_an_error():
    fails(module("  ROOT %c = f32[2] constant({1, 2)"), "unterminated")


# ---- attributes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sharding",
    [
        "{replicated}",
        "{maximal device=0}",
        "{devices=[2,1]0,1}",
        "{devices=[2,1]<=[2]}",
        "{devices=[4,2]<=[2,4]T(1,0)}",
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
        "{{replicated}, {manual}, {devices=[2]0,1}}",
        "{manual}",
    ],
)
def test_sharding_forms(sharding):
    r = entry_instr(f"  ROOT %p = f32[4,4] parameter(0), sharding={sharding}", "p")
    assert r.attrs["sharding"] == sharding


@pytest.mark.parametrize("groups", ["{}", "{{0,1},{2,3}}", "[2,2]<=[4]", "[2,2]<=[2,2]T(1,0)"])
def test_replica_groups_list_and_iota(groups):
    body = f"  %p = f32[4] parameter(0)\n  ROOT %g = f32[8] all-gather(%p), replica_groups={groups}, dimensions={{0}}"
    r = entry_instr(body, "g")
    assert r.attrs["replica_groups"] == groups and r.attrs["dimensions"] == (0,)


def test_backend_config_forms_and_strings():
    body = (
        "  %p = f32[4] parameter(0)\n"
        '  %a = f32[4] custom-call(%p), custom_call_target="lapack", backend_config={uplo = 76 : ui8}\n'
        "  %b = f32[4] custom-call(%a), custom_call_target='single,quoted', backend_config={}\n"
        '  ROOT %c = f32[4] custom-call(%b), custom_call_target="x\\"y", '
        'backend_config={"a":{"b":"},{"},"c":[1,{"d":2}]}, api_version=API_VERSION_TYPED_FFI'
    )
    e = parse_module_text(module(body)).entry
    assert e.by_name["a"].attrs["backend_config"] == "{uplo = 76 : ui8}"
    assert e.by_name["b"].attrs["custom_call_target"] == "single,quoted"
    assert e.by_name["b"].attrs["backend_config"] == "{}"
    c = e.by_name["c"]
    assert c.attrs["custom_call_target"] == 'x"y'
    assert c.attrs["backend_config"] == '{"a":{"b":"},{"},"c":[1,{"d":2}]}'
    assert c.attrs["api_version"] == "API_VERSION_TYPED_FFI"


def test_unterminated_string_is_an_error():
    fails(module('  ROOT %p = f32[4] parameter(0), backend_config="abc'), "unterminated string")


def test_typed_attributes():
    body = (
        "  %p = f32[8,16]{1,0} parameter(0)\n  %i = s32[8,3,2]{2,1,0} parameter(1)\n"
        "  %k = f32[3,3,16,32]{3,2,1,0} parameter(2)\n  %x = f32[1,8,8,16]{3,2,1,0} parameter(3)\n"
        "  %s = f32[4,8]{1,0} slice(%p), slice={[0:8:2], [8:16]}\n"
        "  %z = f32[] constant(0)\n"
        "  %pd = f32[9,14]{1,0} pad(%p, %z), padding=1_0_0x-2_0_0\n"
        "  %t = f32[16,8]{1,0} transpose(%p), dimensions={1,0}\n"
        "  %d = f32[8,8]{1,0} dot(%p, %t), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_batch_dims={}, "
        "rhs_batch_dims={}\n"
        "  %g = f32[8,3,4]{2,1,0} gather(%p, %i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0,1}, "
        "index_vector_dim=2, slice_sizes={1,4}, indices_are_sorted=true\n"
        "  %io = s32[4,5]{1,0} iota(), iota_dimension=1\n"
        "  %c = pred[8,16]{1,0} compare(%p, %p), direction=LT, type=TOTALORDER\n"
        "  %cv = f32[1,8,3,32]{3,2,1,0} convolution(%x, %k), window={size=3x3 stride=2x2 pad=1_1x0_1 "
        "rhs_dilate=1x2 lhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1\n"
        "  %at = s32[] constant(1)\n  %ds = f32[2,4]{1,0} dynamic-slice(%p, %at, %at), dynamic_slice_sizes={2,4}\n"
        "  %tt = (f32[8,16], f32[8,16]) tuple(%p, %p)\n"
        "  ROOT %gt = f32[8,16]{1,0} get-tuple-element(%tt), index=1"
    )
    e = parse_module_text(module(body)).entry
    assert e.by_name["s"].attrs["slice"] == (SliceDim(0, 8, 2), SliceDim(8, 16, 1))
    assert e.by_name["pd"].attrs["padding"] == (PadDim(1, 0, 0), PadDim(-2, 0, 0))
    assert e.by_name["t"].attrs["dimensions"] == (1, 0)
    d = e.by_name["d"].attrs
    assert (d["lhs_contracting_dims"], d["rhs_contracting_dims"], d["lhs_batch_dims"]) == ((1,), (0,), ())
    g = e.by_name["g"].attrs
    assert g["offset_dims"] == (2,) and g["start_index_map"] == (0, 1) and g["slice_sizes"] == (1, 4)
    assert g["index_vector_dim"] == 2 and g["indices_are_sorted"] is True
    assert e.by_name["io"].attrs["iota_dimension"] == 1
    c = e.by_name["c"].attrs
    assert c["direction"] == "LT" and c["comparison_type"] == "TOTALORDER"
    cv = e.by_name["cv"].attrs
    assert cv["window"] == (WindowDim(3, 2, 1, 1, 1, 2, False), WindowDim(3, 2, 0, 1, 2, 1, True))
    assert cv["dim_labels"] == ConvDimLabels(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))
    assert cv["feature_group_count"] == 1
    assert e.by_name["ds"].attrs["dynamic_slice_sizes"] == (2, 4)
    assert e.root.attrs["index"] == 1


def test_conv_dim_labels_digit_led_and_permuted():
    r = entry_instr(
        "  %x = f32[1,2,3,4] parameter(0)\n  %k = f32[1,1,1,1] parameter(1)\n"
        "  ROOT %c = f32[2,3,4,1] convolution(%x, %k), window={size=1x1}, dim_labels=f01b_i01o->01bf",
        "c",
    )
    assert r.attrs["dim_labels"] == ConvDimLabels(3, 0, (1, 2), 0, 3, (1, 2), 2, 3, (0, 1))


@pytest.mark.parametrize(
    "attr, fragment",
    [
        ("dimensions={a}", "dimensions"),
        ("slice={[0:1:2:3]}", "slice"),
        ("slice={[0:4], [0:2]x}", "slice"),  # XLA's parser: a range, or '}'
        ("window={size=2x2 stride=1}", "window"),
        # XLA's parser: "expects sub-attributes in window"; read as no window, the maps of the
        # convolution holding it disagreed with its numpy reference
        ("window={{0,1}}", "unexpected window field '{0,1}'"),
        ("window={size=2x2 strides=1x1}", "unexpected window field 'strides=1x1'"),
        ("dim_labels=bf_io", "dim_labels"),
        ("index=x", "index"),
        ("is_stable=maybe", "is_stable"),
        ("dim_labels=01_01->01", "dim_labels"),
    ],
)
def test_malformed_typed_attributes_are_errors(attr, fragment):
    err = fails(module(f"  ROOT %p = f32[4,4] parameter(0), {attr}"), "invalid attribute", fragment)
    assert err.diagnostic.line == 4


def test_fusion_kinds_and_called_computations():
    text = (
        "HloModule m\n%fc (a: f32[4]) -> f32[4] {\n  %a = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%a)\n}\n"
        "%t (a: f32[4]) -> f32[4] {\n  ROOT %a = f32[4] parameter(0)\n}\n"
        "%pred (a: s32[]) -> pred[] {\n  %a = s32[] parameter(0)\n  ROOT %c = pred[] compare(%a, %a), direction=EQ\n}\n"
        "ENTRY %main {\n  %p = f32[4] parameter(0)\n  %i = s32[] parameter(1)\n"
        "  %f = f32[4] fusion(%p), kind=kInput, calls=%fc\n"
        "  ROOT %b = f32[4] conditional(%i, %f, %p), branch_computations={%t, %fc}\n}\n"
    )
    m = parse_module_text(text)
    f = m.entry.by_name["f"]
    assert f.attrs["kind"] == "kInput" and f.fused_computation is m.by_name["fc"] and m.by_name["fc"].is_fused
    b = m.entry.root
    assert b.attrs["branch_computations"] == ("t", "fc")
    assert b.called["branch_computations.0"].name == "t" and b.called["branch_computations.1"].name == "fc"


ADD = "%add {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %c = f32[] add(%a, %b)\n}\n\n"


@pytest.mark.parametrize("value", ["{}", "{%add}", "{%add, %add}"])
def test_a_role_of_one_computation_takes_no_list_of_names(value):
    # XLA reads braces after to_apply= or calls= as an inline body: "expects name" for {}, "expects
    # '='" for {%add}; a list of names would reach the analyses as several computations
    body = (
        "  %p = f32[8] parameter(0)\n  %z = f32[] constant(0)\n"
        f"  ROOT %r = f32[] reduce(%p, %z), dimensions={{0}}, to_apply={value}"
    )
    err = fails(f"HloModule m\n\n{ADD}ENTRY %main {{\n{body}\n}}\n")
    brace = err.diagnostic.source_line.index("to_apply=") + len("to_apply=") + 1  # 1-based
    assert err.diagnostic.line == 12 and err.diagnostic.column in (brace, brace + 1)
    fused = "  %p = f32[8] parameter(0)\n  ROOT %f = f32[8] fusion(%p), kind=kLoop, calls=" + value
    fails(module(fused))


# Each rejected by XLA's parser (jaxlib 0.10.2) with the message given, or (marked) crashing it.
@pytest.mark.parametrize(
    "body, fragment",
    [
        # "expects an odd number of operands, but has 4 operands"
        (
            "  %p = f32[4] parameter(0)\n  %i = s32[1,1] parameter(1)\n  %u = f32[1] parameter(2)\n"
            "  ROOT %s = f32[4] scatter(%p, %p, %i, %u), update_window_dims={}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
            "expects an odd number of operands",
        ),
        # "expects 0 operands, but has 1 operands"
        ("  %p = s32[4] parameter(0)\n  ROOT %i = s32[4] iota(%p), iota_dimension=0", "expects 0 operands"),
        # XLA's parser reads operand 0 of a conditional without one, and aborts
        ("  %p = f32[] parameter(0)\n  ROOT %c = f32[] conditional(), to_apply=%add", "expects at least 1 operand"),
        ("  %p = s32[] parameter(0)\n  ROOT %c = f32[] conditional(%p)", "branch_computations"),
        # a token holds no elements: XLA's parser fails a check (shape.IsArray())
        ("  %p = token[3] parameter(0)\n  ROOT %c = f32[] constant(0)", "takes no dimensions"),
        ("  ROOT %c = token[] constant(0)", "not a token"),
    ],
)
def test_what_xlas_parser_rejects_or_cannot_read_is_an_error(body, fragment):
    fails(f"HloModule m\n\n{ADD}ENTRY %main {{\n{body}\n}}\n", fragment)


def test_a_reshape_of_a_tuple_is_an_error():
    # XLA's parser fails a check on it (jaxlib 0.10.2 aborts: a tuple has no dimensions)
    body = "  %p = (f32[4], f32[2]) parameter(0)\n  ROOT %r = f32[4] reshape(%p)"
    fails(module(body), "expected an array")
