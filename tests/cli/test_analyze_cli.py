"""``analyze`` and ``check`` through click's CliRunner: exit codes and the JSON contract."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fusion import hlo_samples as s  # tests/ is on sys.path (rootdir without __init__)

from hlo_index.cli import main

SAMPLE = "samples/mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt"

BEFORE_OPTIMIZATIONS = """HloModule unfused

ENTRY main {
  p0 = f32[4, 6] parameter(0)
  p1 = f32[6] parameter(1)
  t = f32[6, 4] transpose(p0), dimensions={1, 0}
  b = f32[6, 4] broadcast(p1), dimensions={0}
  ROOT a = f32[6, 4] add(t, b)
}
"""


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def check_operand_entry(entry):
    assert set(entry) >= {"operand", "operand_name", "operand_shape", "output", "maps", "deduplicated"}
    assert isinstance(entry["operand"], int) and isinstance(entry["output"], int)
    assert isinstance(entry["operand_name"], str) and isinstance(entry["operand_shape"], str)
    assert isinstance(entry["deduplicated"], bool)
    for m in entry["maps"]:
        if m["map"] is None:
            assert isinstance(m["unknown"], str) and m["unknown"]
        else:
            assert isinstance(m["map"], str) and set(m) == {"map"}
    assert entry["deduplicated"] == (len(entry["maps"]) == 1)


def check_document(doc):
    assert doc["schema"] == "hlo-index/1"
    assert isinstance(doc["modules"], list)
    for mod in doc["modules"]:
        # cost_totals: every module read (report/cost.py), never an unreadable one
        assert set(mod) - {"cost_totals"} == {"name", "source", "targets", "diagnostics"}
        for d in mod["diagnostics"]:
            assert set(d) == {"severity", "message", "line", "column"}
        for t in mod["targets"]:
            assert set(t) >= {
                "kind",
                "name",
                "opcode",
                "computation",
                "fusion_kind",
                "outputs",
                "output_to_input",
                "input_to_output",
            }
            assert t["kind"] in ("instruction", "fusion", "computation")
            for o in t["outputs"]:
                assert set(o) == {"index", "shape"} and isinstance(o["index"], int)
            for entry in t["output_to_input"] + t["input_to_output"]:
                check_operand_entry(entry)


def test_analyze_json_on_the_bundled_sample_follows_the_contract(runner):
    result = runner.invoke(main, ["analyze", SAMPLE, "--format", "json", "--direction", "both"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    check_document(doc)
    [mod] = doc["modules"]
    assert mod["targets"] and all(t["kind"] == "fusion" for t in mod["targets"])
    assert all(t["fusion_kind"] for t in mod["targets"])
    assert all(t["output_to_input"] and t["input_to_output"] for t in mod["targets"])


def test_named_fusion_and_known_empty_text(runner, tmp_path):
    path = write(tmp_path, "concat.hlo", s.slice_of_concat(0, 4))
    result = runner.invoke(main, ["analyze", path, "--fusion", "fusion", "--format", "json"])
    assert result.exit_code == 0
    [target] = json.loads(result.stdout)["modules"][0]["targets"]
    assert target["name"] == "fusion" and target["computation"] == "main"
    by_operand = {e["operand"]: e for e in target["output_to_input"]}
    assert by_operand[1]["maps"] == [{"map": "KNOWN EMPTY"}]
    assert by_operand[0]["deduplicated"] is True
    assert target["input_to_output"] == []


def test_module_without_fusions_is_analysed_as_its_entry(runner, tmp_path):
    path = write(tmp_path, "unfused.hlo", BEFORE_OPTIMIZATIONS)
    result = runner.invoke(main, ["analyze", path, "--format", "json"])
    assert result.exit_code == 0
    [target] = json.loads(result.stdout)["modules"][0]["targets"]
    assert target["kind"] == "computation" and target["name"] == "main" and target["opcode"] is None
    maps = {e["operand"]: [m["map"] for m in e["maps"]] for e in target["output_to_input"]}
    assert maps[0] == ["(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"]
    assert maps[1] == ["(d0, d1) -> (d0), domain: d0 in [0, 5], d1 in [0, 3]"]


def test_instruction_target_uses_its_op_rule(runner, tmp_path):
    path = write(tmp_path, "unfused.hlo", BEFORE_OPTIMIZATIONS)
    result = runner.invoke(main, ["analyze", path, "--instruction", "t", "--format", "json", "--direction", "in2out"])
    assert result.exit_code == 0
    [target] = json.loads(result.stdout)["modules"][0]["targets"]
    assert target["kind"] == "instruction" and target["opcode"] == "transpose"
    assert [m["map"] for m in target["input_to_output"][0]["maps"]] == [
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]"
    ]


def test_unreadable_input_exits_2_and_the_others_are_still_printed(runner, tmp_path):
    good = write(tmp_path, "good.hlo", s.TRANSPOSE_ADD)
    bad = write(tmp_path, "bad.hlo", "HloModule broken\n\nENTRY main {\n  p0 = f32[4 parameter(0)\n}\n")
    missing = str(tmp_path / "missing.hlo")
    result = runner.invoke(main, ["analyze", good, bad, missing, "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    check_document(doc)
    assert len(doc["modules"]) == 3
    good_mod, bad_mod, missing_mod = doc["modules"]
    assert good_mod["targets"] and not bad_mod["targets"] and not missing_mod["targets"]
    assert bad_mod["diagnostics"][0]["severity"] == "error" and bad_mod["diagnostics"][0]["line"] == 4
    assert "bad.hlo:4:" in result.stderr


def test_unknown_target_name_exits_2(runner, tmp_path):
    path = write(tmp_path, "m.hlo", s.TRANSPOSE_ADD)
    result = runner.invoke(main, ["analyze", path, "--fusion", "nope"])
    assert result.exit_code == 2
    assert "no fusion named 'nope'" in result.stderr


def test_text_output_has_a_panel_per_target_and_a_summary(runner, tmp_path):
    path = write(tmp_path, "m.hlo", s.TRANSPOSE_ADD)
    result = runner.invoke(main, ["analyze", path, "--color", "never"])
    assert result.exit_code == 0
    assert "fusion %fusion" in result.stdout and "2 distinct maps" in result.stdout
    assert "(d0, d1) -> (d1, d0)" in result.stdout and "summary" in result.stdout
    assert "\x1b[" not in result.stdout


def test_jobs_processes_files_in_parallel_in_order(runner, tmp_path):
    paths = [write(tmp_path, f"m{i}.hlo", text) for i, text in enumerate([s.TRANSPOSE_ADD, s.SOFTMAX, s.NESTED])]
    serial = runner.invoke(main, ["analyze", *paths, "--format", "json"])
    parallel = runner.invoke(main, ["analyze", *paths, "--format", "json", "--jobs", "2"])
    assert serial.exit_code == parallel.exit_code == 0
    assert json.loads(serial.stdout) == json.loads(parallel.stdout)


def test_verify_passes_on_data_movement_fusions(runner, tmp_path):
    paths = [write(tmp_path, f"d{i}.hlo", text) for i, text in enumerate(s.DATA_MOVEMENT)]
    result = runner.invoke(main, ["analyze", *paths, "--verify", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert "verify:" not in result.stderr


# ---- check --------------------------------------------------------------------------------


def test_check_fails_on_an_operand_read_two_ways(runner, tmp_path):
    path = write(tmp_path, "m.hlo", s.TRANSPOSE_ADD)
    result = runner.invoke(main, ["check", path, "--color", "never"])
    assert result.exit_code == 1
    assert "fusion 'fusion' reads operand 0" in result.stdout and "(d0, d1) -> (d1, d0)" in result.stdout


def test_check_allow_and_exit_zero(runner, tmp_path):
    path = write(tmp_path, "m.hlo", s.TRANSPOSE_ADD)
    assert runner.invoke(main, ["check", path, "--allow", "fusion"]).exit_code == 0
    assert runner.invoke(main, ["check", path, "--allow", "%fused"]).exit_code == 0  # by fused computation
    assert runner.invoke(main, ["check", path, "--exit-zero"]).exit_code == 0


def test_check_passes_when_maps_deduplicate(runner, tmp_path):
    paths = [write(tmp_path, "a.hlo", s.TRANSPOSE_CHAIN), write(tmp_path, "b.hlo", s.RESHAPE_ROUND_TRIP)]
    result = runner.invoke(main, ["check", *paths, "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["ok"] is True and doc["findings"] == [] and doc["fusions_checked"] == 2


def test_check_github_annotations_and_unreadable(runner, tmp_path):
    path = write(tmp_path, "m.hlo", s.TRANSPOSE_ADD)
    result = runner.invoke(main, ["check", path, "--format", "github"])
    assert result.exit_code == 1
    [line] = result.stdout.strip().splitlines()
    assert line.startswith(f"::error file={path},line=") and "title=hlo-index" in line
    assert "%0A  (d0, d1) -> (d1, d0)" in line or "%0A  (d0, d1) -> (d0, d1)" in line
    result = runner.invoke(main, ["check", path, str(tmp_path / "missing.hlo"), "--exit-zero"])
    assert result.exit_code == 2


def test_no_color_and_color_always(runner, tmp_path):
    path = write(tmp_path, "m.hlo", s.TRANSPOSE_ADD)
    plain = runner.invoke(main, ["analyze", path], env={"NO_COLOR": "1"})
    assert plain.exit_code == 0 and "\x1b[" not in plain.stdout
    coloured = runner.invoke(main, ["analyze", path, "--color", "always"])
    assert coloured.exit_code == 0 and "\x1b[" in coloured.stdout


def test_directory_input_and_in2out_text(runner, tmp_path):
    write(tmp_path, "a.hlo", s.TRANSPOSE_CHAIN)
    write(tmp_path, "b.hlo", s.MULTI_OUTPUT)
    result = runner.invoke(main, ["analyze", str(tmp_path), "--direction", "both", "--color", "never"])
    assert result.exit_code == 0
    assert "input → output" in result.stdout and "output 2" in result.stdout
