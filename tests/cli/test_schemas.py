"""Every command's JSON output validates against the schema file it names, shipped as package data."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted(str(p) for p in (REPO / "samples").glob("*.txt"))
# The IREE note's legal case: slice 2048 of 4096, then expand to 32x64.
MLIR_PAIR = """func.func @possible(%arg0: tensor<4096xf16>) -> tensor<32x64xf16> {
  %0 = tensor.extract_slice %arg0[0] [2048] [1] : tensor<4096xf16> to tensor<2048xf16>
  %1 = tensor.expand_shape %0 [[0, 1]] output_shape [32, 64] : tensor<2048xf16> into tensor<32x64xf16>
  return %1 : tensor<32x64xf16>
}
"""
SAMPLE = str(REPO / "samples" / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt")
SCHEMA_FILES = {
    "hlo-index/1": "analyze.json",
    "hlo-index-check/1": "check.json",
    "hlo-index-stats/1": "stats.json",
    "hlo-index-map/1": "map.json",
    "hlo-index-layout/1": "layout.json",
    "hlo-index-baseline/1": "baseline.json",
    "hlo-index-tile/1": "tile.json",
    "hlo-index-bubble/1": "bubble.json",
    "hlo-index-diff/1": "diff.json",
}
# bubble's document says "hlo-index/1" (the contract), so it is matched by command, not by id.
SCHEMA_BY_COMMAND = {"bubble": "bubble.json"}


def schema(name: str) -> dict:
    return json.loads((files("hlo_index") / "schemas" / name).read_text(encoding="utf-8"))


def validate(doc: dict, command: str = "") -> None:
    jsonschema.validate(doc, schema(SCHEMA_BY_COMMAND.get(command) or SCHEMA_FILES[doc["schema"]]))


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def test_schema_files_are_valid_schemas_with_their_ids():
    for schema_id, name in SCHEMA_FILES.items():
        doc = schema(name)
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$id"] == schema_id


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", *SAMPLES, "--format", "json"],
        ["analyze", SAMPLE, "--format", "json", "--direction", "both", "--physical", "--verify"],
        ["analyze", *SAMPLES, "--format", "json", "--top", "5", "--sort", "uncoalesced"],
        ["check", *SAMPLES, "--format", "json", "--select", "ALL", "--exit-zero"],
        ["stats", *SAMPLES, "--format", "json"],
        ["simplify", "(d0) -> (d0 floordiv 8 * 8 + d0 mod 8), domain: d0 in [0, 31]", "--format", "json"],
        [
            "compose",
            "(d0) -> (d0 + 1), domain: d0 in [0, 9]",
            "(d0) -> (d0 * 2), domain: d0 in [0, 4]",
            "--format",
            "json",
        ],
        ["layout", "bf16[4,8]{1,0:T(2,4)(2,1)}", "--format", "json"],
        ["tile", SAMPLE, "--fusion", "ynn_fusion.5", "--tile", "4,8", "--format", "json"],
        ["bubble", *SAMPLES, "--format", "json"],
        ["diff", SAMPLE, SAMPLES[0], "--format", "json"],
    ],
    ids=lambda a: " ".join(a[:1] + a[-3:])[:60],
)
def test_real_outputs_validate(runner, args):
    result = runner.invoke(main, args)
    assert result.exit_code in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    validate(doc, args[0])


def test_mlir_bubble_output_validates(runner, tmp_path):
    path = tmp_path / "possible.mlir"
    path.write_text(MLIR_PAIR)
    result = runner.invoke(main, ["bubble", str(path), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    validate(doc, "bubble")
    [chain] = doc["modules"][0]["chains"]
    assert chain["verdict"] == "legal" and chain["rewrite"]


def test_verify_and_source_are_in_the_json(runner):
    doc = json.loads(runner.invoke(main, ["analyze", SAMPLE, "--format", "json", "--verify"]).stdout)
    targets = doc["modules"][0]["targets"]
    assert all(
        t["verify"]["elements_checked"] > 0 and t["verify"]["mismatches"] == 0
        for t in targets
        if t["verify"]["verdict"] != "skipped"
    )
    sourced = [t["source"] for t in targets if "source" in t]
    assert sourced and all(s["file"] == "make_corpus.py" and s["line"] > 0 for s in sourced if s["file"])


def test_baseline_file_validates(runner, tmp_path):
    out = tmp_path / "b.json"
    assert runner.invoke(main, ["check", *SAMPLES, "--select", "ALL", "--write-baseline", str(out)]).exit_code == 0
    validate(json.loads(out.read_text()))
