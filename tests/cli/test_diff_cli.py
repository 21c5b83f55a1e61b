"""``hlo-index diff``: exit codes, --fail-on, text and JSON (validated against schemas/diff.json)."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner
from report.diff_helpers import manifest, pair_paths, read_text, rename_everything  # tests/ is on sys.path

from hlo_index.cli import main

jsonschema = pytest.importorskip("jsonschema")

PAIRS = manifest()
SCHEMA = json.loads((files("hlo_index") / "schemas" / "diff.json").read_text(encoding="utf-8"))


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def test_the_schema_is_a_valid_schema_with_its_id():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$id"] == "hlo-index-diff/1"


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_json_validates_and_lists_the_expected_fusions(runner, pair):
    result = runner.invoke(main, ["diff", *pair_paths(pair), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    [module] = doc["modules"]
    differing = sorted(
        (f["old"] or "", f["new"] or "", f["status"]) for f in module["fusions"] if f["status"] != "same"
    )
    assert differing == sorted((e["old"] or "", e["new"] or "", e["status"]) for e in PAIRS[pair]["fusions"])
    assert module["totals"]["old"]["fusions"] == sum(1 for f in module["fusions"] if f["old"] is not None)
    assert module["totals"]["new"]["fusions"] == sum(1 for f in module["fusions"] if f["new"] is not None)
    assert all("time_us" not in f for f in module["fusions"])  # no cost model yet


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_fail_on_duplicated_reads_exactly_when_a_fusion_gains_a_second_map(runner, pair):
    old, new = pair_paths(pair)
    forward = runner.invoke(main, ["diff", old, new, "--fail-on", "duplicated_reads"])
    assert forward.exit_code == PAIRS[pair]["fail_on"]["duplicated_reads"], forward.stderr
    if forward.exit_code == 1:
        [expected] = [e["new"] for e in PAIRS[pair]["fusions"] if "duplicated_reads" in e["kinds"]]
        assert f"fusion '{expected}'" in forward.stderr and "duplicated_reads" in forward.stderr
    backward = runner.invoke(main, ["diff", new, old, "--fail-on", "duplicated_reads"])
    assert backward.exit_code == 0, backward.stderr


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_condition_as_the_manifest_says(runner, pair):
    for condition, status in PAIRS[pair]["fail_on"].items():
        result = runner.invoke(main, ["diff", *pair_paths(pair), "--fail-on", condition, "--format", "json"])
        assert result.exit_code == status, (condition, result.stderr)
        json.loads(result.stdout)  # the document is written whatever the verdict


def test_several_conditions_in_one_option(runner):
    result = runner.invoke(main, ["diff", *pair_paths("layer_widened"), "--fail-on", "duplicated_reads,bytes>90%"])
    assert result.exit_code == 0
    result = runner.invoke(
        main, ["diff", *pair_paths("layer_widened"), "--fail-on", "duplicated_reads", "--fail-on", "bytes>50%"]
    )
    assert result.exit_code == 1
    for name in ("ynn_fusion", "ynn_fusion.1", "broadcast_maximum_fusion"):
        assert f"fusion '{name}'" in result.stderr
    # the figures in the units of the listing: 5,888 B read before, 11,008 B after
    assert "(module total 5.9 kB -> 11.0 kB, +87.0%)" in result.stderr
    assert "bytes read +2.0 kB" in result.stderr and "e+0" not in result.stderr


def test_time_cannot_be_a_condition_without_a_cost_model(runner):
    result = runner.invoke(main, ["diff", *pair_paths("op_added"), "--fail-on", "time>5%"])
    assert result.exit_code == 2 and "cost model" in result.stderr


def test_a_device_gives_cpu_dumps_times_to_compare(runner):
    """A CPU pair has no time without a device; with one, each fusion's time is analyze's with it."""
    old, new = pair_paths("op_added")
    result = runner.invoke(main, ["diff", old, new, "--device", "tpu_v6e", "--format", "json", "--fail-on", "time>0%"])
    assert result.exit_code in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    analyzed = json.loads(runner.invoke(main, ["analyze", new, "--device", "tpu_v6e", "--format", "json"]).stdout)
    times = {t["name"]: t["cost"]["time_us"] for m in analyzed["modules"] for t in m["targets"]}
    [module] = doc["modules"]
    compared = [f for f in module["fusions"] if f["new"] is not None]
    assert compared and all(f["time_us"]["new"] == pytest.approx(times[f["new"]]) for f in compared)
    assert runner.invoke(main, ["diff", old, new, "--device", "tpu_v9"]).exit_code == 2


@pytest.mark.parametrize("condition", ["bytes>5", "maps", "time<3%"])
def test_a_bad_condition_is_a_usage_error(runner, condition):
    result = runner.invoke(main, ["diff", *pair_paths("op_added"), "--fail-on", condition])
    assert result.exit_code == 2 and "--fail-on" in result.stderr


def test_unreadable_input_exits_2_with_a_positioned_error(runner, tmp_path):
    bad = tmp_path / "bad.hlo.txt"
    bad.write_text("HloModule m\n\nENTRY %e {\n  %p = f32[4] parameter(0)\n  ROOT %r = f32[4 negate(%p)\n}\n")
    result = runner.invoke(main, ["diff", pair_paths("op_added")[0], str(bad), "--fail-on", "duplicated_reads"])
    assert result.exit_code == 2
    assert f"{bad}:5:" in result.stderr and "error:" in result.stderr
    missing = runner.invoke(main, ["diff", str(tmp_path / "absent.hlo.txt"), pair_paths("op_added")[0]])
    assert missing.exit_code == 2 and "absent.hlo.txt" in missing.stderr


def test_text_is_a_table_worst_first_with_the_source_line(runner):
    result = runner.invoke(main, ["diff", *pair_paths("layer_widened"), "--color", "never"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    header = next(k for k, line in enumerate(lines) if line.startswith("Δ bytes read"))
    rows = lines[header + 1 : header + 4]
    assert [r.split()[0] for r in rows] == ["+2.0", "+2.0", "+1.0"]  # kB, largest growth first
    assert all("make_pairs.py:4" in r for r in rows)
    assert "wrapped_tanh" not in result.stdout  # same: not listed
    shown = runner.invoke(main, ["diff", *pair_paths("layer_widened"), "--color", "never", "--show-same"])
    assert "wrapped_tanh" in shown.stdout
    assert lines[-1].startswith("totals: 4 → 4 fusion(s), 5.9 kB → 11.0 kB read (+87.0%)")


def test_the_same_program_compiled_twice_has_no_change(runner):
    result = runner.invoke(main, ["diff", *pair_paths("same_program"), "--color", "never"])
    assert result.exit_code == 0 and "all 12 fusion(s) the same" in result.stdout


def test_a_renamed_copy_is_the_same_everywhere(runner, tmp_path):
    old = pair_paths("same_program")[0]
    copy = tmp_path / "renamed.hlo.txt"
    copy.write_text(rename_everything(read_text(old))[0])
    result = runner.invoke(
        main,
        [
            "diff",
            old,
            str(copy),
            "--format",
            "json",
            "--fail-on",
            "duplicated_reads",
            "--fail-on",
            "uncoalesced",
            "--fail-on",
            "bytes>0%",
        ],
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert {(f["status"], f["matched_by"]) for f in doc["modules"][0]["fusions"]} == {("same", "structure")}


def test_dump_directories(runner, tmp_path):
    for side, number in (("old", 2), ("new", 9)):
        (tmp_path / side).mkdir()
        path = pair_paths("recomputation_added")[0 if side == "old" else 1]
        (tmp_path / side / f"module_{number:04d}.jit_r.cpu_after_optimizations.txt").write_text(read_text(path))
    result = runner.invoke(
        main,
        ["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "json", "--fail-on", "duplicated_reads"],
    )
    assert result.exit_code == 1
    [module] = json.loads(result.stdout)["modules"]
    assert module["name"] == "jit_r.after_optimizations"


GPU_FFT = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "field"
    / "gpu"
    / "jaxdecomp-benchmarks.a100x16.jaxfft_2048_4x4_f32_FFT.gpu_after_optimizations.txt"
)


@pytest.mark.skipif(not GPU_FFT.is_file(), reason="../shared/field is not present")
def test_a_gpu_dump_against_itself_has_times_and_no_change(tmp_path):
    """A GPU dump gets the cost model's estimated time per fusion (the module totals carry
    ``time_us``); the same program on both sides changes nothing, so ``time>0%`` is not met."""
    copy = tmp_path / GPU_FFT.name
    copy.write_text(GPU_FFT.read_text())
    result = CliRunner().invoke(main, ["diff", str(GPU_FFT), str(copy), "--format", "json", "--fail-on", "time>0%"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    [module] = doc["modules"]
    assert module["totals"]["old"]["time_us"] > 0
    assert module["totals"]["old"]["time_us"] == module["totals"]["new"]["time_us"]
    assert {f["status"] for f in module["fusions"]} == {"same"}


@pytest.mark.parametrize("missing_side", ["old", "new"])
def test_a_side_that_cannot_be_read_is_not_a_dump_without_fusions(runner, tmp_path, missing_side):
    present = pair_paths("layer_widened")[0]
    missing = str(tmp_path / "no_such_dump.hlo.txt")
    args = [missing, present] if missing_side == "old" else [present, missing]
    for fmt in ("text", "json"):
        result = runner.invoke(main, ["diff", *args, "--format", fmt, "--color", "never"])
        assert result.exit_code == 2
        assert "no_such_dump.hlo.txt: error: cannot read" in result.stderr
        # no fusion listed as removed or added against the missing side
        assert "removed" not in result.stdout and "added" not in result.stdout
    doc = json.loads(runner.invoke(main, ["diff", *args, "--format", "json"]).stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["modules"] == []


HORIZONTAL_GPU = (
    "HloModule h\nfused {{\n  p0 = f32[64,128]{{1,0}} parameter(0)\n  p1 = f32[64,64]{{1,0}} parameter(1)\n"
    "  s = f32[64,64]{{1,0}} slice(p0), slice={{[0:64], [0:{stop}:{step}]}}\n  n = f32[64,64]{{1,0}} negate(p1)\n"
    "  ROOT r = (f32[64,64]{{1,0}}, f32[64,64]{{1,0}}) tuple(s, n)\n}}\nENTRY e {{\n"
    "  a = f32[64,128]{{1,0}} parameter(0)\n  b = f32[64,64]{{1,0}} parameter(1)\n"
    "  ROOT f = (f32[64,64]{{1,0}}, f32[64,64]{{1,0}}) fusion(a, b), kind=kLoop, calls=fused\n}}\n"
)


def test_a_read_turned_uncoalesced_is_said_once_for_the_output_that_reads_it(runner, tmp_path):
    """Output 0 reads every column of a row of %a, then every other one; output 1 never reads %a.
    The GPU verdict is %a's over the fusion: only output 0's row changes, and the gate names it once."""
    old = tmp_path / "old" / "module_0001.jit_f.sm_9.0_gpu_after_optimizations.txt"
    new = tmp_path / "new" / "module_0002.jit_f.sm_9.0_gpu_after_optimizations.txt"
    for path, stop, step in ((old, 64, 1), (new, 128, 2)):
        path.parent.mkdir()
        path.write_text(HORIZONTAL_GPU.format(stop=stop, step=step))
    result = runner.invoke(main, ["diff", str(old), str(new), "--format", "json", "--fail-on", "uncoalesced"])
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    [fusion] = doc["modules"][0]["fusions"]
    coalescing = [c for c in fusion["changes"] if c["kind"] == "coalescing"]
    assert [(c["operand"], c["output"], c["old"], c["new"]) for c in coalescing] == [(0, 0, "coalesced", "uncoalesced")]
    assert result.stderr.count("reads operand 0 uncoalesced (was coalesced)") == 1
