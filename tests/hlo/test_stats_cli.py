"""``hlo-index stats``: table and JSON output, exit code 2 with a clean diagnostic for bad inputs."""

from __future__ import annotations

import json
import os
from collections import Counter

from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo import load

SAMPLES = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "samples"))
SAMPLE = os.path.join(SAMPLES, "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt")


def test_json_counts_agree_with_the_model():
    result = CliRunner().invoke(main, ["stats", "--format", "json", SAMPLE])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (entry,) = data["modules"]
    module = load(SAMPLE)[0].module
    assert entry["instructions"] == sum(len(c.instructions) for c in module.computations)
    assert entry["computations"] == len(module.computations)
    assert entry["opcodes"] == dict(Counter(i.opcode for i in module.instructions))
    assert entry["fusions"] == len(module.fusions) == sum(entry["fusion_kinds"].values())
    assert set(entry["fusion_kinds"]) == {f.attrs["kind"] for f in module.fusions}


def test_text_table_lists_opcodes():
    result = CliRunner().invoke(main, ["stats", SAMPLES])
    assert result.exit_code == 0, result.output
    for word in ("computations", "instructions", "fusion", "parameter"):
        assert word in result.stdout
    assert "modules" in result.stdout  # the total line for several modules


def test_bad_input_exit_2_with_caret_and_others_still_reported(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY %e {\n  ROOT %p = f32[2] parameter(0) ??\n}\n")
    result = CliRunner().invoke(main, ["stats", "--format", "json", str(bad), SAMPLE])
    assert result.exit_code == 2
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{bad}:3:33: error: ")
    assert lines[1] == "  ROOT %p = f32[2] parameter(0) ??"
    assert lines[2] == " " * 32 + "^"
    assert len(json.loads(result.stdout)["modules"]) == 1


def test_pathological_inputs_never_traceback(tmp_path):
    inputs = {
        "empty.hlo": b"",
        "garbage.hlo": bytes(range(256)) * 4,
        "deep.hlo": b"HloModule m\nENTRY %e {\n ROOT %p = "
        + b"(" * 5000
        + b"f32[]"
        + b")" * 5000
        + b" parameter(0)\n}\n",
        "huge.hlo": b"HloModule m\nENTRY %e {\n ROOT %p = f32[100000000000000000000000] parameter(0)\n}\n",
    }
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
        result = CliRunner().invoke(main, ["stats", str(tmp_path / name)])
        assert result.exit_code == 2, (name, result.output)
        assert isinstance(result.exception, SystemExit)
        assert result.stderr.startswith(f"{tmp_path / name}:") and ": error: " in result.stderr


def test_gzip_data_on_stdin_or_without_its_suffix_is_read(tmp_path):
    # "cat dump.txt.gz | hlo-index stats -" and a compressed dump saved without ".gz"
    import gzip

    with open(SAMPLE, "rb") as f:
        packed = gzip.compress(f.read())
    expected = json.loads(CliRunner().invoke(main, ["stats", "--format", "json", SAMPLE]).stdout)["modules"][0]
    piped = CliRunner().invoke(main, ["stats", "--format", "json", "-"], input=packed)
    assert piped.exit_code == 0, piped.output
    assert json.loads(piped.stdout)["modules"][0]["instructions"] == expected["instructions"]
    unsuffixed = tmp_path / "module_0001.after_optimizations.txt"
    unsuffixed.write_bytes(packed)
    result = CliRunner().invoke(main, ["stats", "--format", "json", str(unsuffixed)])
    assert result.exit_code == 0 and json.loads(result.stdout)["modules"][0]["opcodes"] == expected["opcodes"]
    truncated = CliRunner().invoke(main, ["stats", "-"], input=packed[:100])
    assert truncated.exit_code == 2 and "cannot read" in truncated.output
