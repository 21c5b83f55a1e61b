"""The pre-commit hook's file patterns pick HLO dumps, XLA's dump names included, and skip the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

HOOKS = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"


def _selected(hook: dict, path: str) -> bool:
    # pre-commit uses re.search on the path relative to the repository root
    return bool(re.search(hook["files"], path)) and not re.search(hook.get("exclude", "^$"), path)


def test_hook_matches_xla_dump_names_and_skips_non_hlo_siblings():
    [hook] = yaml.safe_load(HOOKS.read_text())
    assert hook["entry"] == "hlo-index check"
    for path in (
        "dump/module_0042.jit_step.after_optimizations.txt",
        "module_0001.jit_f.before_optimizations.txt.gz",
        "x/model.hlo",
        "x/model.hlo.txt",
        "x/model.hlo.txt.gz",
    ):
        assert _selected(hook, path), path
    for path in (
        "dump/module_0042.jit_step.sm_8.0_gpu_after_optimizations-buffer-assignment.txt",
        "dump/module_0042.jit_step.gpu_target_config.pbtxt",
        "README.txt",
        "notes/module.txt",
        "dump/module_0042.jit_step.thunk_sequence.txt",
        "dump/module_0042.jit_step.hlo_module_config.txt",
        "dump/module_0042.jit_step.ir-no-opt.ll",
    ):
        assert not _selected(hook, path), path
