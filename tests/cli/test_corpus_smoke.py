"""Every command over the real XLA dumps of /work/shared/corpus, as a user would run them, plus bad
inputs: never a traceback, exit codes as the README says, JSON valid and on stdout only."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main

CORPUS = Path("/work/shared/corpus")
# gpt12 takes seconds per command: the smoke run keeps to the small dumps.
FILES = sorted(str(p) for p in CORPUS.rglob("*.txt") if "gpt12" not in p.parts[-2]) if CORPUS.is_dir() else []
SMALL_FILE = str(CORPUS / "convnet" / "conv1d_nwc_causal.after_optimizations.hlo.txt")

pytestmark = pytest.mark.skipif(not FILES, reason="the shared corpus is not on this machine")


@pytest.fixture
def runner():
    # click < 8.2 mixes stderr into output unless told not to; 8.2 always keeps them apart.
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def invoke(runner, *args, stdin=None):
    result = runner.invoke(main, list(args), input=stdin)
    # A Python exception escaping the command is a bug whatever the input.
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.stdout + result.stderr, args
    return result


def assert_diagnostic_format(stderr: str, path: str) -> None:
    """``path:line:col: error: message`` then the source line and a caret under the column."""
    lines = stderr.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith(f"{path}:") and ": error: " in line]
    assert heads, stderr
    for i in heads:
        location = lines[i].split(": error: ")[0][len(path) + 1 :]
        parts = location.split(":")
        if len(parts) == 2 and all(p.isdigit() for p in parts) and i + 2 < len(lines):
            column = int(parts[1])
            assert lines[i + 2].strip() == "^" and lines[i + 2].index("^") == column - 1, stderr


def check_analyze_document(doc: dict) -> None:
    assert doc["schema"] == "hlo-index/1"
    for mod in doc["modules"]:
        assert set(mod) - {"cost_totals"} == {"name", "source", "targets", "diagnostics"}
        for t in mod["targets"]:
            assert t["kind"] in ("instruction", "fusion", "computation")
            for entry in t["output_to_input"] + t["input_to_output"]:
                # No maps at all is allowed: a computation parameter its root never reads.
                for m in entry["maps"]:
                    assert isinstance(m["map"], str) or (m["map"] is None and m["unknown"])
                assert entry["deduplicated"] == (len(entry["maps"]) == 1)


@pytest.mark.parametrize("path", FILES, ids=lambda p: Path(p).name[:60])
def test_analyze_check_stats_json_on_every_dump(runner, path):
    analyzed = invoke(runner, "analyze", path, "--format", "json")
    assert analyzed.exit_code == 0, analyzed.stderr
    doc = json.loads(analyzed.stdout)
    check_analyze_document(doc)
    [mod] = doc["modules"]
    assert mod["targets"] and mod["diagnostics"] == []

    checked = invoke(runner, "check", path, "--format", "json", "--select", "ALL")
    report = json.loads(checked.stdout)
    assert report["schema"] == "hlo-index-check/1"
    # The exit code and the findings tell the same story.
    assert checked.exit_code == (0 if report["ok"] else 1)
    assert report["ok"] == (report["findings"] == [])
    fusions = sum(1 for t in mod["targets"] if t["kind"] == "fusion")
    assert report["fusions_checked"] == fusions
    # With every rule selected, a finding is exactly an analyze operand entry with several distinct maps.
    several = {
        (t["name"], e["operand"], e["output"])
        for t in mod["targets"]
        if t["kind"] == "fusion"
        for e in t["output_to_input"]
        if len(e["maps"]) > 1
    }
    assert {(f["fusion"], f["operand"], f["output"]) for f in report["findings"]} == several

    stats = invoke(runner, "stats", path, "--format", "json")
    assert stats.exit_code == 0
    [counts] = json.loads(stats.stdout)["modules"]
    assert counts["fusions"] == sum(counts["fusion_kinds"].values())
    assert sum(counts["opcodes"].values()) >= counts["instructions"] >= counts["computations"]


def test_text_renderings_and_color_switches(runner):
    plain = invoke(runner, "analyze", SMALL_FILE, "--color", "never")
    assert plain.exit_code == 0 and "\x1b[" not in plain.stdout
    assert "output → input" in plain.stdout and "summary" in plain.stdout
    coloured = invoke(runner, "analyze", SMALL_FILE, "--color", "always")
    assert "\x1b[" in coloured.stdout
    both = invoke(runner, "analyze", SMALL_FILE, "--direction", "both", "--physical", "--format", "json")
    [target] = json.loads(both.stdout)["modules"][0]["targets"]
    assert target["input_to_output"] and all("physical_maps" in e for e in target["output_to_input"])


def test_stdin_and_gzip_read_like_the_file(runner, tmp_path):
    text = Path(SMALL_FILE).read_text()
    from_file = json.loads(invoke(runner, "analyze", SMALL_FILE, "--format", "json").stdout)
    from_stdin = invoke(runner, "analyze", "-", "--format", "json", stdin=text)
    assert from_stdin.exit_code == 0
    gz = tmp_path / "m.hlo.txt.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    from_gz = json.loads(invoke(runner, "analyze", str(gz), "--format", "json").stdout)
    strip = lambda doc: [t for m in doc["modules"] for t in m["targets"]]  # noqa: E731
    assert strip(json.loads(from_stdin.stdout)) == strip(from_file) == strip(from_gz)


@pytest.mark.parametrize("command", ["analyze", "check", "stats", "bubble"])
@pytest.mark.parametrize("case", ["missing", "empty", "garbage", "truncated"])
def test_bad_inputs_exit_2_with_a_located_diagnostic(runner, tmp_path, command, case):
    path = tmp_path / "bad.hlo.txt"
    text = Path(SMALL_FILE).read_text()
    if case == "empty":
        path.write_text("")
    elif case == "garbage":
        path.write_bytes(bytes(range(256)) * 8)
    elif case == "truncated":
        path.write_text(text[: text.index("ROOT")])
    result = invoke(runner, command, str(path), "--format", "json")
    assert result.exit_code == 2
    assert str(path) in result.stderr and "error:" in result.stderr
    if case != "missing":
        assert_diagnostic_format(result.stderr, str(path))
    json.loads(result.stdout)  # still a valid document (possibly empty)


def test_directory_with_one_broken_module_still_reports_the_others(runner, tmp_path):
    good = Path(SMALL_FILE)
    (tmp_path / good.name).write_text(good.read_text())
    (tmp_path / "broken.before_optimizations.txt").write_text(good.read_text()[:200])
    result = invoke(runner, "analyze", str(tmp_path), "--format", "json")
    assert result.exit_code == 2
    mods = json.loads(result.stdout)["modules"]
    assert any(m["targets"] for m in mods) and any(m["diagnostics"] for m in mods)
    github = invoke(runner, "check", str(tmp_path), "--format", "github")
    assert github.exit_code == 2 and "::error file=" in github.stdout


def test_named_targets_on_a_real_dump(runner):
    path = str(CORPUS / "mlp" / "mlp_layernorm_gelu_f32.before_optimizations.hlo.txt")
    doc = json.loads(invoke(runner, "analyze", path, "--format", "json").stdout)
    [entry] = doc["modules"][0]["targets"]
    by_comp = invoke(runner, "analyze", path, "--computation", entry["name"], "--format", "json")
    assert by_comp.exit_code == 0
    assert json.loads(by_comp.stdout)["modules"][0]["targets"][0]["output_to_input"] == entry["output_to_input"]
    assert invoke(runner, "analyze", path, "--fusion", "no_such_fusion").exit_code == 2
    assert invoke(runner, "analyze", path, "--instruction", "no_such_op").exit_code == 2


def test_tile_arguments(runner):
    path = str(CORPUS / "mlp" / "mlp_layernorm_gelu_f32.after_optimizations.hlo.txt")
    stats = json.loads(invoke(runner, "stats", path, "--format", "json").stdout)
    assert stats["modules"][0]["fusions"]
    doc = json.loads(invoke(runner, "analyze", path, "--format", "json").stdout)
    target = next(t for t in doc["modules"][0]["targets"] if t["kind"] == "fusion")
    rank = target["outputs"][0]["shape"].split("[")[1].split("]")[0].count(",") + 1
    ones = ",".join("1" * rank)
    ok = invoke(runner, "tile", path, "--fusion", target["name"], "--tile", ones, "--format", "json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["tile"] == [1] * rank
    for bad in (
        ["--tile", "x"],
        ["--tile", "0"],
        ["--tile", ones, "--output", "99"],
        ["--tile", ",".join(["1"] * (rank + 1))],
    ):
        result = invoke(runner, "tile", path, "--fusion", target["name"], *bad, "--format", "json")
        assert result.exit_code == 2 and result.stdout == "", bad
    assert invoke(runner, "tile", path, "--fusion", "nope", "--tile", ones).exit_code == 2


@pytest.mark.parametrize(
    "args",
    [
        ["simplify", "garbage"],
        ["simplify", "(d0) -> (d0 +)"],
        ["simplify", ""],
        ["compose", "(d0) -> (d0), domain: d0 in [0, 3]", "nope"],
        ["compose", "(d0) -> (d0), domain: d0 in [0, 3]", "(d0) -> (d0, d0), domain: d0 in [0, 3]"],
        ["layout", "f32[3,5"],
        ["layout", "garbage"],
        ["layout", "f32[3,5]{1,1}"],
        ["layout", "f32[3]{0:T(0)}"],
    ],
)
def test_bad_map_and_shape_text_exit_2_without_json(runner, args):
    result = invoke(runner, *args, "--format", "json")
    assert result.exit_code == 2 and result.stdout == "" and "error" in result.stderr


def test_layout_svg_to_an_unwritable_place_is_a_diagnostic(runner, tmp_path):
    result = invoke(runner, "layout", "f32[4,4]{1,0}", "--svg", str(tmp_path / "no" / "dir" / "x.svg"))
    assert result.exit_code == 2 and "error" in result.stderr
