"""A module's answers do not depend on what else was analysed, nor in which order.

Library level: the corpus's after-optimizations dumps analysed in ONE analysis context (caches
shared between modules), in order and reversed, give byte-identical JSON to each analysed alone
in a fresh context. Process level: one ``hlo-index`` process for all files vs one process each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hlo_index.context import AnalysisContext
from hlo_index.hlo import load_path
from hlo_index.render.json_out import render_json
from hlo_index.report.build import module_report

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
OPTIONS = {"analyses": True, "physical": False}


def _dumps() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*.after_optimizations.hlo.txt") if "pass_dumps" not in p.parts)


DUMPS = _dumps()
pytestmark = pytest.mark.skipif(len(DUMPS) < 3, reason="../shared/corpus not present")


def _json_of(paths, own_context: bool) -> dict[str, str]:
    out = {}
    for path in paths:
        for module in load_path(str(path)):
            report = module_report(module, "both", options=OPTIONS, own_context=own_context)
            out[f"{path}:{module.name}"] = render_json([report])
    return out


def test_shared_context_in_either_order_matches_each_alone():
    alone = {}
    for path in DUMPS:
        with AnalysisContext():
            alone.update(_json_of([path], own_context=False))
    with AnalysisContext():
        forward = _json_of(DUMPS, own_context=False)
    with AnalysisContext():
        backward = _json_of(list(reversed(DUMPS)), own_context=False)
    assert set(forward) == set(alone) == set(backward)
    differing = sorted(k for k in alone if not (forward[k] == alone[k] == backward[k]))
    assert not differing


def test_one_process_matches_one_process_each():
    # a handful of files keeps this quick: the process boundary is what is tested here
    paths = [str(p) for p in DUMPS[:: max(1, len(DUMPS) // 5)]]

    def run(*files):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from hlo_index.cli import main; main()",
                "analyze",
                *files,
                "--format",
                "json",
                "--direction",
                "both",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)["modules"]

    each = [m for p in paths for m in run(p)]
    together = run(*paths)
    assert json.dumps(together) == json.dumps(each)
    assert json.dumps(run(*reversed(paths))) == json.dumps(each[::-1])
