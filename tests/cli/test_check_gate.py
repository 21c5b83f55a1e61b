"""``check`` as a CI gate: rule codes, identities that survive renaming, baselines, --allow, settings."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
GPT12 = SHARED / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"

# One fusion per kind of several-maps read; operand 0 of each is read through two maps.
KINDS = """HloModule kinds

%add {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%fused_twice {
  %p0 = f32[4,4]{1,0} parameter(0)
  %t = f32[4,4]{1,0} transpose(%p0), dimensions={1,0}
  ROOT %a = f32[4,4]{1,0} add(%p0, %t)
}

%fused_concat {
  %p0 = f32[4,3]{1,0} parameter(0)
  ROOT %c = f32[4,6]{1,0} concatenate(%p0, %p0), dimensions={1}
}

%fused_softmax {
  %p0 = f32[4,8]{1,0} parameter(0)
  %z = f32[] constant(0)
  %r = f32[4]{0} reduce(%p0, %z), dimensions={1}, to_apply=%add
  %b = f32[4,8]{1,0} broadcast(%r), dimensions={0}
  ROOT %d = f32[4,8]{1,0} subtract(%p0, %b)
}

%fused_coefficients {
  %p0 = f32[3]{0} parameter(0)
  %s0 = f32[1]{0} slice(%p0), slice={[0:1]}
  %s1 = f32[1]{0} slice(%p0), slice={[1:2]}
  %r0 = f32[] reshape(%s0)
  %r1 = f32[] reshape(%s1)
  %b0 = f32[8]{0} broadcast(%r0), dimensions={}
  %b1 = f32[8]{0} broadcast(%r1), dimensions={}
  ROOT %m = f32[8]{0} multiply(%b0, %b1)
}

%fused_gates {
  %p0 = f32[3072]{0} parameter(0)
  %s0 = f32[1024]{0} slice(%p0), slice={[0:1024]}
  %s1 = f32[1024]{0} slice(%p0), slice={[2048:3072]}
  %b0 = f32[512,1024]{1,0} broadcast(%s0), dimensions={1}
  %b1 = f32[512,1024]{1,0} broadcast(%s1), dimensions={1}
  ROOT %m = f32[512,1024]{1,0} multiply(%b0, %b1)
}

ENTRY %main {
  %a = f32[4,4]{1,0} parameter(0)
  %c = f32[4,3]{1,0} parameter(1)
  %s = f32[4,8]{1,0} parameter(2)
  %k = f32[3]{0} parameter(3)
  %g = f32[3072]{0} parameter(4)
  %f1 = f32[4,4]{1,0} fusion(%a), kind=kLoop, calls=%fused_twice
  %f2 = f32[4,6]{1,0} fusion(%c), kind=kLoop, calls=%fused_concat
  %f3 = f32[4,8]{1,0} fusion(%s), kind=kLoop, calls=%fused_softmax
  %f4 = f32[8]{0} fusion(%k), kind=kLoop, calls=%fused_coefficients
  %f5 = f32[512,1024]{1,0} fusion(%g), kind=kLoop, calls=%fused_gates
  ROOT %t = (f32[4,4]{1,0}, f32[4,6]{1,0}, f32[4,8]{1,0}, f32[8]{0}, f32[512,1024]{1,0}) tuple(%f1, %f2, %f3, %f4, %f5)
}
"""


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def _json(result) -> dict:
    return json.loads(result.stdout)


def rename_everything(text: str) -> str:
    """Every %name, computation and module name replaced by a fresh one (as a recompile may)."""
    mapping: dict[str, str] = {}

    def fresh(match):
        name = match.group(1)
        mapping.setdefault(name, f"n{len(mapping)}_{name[::-1].replace('.', '_')[:6]}")
        return "%" + mapping[name]

    text = re.sub(r"%([A-Za-z_][\w.\-]*)", fresh, text)
    return re.sub(r"^HloModule ([\w.\-]+)", "HloModule renamed_module", text, count=1, flags=re.MULTILINE)


def test_codes_tell_the_kinds_apart(runner, tmp_path):
    path = tmp_path / "kinds.hlo"
    path.write_text(KINDS)
    doc = _json(runner.invoke(main, ["check", str(path), "--select", "ALL", "--format", "json"]))
    codes = {f["fusion"]: f["code"] for f in doc["findings"]}
    # f1 reads the diagonal through both maps; f4 reads two distinct coefficients, each once, and
    # f5 two gates' rows of a bias, 2048 apart (a domain too big to enumerate)
    assert codes == {"f1": "HI001", "f2": "HI002", "f3": "HI005", "f4": "HI007", "f5": "HI007"}
    # by default only HI001 fails the check
    default = runner.invoke(main, ["check", str(path), "--format", "json"])
    assert default.exit_code == 1
    assert [f["fusion"] for f in _json(default)["findings"]] == ["f1"]
    assert _json(default)["not_selected"] == {"HI002": 1, "HI005": 1, "HI007": 2}
    passed = runner.invoke(main, ["check", str(path), "--ignore", "HI001", "--color", "never"])
    assert passed.exit_code == 0
    # a pass says what the selection left out
    assert passed.stdout.splitlines()[-1] == (
        "no selected finding in 5 fusion(s); not selected: 1 HI001, 1 HI002, 1 HI005, 2 HI007 (--select ALL lists them)"
    )


def test_identity_survives_renaming_and_baseline_gates_new_findings(runner, tmp_path):
    path = tmp_path / "kinds.hlo"
    path.write_text(KINDS)
    baseline = tmp_path / "baseline.json"
    wrote = runner.invoke(main, ["check", str(path), "--write-baseline", str(baseline)])
    assert wrote.exit_code == 0, wrote.stderr
    renamed = tmp_path / "renamed.hlo"
    renamed.write_text(rename_everything(KINDS))
    assert "fused_twice" not in renamed.read_text()
    assert runner.invoke(main, ["check", str(renamed)]).exit_code == 1  # still a finding...
    assert runner.invoke(main, ["check", str(renamed), "--baseline", str(baseline)]).exit_code == 0  # ...known
    # a second copy of the same double read is one more than the baseline accepts
    doubled = KINDS.replace(
        "  ROOT %t = ", "  %f6 = f32[4,4]{1,0} fusion(%a), kind=kLoop, calls=%fused_twice\n  ROOT %t = "
    )
    (tmp_path / "doubled.hlo").write_text(doubled)
    result = runner.invoke(
        main, ["check", str(tmp_path / "doubled.hlo"), "--baseline", str(baseline), "--color", "never"]
    )
    assert result.exit_code == 1
    assert "fusion 'f6'" in result.stdout or "fusion 'f1'" in result.stdout
    assert "1 finding(s)" in result.stdout


def test_allow_takes_globs_and_warns_when_it_matches_nothing(runner, tmp_path):
    path = tmp_path / "kinds.hlo"
    path.write_text(KINDS)
    ok = runner.invoke(main, ["check", str(path), "--allow", "fused_tw*"])
    assert ok.exit_code == 0 and "warning" not in ok.stderr
    unused = runner.invoke(main, ["check", str(path), "--allow", "f1", "--allow", "nothing_like_this*"])
    assert unused.exit_code == 0
    assert "warning: --allow 'nothing_like_this*' matches no fusion" in unused.stderr


def test_settings_from_pyproject(runner, tmp_path, monkeypatch):
    path = tmp_path / "kinds.hlo"
    path.write_text(KINDS)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hlo-index]\nallow = ["f1"]\nselect = ["HI00"]\nignore = ["HI002"]\n'
    )
    monkeypatch.chdir(tmp_path)
    doc = _json(runner.invoke(main, ["check", str(path), "--format", "json"]))
    assert {f["code"] for f in doc["findings"]} == {"HI005", "HI007"}
    (tmp_path / "pyproject.toml").write_text('[tool.hlo-index]\nallwo = ["f1"]\n')
    bad = runner.invoke(main, ["check", str(path)])
    assert bad.exit_code == 2 and "unknown key(s) in [tool.hlo-index]: allwo" in bad.stderr


def test_a_bad_baseline_exits_2(runner, tmp_path):
    path = tmp_path / "kinds.hlo"
    path.write_text(KINDS)
    (tmp_path / "b.json").write_text("{not json")
    result = runner.invoke(main, ["check", str(path), "--baseline", str(tmp_path / "b.json")])
    assert result.exit_code == 2 and "b.json:1:2: error" in result.stderr


# A fusion reading its operand twice (a transpose plus itself), fed by a broadcast so it needs no new
# ENTRY parameter: added to the renamed gpt12 dump, it is the one new finding.
NEW_FUSION = """
%fused_new_double_read (param_0.9999: f32[16,16]) -> f32[16,16] {
  %param_0.9999 = f32[16,16]{1,0} parameter(0)
  %transpose.9999 = f32[16,16]{1,0} transpose(%param_0.9999), dimensions={1,0}
  ROOT %add.9999 = f32[16,16]{1,0} add(%param_0.9999, %transpose.9999)
}

"""
NEW_CALL = """  %constant.9999 = f32[] constant(1)
  %broadcast.9999 = f32[16,16]{1,0} broadcast(%constant.9999), dimensions={}
  %brand_new_double_read_fusion = f32[16,16]{1,0} fusion(%broadcast.9999), kind=kLoop, calls=%fused_new_double_read
"""


@pytest.mark.skipif(not GPT12.exists(), reason="shared corpus not present")
def test_gpt12_baseline_survives_renaming_and_names_a_new_double_read(runner, tmp_path):
    baseline = tmp_path / "hlo-index-baseline.json"
    wrote = runner.invoke(main, ["check", str(GPT12), "--write-baseline", str(baseline)])
    assert wrote.exit_code == 0, wrote.stderr
    accepted = json.loads(baseline.read_text())["findings"]
    assert sum(e["count"] for e in accepted) > 10

    with gzip.open(GPT12, "rt") as f:
        original = f.read()
    renamed = rename_everything(original)
    assert renamed.count("%n0_") and "%add_concatenate_fusion" not in renamed
    (tmp_path / "renamed.txt").write_text(renamed)
    same = runner.invoke(main, ["check", str(tmp_path / "renamed.txt"), "--baseline", str(baseline)])
    assert same.exit_code == 0, same.stdout[-2000:]

    entry = renamed.index("\nENTRY ")
    with_new = renamed[: entry + 1] + NEW_FUSION + renamed[entry + 1 :]
    root = with_new.index("\n  ROOT ", with_new.index("\nENTRY "))
    with_new = with_new[: root + 1] + NEW_CALL + with_new[root + 1 :]
    (tmp_path / "new.txt").write_text(with_new)
    result = runner.invoke(main, ["check", str(tmp_path / "new.txt"), "--baseline", str(baseline), "--format", "json"])
    assert result.exit_code == 1
    [finding] = _json(result)["findings"]
    assert finding["fusion"] == "brand_new_double_read_fusion" and finding["code"] == "HI001"
    assert finding["line"] > 0 and finding["source"].endswith("new.txt")


def test_a_module_without_fusions_says_nothing_was_checked(runner, tmp_path):
    hlo = tmp_path / "no_fusion.hlo"
    hlo.write_text("HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(p)\n}\n")
    result = runner.invoke(main, ["check", str(hlo), "--color", "never"])
    assert result.exit_code == 0
    assert "no fusion to check" in result.stdout and "all 0 fusion(s)" not in result.stdout
    doc = json.loads(runner.invoke(main, ["check", str(hlo), "--format", "json"]).stdout)
    assert doc["fusions_checked"] == 0 and doc["ok"] is True


EXTERNAL_KERNEL = """HloModule m
fused {
  p = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} custom-call(p), custom_call_target="my_kernel"
}
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  ROOT f = f32[4]{0} fusion(p0), kind=kLoop, calls=fused
}
"""


def test_verify_says_when_it_skipped_fusions(runner, tmp_path):
    # an external kernel's reads are unknown, so the reference has nothing to check: a pass must
    # not read as a verified dump
    hlo = tmp_path / "external.hlo"
    hlo.write_text(EXTERNAL_KERNEL)
    result = runner.invoke(main, ["check", str(hlo), "--verify", "--color", "never"])
    assert result.exit_code == 0
    assert "--verify checked 0 of 1 fusion(s)" in result.stderr and "1 skipped" in result.stderr
    assert "custom-call to 'my_kernel'" in result.stderr
    assert "note:" not in result.stdout  # JSON and the gate's verdict stay as they were
    plain = tmp_path / "plain.hlo"
    plain.write_text(EXTERNAL_KERNEL.replace('custom-call(p), custom_call_target="my_kernel"', "negate(p)"))
    assert "skipped" not in runner.invoke(main, ["check", str(plain), "--verify"]).stderr
