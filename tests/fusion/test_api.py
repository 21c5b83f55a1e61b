"""The public Python API re-exported from ``hlo_index``."""

from __future__ import annotations

import gzip

import pytest

import hlo_index
from hlo_index.api import TargetNotFound, select_targets
from hlo_index.hlo import parse_module_text

from . import hlo_samples as s


def test_load_and_analyse_from_the_package_root(tmp_path):
    path = tmp_path / "m.hlo.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write(s.TRANSPOSE_ADD)
    [module] = hlo_index.load(str(path))
    [fusion] = module.fusions
    rows = hlo_index.output_to_input(fusion)
    assert [len(r.maps) for r in rows] == [2]
    assert hlo_index.input_to_output(fusion)[0].operand == 0


def test_the_package_root_names_the_api_once():
    """``hlo_index.api`` is the API module; no second name for it beside the ``analyses`` package."""
    assert "analysis" not in hlo_index.__all__
    with pytest.raises(AttributeError):
        _ = hlo_index.analysis


def test_load_raises_on_unreadable_input(tmp_path):
    with pytest.raises(hlo_index.hlo.ParseError):
        hlo_index.load(str(tmp_path / "missing.hlo"))


def test_target_selection_by_fusion_computation_and_instruction():
    module = parse_module_text(s.NESTED)
    assert [t.target.name for t in select_targets(module)] == ["f", "fusion"]  # nested fusions count too
    assert select_targets(module, fusion="%outer")[0].target.name == "fusion"
    assert select_targets(module, computation="helper")[0].kind == "computation"
    assert select_targets(module, instruction="c")[0].kind == "instruction"
    with pytest.raises(TargetNotFound):
        select_targets(module, instruction="nope")


def test_a_computation_is_analysed_root_against_parameters():
    module = parse_module_text(s.NESTED)
    [row] = hlo_index.output_to_input(module.by_name["helper"])
    [m] = row.maps
    assert m.read_set((7,)) == {(1, 1)}
