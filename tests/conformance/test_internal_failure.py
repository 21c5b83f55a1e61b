"""An analysis that raises is a bug, reported as one: a positioned ``internal:`` error on stderr and
in the JSON diagnostics, exit status 2, and every other target still analysed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.ops import registry

# Two fusions; only the first holds a reverse (the rule planted below raises). The shapes are
# unusual so no cached map of an earlier test can stand in for the planted rule.
TEXT = """HloModule planted

broken {
  p = f32[7,13]{1,0} parameter(0)
  ROOT r = f32[7,13]{1,0} reverse(p), dimensions={0}
}

fine {
  a = f32[7,13]{1,0} parameter(0)
  b = f32[7,13]{1,0} parameter(1)
  ROOT s = f32[7,13]{1,0} add(a, b)
}

ENTRY main {
  x = f32[7,13]{1,0} parameter(0)
  f1 = f32[7,13]{1,0} fusion(x), kind=kLoop, calls=broken
  ROOT f2 = f32[7,13]{1,0} fusion(f1, x), kind=kLoop, calls=fine
}
"""


def _raise(instr, *_args):
    raise RuntimeError(f"planted failure in the {instr.opcode} rule")


@pytest.fixture
def planted(monkeypatch, tmp_path):
    monkeypatch.setitem(registry.OUTPUT_TO_INPUT, "reverse", _raise)
    monkeypatch.setitem(registry.INPUT_TO_OUTPUT, "reverse", _raise)
    path = tmp_path / "planted.hlo"
    path.write_text(TEXT)
    return str(path)


def _runner() -> CliRunner:
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_internal_failure_exits_2_and_keeps_the_other_targets(planted, fmt):
    result = _runner().invoke(main, ["analyze", planted, "--format", fmt, "--direction", "both", "--color", "never"])
    assert result.exit_code == 2, result.output
    stderr = result.stderr
    assert f"{planted}:16:3: error: internal: fusion %f1: RuntimeError: planted failure in the reverse rule" in stderr
    assert "Traceback" not in stderr + result.output
    if fmt == "json":
        [module] = json.loads(result.stdout)["modules"]
        errors = [d for d in module["diagnostics"] if d["severity"] == "error"]
        assert [(d["line"], d["column"]) for d in errors] == [(16, 3)]
        assert errors[0]["message"].startswith("internal: fusion %f1: RuntimeError")
        names = [t["name"] for t in module["targets"]]
        assert names == ["f2"]
        [f2] = module["targets"]
        assert [m["map"] for row in f2["output_to_input"] for m in row["maps"]] == [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 12]"
        ] * 2
    else:
        assert "f2" in result.stdout


def test_check_exits_2_on_internal_failure(planted):
    result = _runner().invoke(main, ["check", planted, "--color", "never"])
    assert result.exit_code == 2
    assert "error: internal: fusion %f1" in result.stderr


def test_without_the_plant_the_same_file_exits_0(tmp_path):
    path = tmp_path / "fine.hlo"
    path.write_text(TEXT)
    result = _runner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert [t["name"] for t in json.loads(result.stdout)["modules"][0]["targets"]] == ["f1", "f2"]
