"""control-predecessors, replica_groups (list, iota and mesh-axes forms), sharding validation, parse_shape."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import ParseError, Shape, format_shape, parse_module_text, parse_shape
from hlo_index.hlo.collectives import replica_groups


def module(body: str) -> str:
    return f"HloModule m\n\nENTRY %main {{\n{body}\n}}\n"


def entry(body: str):
    return parse_module_text(module(body)).entry


def error_of(body: str):
    with pytest.raises(ParseError) as info:
        parse_module_text(module(body))
    return info.value.diagnostic


# ---- control-predecessors -----------------------------------------------------------------


def test_control_predecessors_resolve_to_instructions():
    e = entry(
        "  %p = f32[4] parameter(0)\n  %a = f32[4] negate(%p)\n  %b = f32[4] abs(%p)\n"
        "  ROOT %c = f32[4] add(%a, %b), control-predecessors={%a, %b}"
    )
    assert e.root.attrs["control-predecessors"] == ("a", "b")
    assert e.root.control_predecessors == (e.by_name["a"], e.by_name["b"])
    assert e.by_name["a"].control_predecessors == ()


def test_unknown_control_predecessor_is_a_positioned_error():
    d = error_of("  %p = f32[4] parameter(0)\n  ROOT %c = f32[4] negate(%p), control-predecessors={%nope}")
    assert "control predecessor %nope" in d.message and (d.line, d.column) == (5, 8)  # at "%c"
    d = error_of("  %p = f32[4] parameter(0)\n  ROOT %c = f32[4] negate(%p), control-predecessors={1 2}")
    assert "control-predecessors" in d.message


# ---- replica_groups -------------------------------------------------------------------------


def _iota_reference(groups, dims, perm):
    """numpy: iota reshaped to dims, transposed by perm, reshaped to groups."""
    return tuple(map(tuple, np.arange(int(np.prod(dims))).reshape(dims).transpose(perm).reshape(groups).tolist()))


def test_replica_group_forms():
    assert replica_groups("{{0,1},{2,3}}") == ((0, 1), (2, 3))
    assert replica_groups("{ {0, 2}, {1, 3} }") == ((0, 2), (1, 3))
    assert replica_groups("{}") == ()
    assert replica_groups("[2,4]<=[8]") == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert replica_groups("[2,4]<=[4,2]T(1,0)") == ((0, 2, 4, 6), (1, 3, 5, 7))
    for bad, why in (
        ("{{0,1},x}", "malformed replica groups"),
        ("[2,4]<=[7]", "do not hold the 7 devices"),  # 2 groups of 4 need 8
        ("[2,4]<=[4,2]T(1,1)", "not a permutation"),
        ("[8]<=[8]", r"need \[groups,size\]"),
        ("{{0,1}", "malformed replica groups"),
        ("0,1", "expected"),
    ):
        with pytest.raises(ValueError, match=why):
            replica_groups(bad)


@settings(deadline=None, derandomize=True, max_examples=60)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_iota_replica_groups_match_numpy(dims, data):
    total = int(np.prod(dims))
    perm = data.draw(st.permutations(range(len(dims))))
    size = data.draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
    groups = (total // size, size)
    text = f"[{groups[0]},{groups[1]}]<=[{','.join(map(str, dims))}]T({','.join(map(str, perm))})"
    assert replica_groups(text) == _iota_reference(groups, dims, perm)


# XLA:CPU (jaxlib 0.10.2, 8 host devices) ran an all-gather of each device's id under each of these
# replica groups: each tuple is what one device gathered, in order.
MESH_GROUPS_RUN_BY_XLA = {
    "mesh['mesh'=8] {'mesh'}": ((0, 1, 2, 3, 4, 5, 6, 7),),
    "mesh['a'=2,'b'=4] {'a'}": ((0, 4), (1, 5), (2, 6), (3, 7)),
    "mesh['a'=2,'b'=4] {'b'}": ((0, 1, 2, 3), (4, 5, 6, 7)),
    "mesh['a'=2,'b'=4] {'b','a'}": ((0, 4, 1, 5, 2, 6, 3, 7),),
    "mesh['a'=8] {'a':(2)2}": ((0, 2), (1, 3), (4, 6), (5, 7)),
    "mesh['a'=8] {'a':(1)2,'a':(4)2}": ((0, 1, 4, 5), (2, 3, 6, 7)),
    "mesh['a'=8] {'a':(4)2,'a':(1)2}": ((0, 4, 1, 5), (2, 6, 3, 7)),
}


@pytest.mark.parametrize("text", sorted(MESH_GROUPS_RUN_BY_XLA))
def test_mesh_axes_replica_groups_as_xla_runs_them(text):
    assert replica_groups(text) == MESH_GROUPS_RUN_BY_XLA[text]


def _mesh_reference(devices, sizes, grouped):
    """numpy: the device array over the mesh axes, the grouped axes moved last in the order named."""
    rest = [a for a in range(len(sizes)) if a not in grouped]
    size = int(np.prod([sizes[a] for a in grouped]))
    flat = np.asarray(devices).reshape(sizes).transpose(rest + grouped).reshape(-1, size)
    return tuple(map(tuple, flat.tolist()))


def test_mesh_device_ids_listed_or_as_an_iota():
    # the mesh's device array is the listed ids, or iota over [dims] transposed, laid over the axes
    # (XLA's Mesh / MeshAxesReplicaGroupList; jaxlib's own run drops device_ids, so numpy is the reference)
    listed = [7, 6, 5, 4, 3, 2, 1, 0]
    assert replica_groups("mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a'}") == _mesh_reference(
        listed, [2, 4], [0]
    )
    iota = np.arange(8).reshape(4, 2).transpose(1, 0).reshape(-1).tolist()
    assert replica_groups("mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'b','a'}") == _mesh_reference(
        iota, [2, 4], [1, 0]
    )


@pytest.mark.parametrize(
    "bad",
    [
        "mesh['a'=2,'b'=4] {}",  # one device per group (XLA: more than one device per group)
        "mesh['a'=2,'b'=4] {'c'}",  # not an axis of the mesh
        "mesh[a=2] {a}",  # axis names are quoted strings
        "mesh['a'=2,'b'=4] {0}",
        "mesh['a'=8] {'a':(2)3}",  # 2*3 does not divide 8
        "mesh['a'=8] {'a','a':(2)2}",
        "mesh['a'=2], device_ids=(0,0) {'a'}",
        "mesh['a'=2] {'a'} x",
        "mesh[] {'a'}",
    ],
)
def test_malformed_mesh_axes_replica_groups(bad):
    with pytest.raises(ValueError, match=r"."):
        replica_groups(bad)


def test_mesh_replica_groups_typed_on_the_instruction():
    r = entry(
        "  %p = f16[256,128] parameter(0)\n"
        "  ROOT %g = f16[2048,128] all-gather(%p), channel_id=1, replica_groups=mesh['mesh'=8] {'mesh'},"
        " dimensions={0}, use_global_device_ids=true"
    ).root
    assert r.attrs["replica_groups"] == "mesh['mesh'=8] {'mesh'}"
    assert r.replica_groups() == (tuple(range(8)),)


def test_replica_groups_keep_raw_text_and_add_typed_value():
    e = entry(
        "  %p = f32[8] parameter(0)\n"
        "  %g = f32[16] all-gather(%p), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}\n"
        "  ROOT %h = f32[16] all-gather(%g), replica_groups={{0,1},{2,3}}, dimensions={0}"
    )
    g = e.by_name["g"]
    assert g.attrs["replica_groups"] == "[2,2]<=[2,2]T(1,0)"
    assert g.attrs["replica_groups_typed"] == ((0, 2), (1, 3))
    assert e.root.attrs["replica_groups_typed"] == ((0, 1), (2, 3))
    d = error_of("  %p = f32[8] parameter(0)\n  ROOT %g = f32[16] all-gather(%p), replica_groups=[2,4]<=[3]")
    assert "replica_groups" in d.message and d.line == 5


# ---- sharding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["{devices=[2,1]0,1", "{devices=[2,1)0,1}", "{replicated}}"])
def test_unbalanced_sharding_is_an_error(bad):
    d = error_of(f"  ROOT %p = f32[8] parameter(0), sharding={bad}")
    assert d.line in (4, 5, 6) and d.message


def test_sharding_with_strings_and_tuples_is_kept_raw():
    text = '{{devices=[2]<=[2] metadata={op_name="a}b"}}, {replicated}}'
    r = entry(f"  ROOT %p = (f32[8], f32[8]) parameter(0), sharding={text}").root
    assert r.attrs["sharding"] == text


# ---- parse_shape --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "f32[8,<=4]{1,0:T(8,128)(2,1)E(4)S(1)}",
        "(s32[], (f32[2]{0}, token[]), ())",
        "bf16[2,3]",
        "pred[]",
        "f8e4m3fn[?,2]",
        "u4[8]{0:E(4)}",
    ],
)
def test_parse_shape_round_trips(text):
    shape = parse_shape(text)
    assert isinstance(shape, Shape)
    assert parse_shape(format_shape(shape)) == shape


def test_parse_shape_reads_what_instructions_carry():
    m = parse_module_text(module("  ROOT %p = (f32[2,3]{0,1}, s8[4]) parameter(0)"))
    assert parse_shape("(f32[2,3]{0,1}, s8[4])") == m.entry.root.shape
    assert parse_shape("f32[2,3]{0,1}").layout.minor_to_major == (0, 1)


@pytest.mark.parametrize(
    "text, column, fragment",
    [
        ("f32[4,x]", 7, "malformed dimension"),
        ("q32[1]", 1, "unknown element type"),
        ("f32[2,2]{1,0:T(2,2)Q}", 20, "layout suffix"),
        ("f32[2,2]{0,0}", 10, "permutation"),
        ("(f32[2]", 8, "unclosed"),
        ("f32[2] junk", 8, "junk"),
        ("", 1, "empty"),
        ("f32[2], s32[]", 7, "','"),
        ("  f32[2]{0} ?", 13, "?"),
    ],
)
def test_parse_shape_errors_have_columns(text, column, fragment):
    with pytest.raises(ParseError) as info:
        parse_shape(text)
    d = info.value.diagnostic
    assert d.column == column and fragment in d.message, (d.column, d.message)


def test_every_element_type_parses():
    from hlo_index.hlo.model import ELEMENT_BITS

    for element_type, dims in itertools.product(ELEMENT_BITS, ("[]", "[3]")):
        if dims == "[3]" and element_type in ("token", "opaque"):
            # no elements to lay out: XLA's parser fails a check (jaxlib 0.10.2 aborts) on token[3]
            with pytest.raises(ParseError, match="takes no dimensions"):
                parse_shape(element_type + dims)
            continue
        assert parse_shape(element_type + dims).element_type == element_type


CONVOLUTION = """HloModule m
ENTRY main {
  input = f32[1,1,1,4] parameter(0)
  filter = f32[1,1,1,2] parameter(1)
  ROOT c = f32[1,1,2,2] convolution(input, filter), window={size=1x1}, dim_labels=%s, batch_group_count=2
}
"""


def test_dim_labels_with_unequal_spatial_counts_are_rejected_with_xlas_message():
    # jaxlib 0.10.2 says the same for this text
    with pytest.raises(ParseError) as info:
        parse_module_text(CONVOLUTION % "f01b_io->01fb")
    d = info.value.diagnostic
    assert (
        d.line == 5
        and ("input, kernel, and output must have same number of spatial dimensions, but got 2, 0, 2, respectively.")
        in d.message
    )
    # the same convolution with a kernel of two spatial dimensions is read
    assert parse_module_text(CONVOLUTION % "f01b_i01o->01fb").entry.root.opcode == "convolution"
