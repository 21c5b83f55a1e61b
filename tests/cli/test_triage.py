"""``analyze`` triage: --top / --sort, totals, the file column, repeatable glob --fusion, empty filters."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE = str(REPO / "samples" / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt")
OTHER = str(REPO / "samples" / "cond_switch_while.after_optimizations.hlo.txt")


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def _full(runner, *paths) -> list[tuple[str, dict]]:
    doc = json.loads(runner.invoke(main, ["analyze", *paths, "--format", "json"]).stdout)
    return [(m["source"], t) for m in doc["modules"] for t in m["targets"]]


def _bytes(t: dict) -> int:
    return sum(e["utilization"]["bytes_read"] for e in t["output_to_input"])


def test_top_by_bytes_lists_the_heaviest_in_text_and_json(runner):
    targets = _full(runner, SAMPLE)
    expected = sorted(targets, key=lambda st: (-_bytes(st[1]), st[0], st[1]["name"]))[:4]
    text = runner.invoke(main, ["analyze", SAMPLE, "--top", "4", "--sort", "bytes", "--color", "never"])
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0] == f"top 4 of {len(targets)} target(s) by bytes"
    rows = lines[2:6]
    assert [r.split()[0] for r in rows] == [t["name"] for _, t in expected]
    assert len(lines) == 8 and lines[6].startswith("cost of ") and lines[7].startswith("total: ")
    doc = json.loads(runner.invoke(main, ["analyze", SAMPLE, "--top", "4", "--format", "json"]).stdout)
    assert doc["top"] == {"sort": "bytes", "limit": 4, "of": len(targets)}
    ranked = [t for m in doc["modules"] for t in m["targets"]]
    assert [t["name"] for t in ranked] == [t["name"] for _, t in expected]
    assert [t["rank"] for t in ranked] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "sort, key",
    [
        ("maps", lambda t: -max(len(e["maps"]) for e in t["output_to_input"])),
        ("uncoalesced", lambda t: -sum(e["coalescing"]["verdict"] == "uncoalesced" for e in t["output_to_input"])),
    ],
)
def test_other_sorts_put_the_worst_first(runner, sort, key):
    targets = _full(runner, SAMPLE, OTHER)
    doc = json.loads(
        runner.invoke(main, ["analyze", SAMPLE, OTHER, "--top", "3", "--sort", sort, "--format", "json"]).stdout
    )
    ranked = sorted((t for m in doc["modules"] for t in m["targets"]), key=lambda t: t["rank"])
    best = sorted(key(t) for _, t in targets if t["output_to_input"])[:3]
    assert [key(t) for t in ranked] == best


def test_totals_count_fusions_bytes_and_several_maps(runner):
    targets = _full(runner, SAMPLE)
    out = runner.invoke(main, ["analyze", SAMPLE, "--color", "never", "--no-pager"]).stdout
    total = out.splitlines()[-1]
    fusions = sum(t["kind"] == "fusion" for _, t in targets)
    several = sum(len({e["operand"] for e in t["output_to_input"] if len(e["maps"]) > 1}) for _, t in targets)
    assert total.startswith(f"total: {fusions} fusion(s)")
    assert f"{several} operand(s) read through several maps" in total


def test_several_files_get_a_file_column(runner):
    out = runner.invoke(main, ["analyze", SAMPLE, OTHER, "--top", "50", "--color", "never"]).stdout
    header = out.splitlines()[1]
    assert header.split()[:2] == ["file", "target"]
    assert SAMPLE in out and OTHER in out


def test_fusion_is_repeatable_and_takes_globs(runner):
    names = [t["name"] for _, t in _full(runner, SAMPLE)]
    wrapped = sorted(n for n in names if n.startswith("wrapped_convert"))
    assert len(wrapped) >= 2
    doc = json.loads(
        runner.invoke(
            main, ["analyze", SAMPLE, "--fusion", "wrapped_convert*", "--fusion", "ynn_fusion.5", "--format", "json"]
        ).stdout
    )
    got = [t["name"] for m in doc["modules"] for t in m["targets"]]
    assert sorted(got) == sorted(wrapped + ["ynn_fusion.5"])


def test_a_filter_matching_nothing_exits_2_and_prints_no_empty_modules(runner):
    result = runner.invoke(main, ["analyze", str(REPO / "samples"), "--fusion", "no_such_*", "--color", "never"])
    assert result.exit_code == 2
    assert re.search(r"error: no fusion matching 'no_such_\*' in 4 module\(s\)", result.stderr)
    assert "module " not in result.stdout
    # matching in one module only: fine, and the others print nothing
    one = runner.invoke(main, ["analyze", str(REPO / "samples"), "--fusion", "ynn_fusion.5", "--color", "never"])
    assert one.exit_code == 0, one.stderr
    assert one.stdout.count("\nmodule ") + one.stdout.startswith("module ") == 1


def test_stdin_mixes_with_files_under_jobs(runner):
    text = Path(SAMPLE).read_text()
    serial = runner.invoke(main, ["analyze", "-", OTHER, "--format", "json"], input=text)
    parallel = runner.invoke(main, ["analyze", "-", OTHER, "--format", "json", "--jobs", "2"], input=text)
    assert serial.exit_code == parallel.exit_code == 0, parallel.stderr
    assert json.loads(serial.stdout) == json.loads(parallel.stdout)
    assert [m["source"] for m in json.loads(parallel.stdout)["modules"]] == ["<stdin>", OTHER]
    stats = runner.invoke(main, ["stats", "-", OTHER, "--format", "json", "--jobs", "2"], input=text)
    assert [m["path"] for m in json.loads(stats.stdout)["modules"]] == ["<stdin>", OTHER]


def test_bytes_read_and_the_cost_use_the_same_decimal_units(runner):
    # ynn_fusion.5 reads f32[8,16,128] whole (65,536 B) and one f32 more: the summary's
    # "bytes read" and the cost's "accessed" print in the same units, kB = 1,000 B
    text = runner.invoke(main, ["analyze", SAMPLE, "--fusion", "ynn_fusion.5", "--color", "never"]).stdout
    assert "65536 bytes" in text
    summary = next(line for line in text.splitlines() if line.startswith("ynn_fusion.5 "))
    assert summary.endswith(" 65.5 kB")
    assert re.search(r"cost: .* \d+\.\d kB accessed", text)


def test_top_cost_lines_name_their_file_when_modules_share_a_name(runner, tmp_path):
    # the --top listing prints each module's cost line at its end: two dumps of one program (same
    # module name) must be told apart there
    text = Path(SAMPLE).read_text()
    paths = [tmp_path / "before.hlo.txt", tmp_path / "after.hlo.txt"]
    for path in paths:
        path.write_text(text)
    out = runner.invoke(main, ["analyze", *map(str, paths), "--top", "3", "--jobs", "1", "--color", "never"]).stdout
    cost_lines = [line for line in out.splitlines() if line.startswith("cost of ")]
    assert len(cost_lines) == 2
    assert sorted(path.name for path in paths for line in cost_lines if f"({path}):" in line) == sorted(
        path.name for path in paths
    )


def test_totals_over_dumps_of_several_backends_count_each_verdict_apart(runner, tmp_path):
    # a CPU sample and a TPU module: "not contiguous" and "across tiles" are different verdicts, and
    # their sum is neither
    tpu = tmp_path / "tpu.hlo"
    tpu.write_text(
        "HloModule t\nfused {\n  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
        "  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)\n}\nENTRY e {\n"
        "  a = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
        "  ROOT f = f32[8,128]{1,0:T(8,128)} fusion(a), kind=kLoop, calls=fused\n}\n"
    )
    out = runner.invoke(main, ["analyze", SAMPLE, str(tpu), "--top", "1", "--jobs", "1", "--color", "never"]).stdout
    [total] = [line for line in out.splitlines() if line.startswith("total: ")]
    assert "read non-contiguously (CPU)" in total and "walking across tiles (TPU)" in total
    assert "uncoalesced" not in total  # no GPU module among them


def test_ranking_by_output_to_input_figures_needs_those_maps(runner):
    # with input-to-output maps only, bytes read is unknown for every target: a ranking by it
    # would list them in name order under "?"
    result = runner.invoke(main, ["analyze", SAMPLE, "--direction", "in2out", "--top", "3"])
    assert result.exit_code == 2 and "--direction out2in or both" in result.output
    ranked = runner.invoke(main, ["analyze", SAMPLE, "--direction", "in2out", "--top", "3", "--sort", "maps"])
    assert ranked.exit_code == 0
    # no target has a coalescing or contiguity figure: the totals do not count "0" of them
    [total] = [line for line in ranked.output.splitlines() if line.startswith("total: ")]
    assert total.endswith("(duplicated reads)")


def test_an_uncoalesced_operand_counts_once_and_only_where_an_output_reads_it(runner, tmp_path):
    """A horizontal GPU fusion: output 0 reads every other element of operand 0 (uncoalesced),
    output 1 reads operand 1 alone. The operand's verdict is on both outputs' rows; it is one
    uncoalesced operand."""
    gpu = tmp_path / "module_0001.jit_f.sm_9.0_gpu_after_optimizations.txt"
    gpu.write_text(
        "HloModule h\nfused {\n  p0 = f32[64,128]{1,0} parameter(0)\n  p1 = f32[64,64]{1,0} parameter(1)\n"
        "  s = f32[64,64]{1,0} slice(p0), slice={[0:64], [0:128:2]}\n  n = f32[64,64]{1,0} negate(p1)\n"
        "  ROOT r = (f32[64,64]{1,0}, f32[64,64]{1,0}) tuple(s, n)\n}\nENTRY e {\n"
        "  a = f32[64,128]{1,0} parameter(0)\n  b = f32[64,64]{1,0} parameter(1)\n"
        "  ROOT f = (f32[64,64]{1,0}, f32[64,64]{1,0}) fusion(a, b), kind=kLoop, calls=fused\n}\n"
    )
    [(_, target)] = _full(runner, str(gpu))
    verdicts = {(e["output"], e["operand"]): e["coalescing"]["verdict"] for e in target["output_to_input"]}
    assert verdicts[(0, 0)] == verdicts[(1, 0)] == "uncoalesced"  # the operand's, on both rows
    assert verdicts[(0, 1)] == verdicts[(1, 1)] == "coalesced"
    out = runner.invoke(main, ["analyze", str(gpu), "--top", "1", "--sort", "uncoalesced", "--color", "never"]).stdout
    assert "1 uncoalesced (%a)" in out
    [total] = [line for line in out.splitlines() if line.startswith("total: ")]
    assert total.endswith("1 uncoalesced operand(s)")


def test_an_operand_read_through_several_maps_by_every_output_counts_once(runner, tmp_path):
    """Both outputs of a multi-output fusion read operand 0 at i and at 63 - i (two maps each):
    one operand of the fusion, read through several maps."""
    path = tmp_path / "two_outputs.hlo"
    path.write_text(
        "HloModule h\nfused {\n  p0 = f32[64]{0} parameter(0)\n  r = f32[64]{0} reverse(p0), dimensions={0}\n"
        "  a = f32[64]{0} add(p0, r)\n  m = f32[64]{0} multiply(p0, r)\n"
        "  ROOT t = (f32[64]{0}, f32[64]{0}) tuple(a, m)\n}\nENTRY e {\n  x = f32[64]{0} parameter(0)\n"
        "  ROOT f = (f32[64]{0}, f32[64]{0}) fusion(x), kind=kLoop, calls=fused\n}\n"
    )
    [(_, target)] = _full(runner, str(path))
    assert [(e["output"], e["operand"], len(e["maps"])) for e in target["output_to_input"]] == [(0, 0, 2), (1, 0, 2)]
    out = runner.invoke(main, ["analyze", str(path), "--color", "never", "--no-pager"]).stdout
    lines = out.splitlines()
    header, row = lines[lines.index("summary") + 1 : lines.index("summary") + 3]
    columns = dict(zip(header.split()[:6], row.split()[:6]))
    assert columns["operands"] == "1" and columns["maps"] == "4" and columns["several"] == "1"
    [total] = [line for line in out.splitlines() if line.startswith("total: ")]
    assert "1 operand(s) read through several maps" in total


def _many_fusions(count: int) -> str:
    """A module of ``count`` fusions of sizes that repeat (ties in bytes)."""
    comps, entry = [], []
    for i in range(count):
        n = 8 * (1 + i % 7)
        comps.append(
            f"%fused_{i} (p0: f32[{n}], p1: f32[{n}]) -> f32[{n}] {{\n"
            f"  %p0 = f32[{n}]{{0}} parameter(0)\n  %p1 = f32[{n}]{{0}} parameter(1)\n"
            f"  ROOT %a = f32[{n}]{{0}} add(%p0, %p1)\n}}\n"
        )
        entry.append(f"  %x{i} = f32[{n}]{{0}} parameter({2 * i})\n  %y{i} = f32[{n}]{{0}} parameter({2 * i + 1})\n")
        entry.append(f"  %f{i} = f32[{n}]{{0}} fusion(%x{i}, %y{i}), kind=kLoop, calls=%fused_{i}\n")
    outs = ", ".join(f"%f{i}" for i in range(count))
    shapes = ", ".join(f"f32[{8 * (1 + i % 7)}]" for i in range(count))
    return (
        "HloModule many\n\n"
        + "".join(comps)
        + "ENTRY %main {\n"
        + "".join(entry)
        + f"  ROOT %t = ({shapes}) tuple({outs})\n}}\n"
    )


@pytest.mark.parametrize("top", [1, 3, 100, 500])
def test_top_json_is_the_full_document_ranked(runner, tmp_path, top):
    # more targets than --top keeps while ranking (it sorts and cuts every 2 * top + 64), ties in
    # bytes, and the same module twice (ties in every key: the first module's target ranks first)
    path = tmp_path / "many.hlo"
    path.write_text(_many_fusions(150))
    full = json.loads(runner.invoke(main, ["analyze", str(path), str(path), "--format", "json", "--jobs", "1"]).stdout)
    order = sorted(
        (
            (-_bytes(t), m["source"], t["name"], mi, ti)
            for mi, m in enumerate(full["modules"])
            for ti, t in enumerate(m["targets"])
        )
    )[:top]
    rank = {(mi, ti): r for r, (*_, mi, ti) in enumerate(order, 1)}
    expected_modules = []
    for mi, m in enumerate(full["modules"]):
        picked = sorted((rank[(mi, ti)], t) for ti, t in enumerate(m["targets"]) if (mi, ti) in rank)
        expected_modules.append({**m, "targets": [{**t, "rank": r} for r, t in picked]})
    expected = {
        "schema": full["schema"],
        "top": {"sort": "bytes", "limit": top, "of": 300},
        "modules": expected_modules,
    }
    out = runner.invoke(main, ["analyze", str(path), str(path), "--format", "json", "--top", str(top), "--jobs", "1"])
    assert out.exit_code == 0
    assert out.stdout == json.dumps(expected) + "\n"  # the same text, key order included
