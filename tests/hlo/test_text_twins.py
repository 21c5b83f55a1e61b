"""``DeferredBodies.twin_of``: an unread body whose text is a read, clean body's with its own
instructions renamed one for one is that body's twin (its structure taken, its checks counted);
its metadata may differ where it reads, and a callee's name where the two callees are alike (the
same signature, texts the same up to their own names); any other difference (a callee not alike,
the wiring, a name that is not its own, an own name that is a computation's, metadata that does
not read) leaves it to be read. Analysed split, a module of twins is answered as serially."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.context import AnalysisContext
from hlo_index.fusion.fingerprint import fingerprint_id
from hlo_index.hlo import loader
from hlo_index.hlo.model import Computation, DeferredComputation

REDUCER = """%{name} (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] {op}(%a, %b)
}}
"""
# the reducers: %add, the same body under other names (its own renamed in %add.3), another body
REDUCERS = {"add": "add", "add.2": "add", "mul": "multiply"}
RENAMED_REDUCER = REDUCER.format(name="add.3", op="add").replace("%b", "%y").replace("%s =", "%t =")

# the first fused computation; each variant below is this text with names changed
FIRST = """%fused_first (p0: f32[8,4], p1: f32[8,4]) -> f32[8] {
  %p0 = f32[8,4]{1,0} parameter(0)
  %p1 = f32[8,4]{1,0} parameter(1)
  %sub = f32[8,4]{1,0} subtract(f32[8,4]{1,0} %p0, f32[8,4]{1,0} %p1), metadata={op_name="jit(f)/sub"}
  %zero = f32[] constant(0)
  ROOT %r = f32[8]{0} reduce(f32[8,4]{1,0} %sub, f32[] %zero), dimensions={1}, to_apply=%add
}
"""

VARIANTS = {
    # its own instructions renamed, one name for one: a twin
    "renamed": {"%fused_first": "%fused_renamed", "%p0": "%q0.7", "%p1": "%q1.7", "%sub": "%d.7", "%r": "%out.7"},
    # renamed, and other metadata: a twin (no check reads metadata but for reading it)
    "other_metadata": {
        "%fused_first": "%fused_other_metadata",
        "%p0": "%m0.9",
        'op_name="jit(f)/sub"': 'op_name="jit(f)/layer_1/sub" source_file="model.py" source_line=12',
    },
    # a reducer of the same body under another name, its own names the same or renamed: a twin
    "alike_callee": {"%fused_first": "%fused_alike_callee", "%p0": "%q0.8", "to_apply=%add": "to_apply=%add.2"},
    "renamed_callee": {"%fused_first": "%fused_renamed_callee", "%p1": "%q1.8", "to_apply=%add": "to_apply=%add.3"},
    # a reducer of another body: not a twin
    "other_callee": {"%fused_first": "%fused_other_callee", "%p0": "%q0.6", "to_apply=%add": "to_apply=%mul"},
    # the subtraction's operands swapped: the same names in a different wiring
    "swapped": {"%fused_first": "%fused_swapped", "%p0 = ": "%P = ", "%p1 = ": "%p0 = ", "%P = ": "%p1 = "},
    # an own instruction named as a computation is
    "named_as_computation": {"%fused_first": "%fused_named_as_computation", "%sub": "%add.2"},
}

TWINS = {"renamed", "other_metadata", "alike_callee", "renamed_callee"}


def _variant(edits: dict[str, str], first: str = FIRST) -> str:
    text = first
    for old, new in edits.items():
        text = text.replace(old, new)
    return text


def _module(names: list[str], first: str = FIRST) -> str:
    """A module: the two reducers, the first fused computation and the variants ``names`` of it,
    each called by one fusion of the ENTRY."""
    bodies = [first] + [_variant(VARIANTS[n], first) for n in names]
    fusions = ["fused_first"] + [f"fused_{n}" for n in names]
    calls = "\n".join(
        f"  %f{k} = f32[8]{{0}} fusion(f32[8,4]{{1,0}} %x, f32[8,4]{{1,0}} %y), kind=kInput, calls=%{c}"
        for k, c in enumerate(fusions)
    )
    outputs = ", ".join("f32[8]{0}" for _ in fusions)
    results = ", ".join(f"f32[8]{{0}} %f{k}" for k in range(len(fusions)))
    return (
        "HloModule twins\n\n"
        + "\n".join(REDUCER.format(name=name, op=op) for name, op in REDUCERS.items())
        + "\n"
        + RENAMED_REDUCER
        + "\n"
        + "\n".join(bodies)
        + f"\nENTRY %main (x: f32[8,4], y: f32[8,4]) -> ({outputs}) {{\n"
        + "  %x = f32[8,4]{1,0} parameter(0)\n  %y = f32[8,4]{1,0} parameter(1)\n"
        + calls
        + f"\n  ROOT %t = ({outputs}) tuple({results})\n}}\n"
    )


def test_the_variants_differ_from_the_first_body_as_they_say():
    swapped = _variant(VARIANTS["swapped"])
    assert "%p1 = f32[8,4]{1,0} parameter(0)" in swapped and "%p0 = f32[8,4]{1,0} parameter(1)" in swapped
    assert "to_apply=%add.2" in _variant(VARIANTS["alike_callee"])
    assert "to_apply=%add.3" in _variant(VARIANTS["renamed_callee"])
    assert "%y = f32[] parameter(1)" in RENAMED_REDUCER and "ROOT %t = f32[] add(%a, %y)" in RENAMED_REDUCER
    assert "to_apply=%mul" in _variant(VARIANTS["other_callee"])
    assert "%add.2 = f32[8,4]{1,0} subtract" in _variant(VARIANTS["named_as_computation"])
    renamed = _variant(VARIANTS["renamed"])
    assert "%p0" not in renamed and "%sub" not in renamed and "to_apply=%add\n" in renamed


# the first body with a string that is not metadata: metadata is then compared as text
QUOTED = FIRST.replace("%zero = f32[] constant(0)", '%zero = f32[] constant(0), frontend_attributes={k="v"}')


@pytest.mark.parametrize(
    "variant, first, twin",
    [(name, FIRST, name in TWINS) for name in VARIANTS]
    + [("renamed", QUOTED, True), ("other_metadata", QUOTED, False)],
    ids=[*VARIANTS, "renamed-quoted", "other_metadata-quoted"],
)
def test_only_a_body_renamed_one_name_for_one_is_a_read_bodys_twin(variant, first, twin, defer_all):
    assert first.count('"') == (4 if first is QUOTED else 2)
    text = _module([variant], first)
    with AnalysisContext():
        (result,) = loader.parse_checked(text, "<twins>", defer_bodies=True)
        module = result.module
        assert module is not None and module.deferred is not None
        comps = {c.name: c for c in module.computations}
        first, other = comps["fused_first"], comps[f"fused_{variant}"]
        assert type(first) is DeferredComputation and type(other) is DeferredComputation
        assert other.twin() is None  # nothing read yet: nothing to be a twin of
        fingerprint_id(first)  # reads the first body
        assert type(first) is Computation
        assert (other.twin() is first) is twin
        fid = fingerprint_id(other)
        if twin:
            assert type(other) is DeferredComputation  # its structure known without reading it
            assert fid == fingerprint_id(first)
            assert module.deferred.read_rest()  # a twin counts as checked: not read
            assert type(other) is DeferredComputation
            if "callee" in variant:  # and so does its callee, alike the first's
                assert type(comps[_variant(VARIANTS[variant]).split("to_apply=%")[1].split()[0]]) is DeferredComputation
        else:
            assert type(other) is Computation  # read for its structure


def _analysed(args: list[str], text: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, input=text)
    failure = result.exception if not isinstance(result.exception, SystemExit) else None
    assert failure is None, f"{type(failure).__name__}: {failure}"
    return result.exit_code, result.stdout, result.stderr


def test_a_module_of_twins_split_is_answered_as_serially(defer_all):
    text = _module(list(VARIANTS))
    for args in (["analyze", "-", "--format", "json", "--direction", "both"], ["analyze", "-", "--color", "never"]):
        serial = _analysed([*args, "-j", "1"], text)
        assert serial[0] == 0
        assert _analysed([*args, "-j", "2"], text) == serial


@pytest.mark.parametrize(
    "old, new, said",
    [
        ("%q1.7)", "%nope)", "nope"),  # an operand that names no instruction of its own
        ("%d.7 = ", "%zero = ", "defined twice"),  # two of its own names made one
        ('op_name="jit(f)/sub"', 'op_name="jit(f)/sub" source_line=x', "source_line"),  # metadata that does not read
    ],
    ids=["undefined-operand", "defined-twice", "metadata"],
)
def test_a_renamed_body_changed_otherwise_is_no_twin_and_its_error_is_found(old, new, said, defer_all):
    renamed = _variant(VARIANTS["renamed"])
    assert old in renamed
    text = _module(["renamed"]).replace(renamed, renamed.replace(old, new))
    args = ["analyze", "-", "--format", "json"]
    serial = _analysed([*args, "-j", "1"], text)
    assert serial[0] == 2 and said in serial[2]
    assert _analysed([*args, "-j", "2"], text) == serial


@pytest.mark.parametrize(
    "old, new, said",
    [
        ("%add.2 (a: f32[], b: f32[]) -> f32[] {", "%add.2 (a: f32[], b: f32[]) -> f32[2] {", "add.2"),  # its signature
        ("ROOT %s = f32[] add(%a, %b)\n}\n\n%mul", "ROOT %s = f32[] add(%a, %nope)\n}\n\n%mul", "nope"),  # its body
    ],
    ids=["signature", "body"],
)
def test_a_callee_not_alike_leaves_its_caller_to_be_read_and_its_error_found(old, new, said, defer_all):
    text = _module(["alike_callee"])
    assert text.count(old) == 1
    text = text.replace(old, new)
    with AnalysisContext():
        (result,) = loader.parse_checked(text, "<twins>", defer_bodies=True)
        assert result.module is not None and result.module.deferred is not None
        comps = {c.name: c for c in result.module.computations}
        fingerprint_id(comps["fused_first"])  # reads the first body, and its callee %add
        assert type(comps["add"]) is Computation
        assert comps["fused_alike_callee"].twin() is None
        assert type(comps["add.2"]) is DeferredComputation  # not taken as %add's twin
    args = ["analyze", "-", "--format", "json"]
    serial = _analysed([*args, "-j", "1"], text)
    assert serial[0] == 2 and said in serial[2]
    assert _analysed([*args, "-j", "2"], text) == serial


def test_callees_whose_headers_are_not_one_line_are_not_looked_at_as_alike(defer_all):
    # both reducers' '{' on a line of its own, and %add.2's result not its root's: no line of the
    # two headers tells their signatures apart, so neither is taken for the other
    text = _module(["alike_callee"])
    for name, result in (("add", "f32[]"), ("add.2", "f32[2]")):
        header = f"%{name} (a: f32[], b: f32[]) -> f32[] {{"
        assert text.count(header) == 1
        text = text.replace(header, f"%{name} (a: f32[], b: f32[]) -> {result}\n{{")
    with AnalysisContext():
        (result,) = loader.parse_checked(text, "<twins>", defer_bodies=True)
        comps = {c.name: c for c in result.module.computations}
        assert type(comps["add.2"]) is DeferredComputation
        fingerprint_id(comps["fused_first"])  # reads the first body and %add
        assert type(comps["add"]) is Computation
        assert comps["fused_alike_callee"].twin() is None
    args = ["analyze", "-", "--format", "json"]
    serial = _analysed([*args, "-j", "1"], text)
    assert serial[0] == 2 and "add.2" in serial[2]
    assert _analysed([*args, "-j", "2"], text) == serial
