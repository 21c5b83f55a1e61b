"""Every map the spec prints for an unfused op or a fusion, reproduced through ``hlo-index analyze``.

Each (example, operand, output, direction) is one test; the comparison says how close the tool
comes (exact text, same canonical map, same relation by brute force). docs/SPEC_AUDIT.md is the
table of those outcomes (regenerate it with ``python -m spec.audit_table`` from tests/).
"""

from __future__ import annotations

import json
import re

import pytest

from hlo_index.affine import parse_map

from .examples import EXAMPLES, IN2OUT, OUT2IN
from .helpers import analyze, assert_spec_map, check_against_spec, entry, map_texts, run_cli, spec_map

_TARGETS: dict[str, dict] = {}


def one_line_attributes(hlo: str) -> str:
    """The same module with attributes continued on the next line joined to the instruction line
    (whitespace only). See test_spec_snippet_parses_verbatim for the snippets as written."""
    return re.sub(r",[ \t]*\r?\n[ \t]+(?=[A-Za-z_][\w.\-]*=)", ", ", hlo)


def target_of(example, tmp_path_factory) -> dict:
    if example.name not in _TARGETS:
        direction = "out2in" if example.computation else "both"
        _TARGETS[example.name] = analyze(
            tmp_path_factory.mktemp("spec"),
            one_line_attributes(example.hlo),
            instruction=example.instruction,
            fusion=example.fusion,
            computation=example.computation,
            direction=direction,
        )
    return _TARGETS[example.name]


CASES = [
    pytest.param(ex, chk, id=f"{ex.name}|{chk.direction}|operand{chk.operand}|output{chk.output}")
    for ex in EXAMPLES
    for chk in ex.checks
]


@pytest.mark.parametrize("example, chk", CASES)
def test_spec_map(example, chk, tmp_path_factory):
    kinds = check_against_spec(target_of(example, tmp_path_factory), chk)
    assert kinds and all(kinds)


def _by_name(name):
    (ex,) = [e for e in EXAMPLES if e.name == name]
    return ex


MULTILINE = [ex for ex in EXAMPLES if one_line_attributes(ex.hlo) != ex.hlo]


@pytest.mark.parametrize("example", MULTILINE, ids=[e.name for e in MULTILINE])
def test_spec_snippet_parses_verbatim(example, tmp_path):
    """The spec (like XLA's own tests) continues attributes on the next line after a comma;
    XLA's lexer skips any whitespace there, so the snippet as written must analyse the same."""
    target = analyze(
        tmp_path, example.hlo, instruction=example.instruction, fusion=example.fusion, computation=example.computation
    )
    assert target["name"] == (example.instruction or example.fusion or example.computation)


def test_iota_has_no_operand_maps(tmp_path_factory):
    """Iota has no operand: the spec's (d0, d1) -> () / ()[s0, s1] -> (s0, s1) name no tensor."""
    target = target_of(_by_name("Iota"), tmp_path_factory)
    assert target["opcode"] == "iota"
    assert target["outputs"] == [{"index": 0, "shape": "f32[2,4]"}]
    assert target["output_to_input"] == [] and target["input_to_output"] == []


def test_json_target_fields(tmp_path_factory):
    """The analyze JSON contract on a spec example: operand names and shapes as in the snippet."""
    target = target_of(_by_name("Concatenate"), tmp_path_factory)
    assert (target["kind"], target["name"], target["opcode"]) == ("instruction", "output", "concatenate")
    assert target["outputs"] == [{"index": 0, "shape": "f32[2,33,7]"}]
    names = [(e["operand"], e["operand_name"], e["operand_shape"]) for e in target["output_to_input"]]
    assert names == [(0, "p0", "f32[2,5,7]"), (1, "p1", "f32[2,11,7]"), (2, "p2", "f32[2,17,7]")]
    fusion = target_of(_by_name("Fusion: one input, several indexing maps"), tmp_path_factory)
    assert fusion["kind"] == "fusion" and fusion["fusion_kind"] in ("kLoop", "loop")


def test_deduplicated_fusion_has_one_map(tmp_path_factory):
    """Both transpose chains compose to the same map: the tool must report exactly one."""
    target = target_of(_by_name("Fusion: one input, deduplicated indexing map"), tmp_path_factory)
    assert len(map_texts(target, OUT2IN, 0)) == 1
    assert entry(target, OUT2IN, 0)["deduplicated"] is True


def test_several_maps_fusion_keeps_both(tmp_path_factory):
    target = target_of(_by_name("Fusion: one input, several indexing maps"), tmp_path_factory)
    assert len(map_texts(target, OUT2IN, 0)) == 2
    assert entry(target, OUT2IN, 0)["deduplicated"] is False


def test_dynamic_slice_runtime_vars_name_their_offsets():
    """zh-TW: each runtime variable is tied to its offset operand (of1, of2, of3)."""
    from hlo_index.hlo import parse_module_text
    from hlo_index.ops import output_to_input

    module = parse_module_text(one_line_attributes(_by_name("DynamicSlice").hlo))
    (src_map,) = output_to_input(module.entry.root)[0].maps
    descriptions = [v.description for v in src_map.runtime_vars]
    for name, text in zip(("of1", "of2", "of3"), descriptions):
        assert name in text, descriptions


def test_gather_runtime_vars_name_indices_columns():
    """zh-TW: rt0 reads indices[(d0, 0)] and rt1 reads indices[(d0, 1)]."""
    from hlo_index.hlo import parse_module_text
    from hlo_index.ops import output_to_input

    module = parse_module_text(one_line_attributes(_by_name("Gather").hlo))
    (operand_map,) = output_to_input(module.entry.root)[0].maps
    rt0, rt1 = (v.description for v in operand_map.runtime_vars)
    assert "indices" in rt0 and "0]" in rt0, rt0
    assert "indices" in rt1 and "1]" in rt1, rt1


def test_dot_rhs_in2out_spec_slip_is_wrong_by_semantics(tmp_path_factory):
    """The spec's p1 -> output map (d0, s0, d1) sends p1's contracted index (up to 255) to the
    output's last dim (size 64): outside the output. The true map (d0, s0, d2) stays inside."""
    wrong = spec_map(
        "(d0, d1, d2)[s0] -> (d0, s0, d1), domain: d0 in [0, 3], d1 in [0, 255], d2 in [0, 63], s0 in [0, 127]"
    )
    assert wrong.evaluate((0, 200, 0), (0,)) == (0, 0, 200)  # 200 > 63: no such element
    target = target_of(_by_name("Dot"), tmp_path_factory)
    (ours,) = [parse_map(t) for t in map_texts(target, IN2OUT, 1)]
    assert not ours.semantically_equal(wrong)
    _, results = ours.enumerate()
    assert results[:, 2].max() <= 63 and results[:, 1].max() <= 127


@pytest.mark.parametrize(
    "direction, vi_text",
    [
        (
            OUT2IN,
            "(d0, d1, d2) -> (2 * d0 + (4 * d1 + d2) floordiv 8, (4 * d1 + d2) mod 8), "
            "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]",
        ),
        (
            IN2OUT,
            "(d0, d1) -> ((8 * d0 + d1) floordiv 16, ((8 * d0 + d1) mod 16) floordiv 4, d1 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7]",
        ),
    ],
)
def test_reshape_generic_example1_vi_spelling(direction, vi_text, tmp_path_factory):
    """vi writes generic example 1 through the linear index (its `/` is floordiv)."""
    target = target_of(_by_name("Reshape: generic example 1"), tmp_path_factory)
    (got,) = map_texts(target, direction, 0)
    assert assert_spec_map(got, vi_text)


VERIFIABLE = list(EXAMPLES)


@pytest.mark.parametrize("example", VERIFIABLE, ids=[e.name for e in VERIFIABLE])
def test_analyze_verify_agrees_on_spec_examples(example, tmp_path):
    """``--verify`` (the tool's own sampled check against the numpy reference) passes on every
    spec example: exit 0 and no diagnostics."""
    path = tmp_path / "module.hlo"
    path.write_text(one_line_attributes(example.hlo))
    args = ["analyze", str(path), "--verify", "--direction", "both", "--format", "json"]
    for flag, name in (
        ("--instruction", example.instruction),
        ("--fusion", example.fusion),
        ("--computation", example.computation),
    ):
        if name is not None:
            args += [flag, name]
    code, out = run_cli(args)
    (module,) = json.loads(out)["modules"]
    assert code == 0 and module["diagnostics"] == [], module["diagnostics"]
    assert len(module["targets"]) == 1
