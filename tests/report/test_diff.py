"""``report.diff``: fusions of two dumps paired (structure, source, name) and their changes by kind.

The pairs are jax programs compiled by XLA:CPU (``tests/data/diff/make_pairs.py``); what each must
show is written by hand in ``tests/data/diff/MANIFEST.json``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_index.report.diff import (
    FailCondition,
    FusionFigures,
    conditions_met,
    diff_paths,
    pair_fusions,
    parse_condition,
)
from hlo_index.report.diff_inputs import LoadedModule, dump_key, pair_modules

from .diff_helpers import manifest, pair_paths, read_text, rename_everything

PAIRS = manifest()
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _differing(report):
    [module] = report.modules
    return module, [f for f in module.fusions if f.status != "same"]


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_each_pair_shows_its_change_and_no_other(pair):
    expected = PAIRS[pair]
    report = diff_paths(*pair_paths(pair))
    assert not report.unreadable and not report.diagnostics
    module, differing = _differing(report)
    got = [
        {
            "status": f.status,
            "old": f.old.name if f.old else None,
            "new": f.new.name if f.new else None,
            "matched_by": f.matched_by,
            "kinds": sorted({c.kind for c in f.changes}),
        }
        for f in differing
    ]
    want = [
        {k: e[k] for k in ("status", "old", "new", "matched_by")} | {"kinds": sorted(e["kinds"])}
        for e in expected["fusions"]
    ]
    key = lambda e: (e["old"] or "", e["new"] or "")  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    for f in module.fusions:
        if f.status == "same":
            assert f.changes == [] and f.old is not None and f.new is not None
    by_new = {f.new.name: f for f in differing if f.new is not None}
    for entry in expected["fusions"]:
        for operand, maps in entry.get("maps", {}).items():
            [change] = [c for c in by_new[entry["new"]].changes if c.kind == "maps" and c.operand == int(operand)]
            assert sorted(change.old) == sorted(maps["old"]) and sorted(change.new) == sorted(maps["new"])
    for name, figures in expected.get("bytes_read", {}).items():
        f = by_new[name]
        assert (f.old.bytes_read, f.new.bytes_read) == (figures["old"], figures["new"])
    for name, figures in expected.get("flops", {}).items():
        [change] = [c for c in by_new[name].changes if c.kind == "flops"]
        assert (change.old, change.new) == (figures["old"], figures["new"])
    for name, figures in expected.get("computation", {}).items():
        [change] = [c for c in by_new[name].changes if c.kind == "computation"]
        assert (change.old, change.new) == (figures["old"], figures["new"])


def test_a_changed_constant_alone_still_makes_the_pair_changed(tmp_path):
    # 2 * exp(x) + 1 against 3 * exp(x) + 1: the same maps, bytes and flops, another kernel
    old = (SAMPLES.parent / "tests/data/diff/recomputation_added/old.hlo.txt").read_text()
    new = old.replace("constant(2)", "constant(3)")
    assert new != old
    (tmp_path / "old.hlo").write_text(old)
    (tmp_path / "new.hlo").write_text(new)
    report = diff_paths(str(tmp_path / "old.hlo"), str(tmp_path / "new.hlo"))
    [fusion] = report.modules[0].fusions
    assert fusion.status == "changed" and fusion.matched_by == "source"
    [change] = fusion.changes
    assert change.kind == "computation"
    assert change.old == change.new == {"instructions": 8, "opcodes": {}}


def test_an_op_added_inside_a_fusion_shows_its_opcode_and_flops(tmp_path):
    old = (SAMPLES.parent / "tests/data/diff/recomputation_added/old.hlo.txt").read_text()
    # one more multiply by the broadcast 2 before the add: 384 more flops on f32[16,24]
    new = old.replace(
        "  ROOT %add.0 = f32[16,24]{1,0} add(%mul.0, %add.1)",
        "  %mul.9 = f32[16,24]{1,0} multiply(%mul.0, %mul.1)\n  ROOT %add.0 = f32[16,24]{1,0} add(%mul.9, %add.1)",
    )
    assert new != old
    (tmp_path / "old.hlo").write_text(old)
    (tmp_path / "new.hlo").write_text(new)
    [fusion] = diff_paths(str(tmp_path / "old.hlo"), str(tmp_path / "new.hlo")).modules[0].fusions
    kinds = {c.kind: c for c in fusion.changes}
    assert set(kinds) == {"computation", "flops"}
    assert kinds["computation"].old == {"instructions": 8, "opcodes": {"multiply": 1}}
    assert kinds["computation"].new == {"instructions": 9, "opcodes": {"multiply": 2}}
    assert (kinds["flops"].old, kinds["flops"].new) == (768, 768 + 384)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_fail_on_conditions_as_the_manifest_says(pair):
    report = diff_paths(*pair_paths(pair))
    for text, status in PAIRS[pair]["fail_on"].items():
        assert bool(conditions_met(report, [parse_condition(text)])) == bool(status), text


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_lost_second_map_is_not_a_duplicated_read(pair):
    old, new = pair_paths(pair)
    assert not conditions_met(diff_paths(new, old), [FailCondition("duplicated_reads")])


@pytest.mark.parametrize(
    "source",
    [
        pair_paths("same_program")[0],
        pair_paths("layer_widened")[1],
        str(SAMPLES / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt"),
        str(SAMPLES / "gather_scatter_zoo.after_optimizations.hlo.txt"),
        str(SAMPLES / "cond_switch_while.after_optimizations.hlo.txt"),
    ],
    ids=lambda p: Path(p).parent.name + "/" + Path(p).name[:24],
)
def test_a_renamed_copy_is_the_same_matched_by_structure(source, tmp_path):
    text = read_text(source)
    renamed, names = rename_everything(text)
    copy = tmp_path / "renamed.hlo.txt"
    copy.write_text(renamed)
    report = diff_paths(source, str(copy))
    assert not report.unreadable
    [module] = report.modules
    assert module.fusions, "a dump with fusions"
    for f in module.fusions:
        assert (f.status, f.matched_by) == ("same", "structure"), (f.old and f.old.name, f.new and f.new.name)
        assert names[f.old.name] == f.new.name  # each fusion paired with its own copy
    assert module.old_totals == module.new_totals


def test_repeated_layers_pair_one_to_one_in_order():
    report = diff_paths(*pair_paths("same_program"))
    [module] = report.modules
    assert [f.old.order for f in module.fusions] == [f.new.order for f in module.fusions] == list(range(12))


def _figures(name, order, identity, source=("", "", 0)):
    op_name, file, line = source
    return FusionFigures(name, order, identity, op_name, file, line, (), 1, (), 0, 0)


def test_pairing_rounds_structure_then_source_then_name():
    old = [
        _figures("a", 0, "A"),
        _figures("b", 1, "A"),
        _figures("c", 2, "A"),
        _figures("d", 3, "D", ("op/d", "m.py", 4)),
        _figures("e", 4, "E"),
        _figures("f", 5, "F"),
    ]
    new = [
        _figures("x", 0, "A"),
        _figures("y", 1, "A"),
        _figures("d2", 2, "D2", ("op/d", "m.py", 4)),
        _figures("e", 3, "E2"),
        _figures("g", 4, "G"),
    ]
    pairs = [(a and a.name, b and b.name, how) for a, b, how in pair_fusions(old, new)]
    assert pairs == [
        ("a", "x", "structure"),
        ("b", "y", "structure"),
        ("d", "d2", "source"),
        ("e", "e", "name"),
        (None, "g", None),
        ("c", None, None),
        ("f", None, None),
    ]


@pytest.mark.parametrize(
    "name, key",
    [
        ("module_0004.jit_f.cpu_after_optimizations.txt", "jit_f.after_optimizations"),
        ("module_0012.jit_f.sm_8.0_gpu_after_optimizations.txt.gz", "jit_f.after_optimizations"),
        ("module_0000.jit_f.before_optimizations.txt", "jit_f.before_optimizations"),
        ("module_0003.pjit_step.tpu_after_optimizations.txt", "pjit_step.after_optimizations"),
        ("gpt12_train_step.after_optimizations.hlo.txt.gz", "the_module"),
    ],
)
def test_dump_keys_leave_out_the_number_and_the_backend(name, key):
    assert dump_key(f"/some/dir/{name}", "the_module") == key


def test_repeated_dump_names_pair_in_order():
    def side(*keys):
        return [LoadedModule(k, f"{k}#{i}", None) for i, k in enumerate(keys)]

    pairs = pair_modules(side("f", "g", "f", "f"), side("f", "f", "h"))
    assert [(p.key, p.old and p.old.path, p.new and p.new.path) for p in pairs] == [
        ("f", "f#0", "f#0"),
        ("f", "f#2", "f#1"),
        ("h", None, "h#2"),
        ("f", "f#3", None),
        ("g", "g#1", None),
    ]


def test_dump_directories_pair_modules_by_name(tmp_path):
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    old_dir.mkdir()
    new_dir.mkdir()
    for pair, number in (("weight_transposed", 3), ("op_added", 7)):
        old, new = pair_paths(pair)
        (old_dir / f"module_{number:04d}.jit_{pair}.cpu_after_optimizations.txt").write_text(read_text(old))
        (new_dir / f"module_{number + 10:04d}.jit_{pair}.cpu_after_optimizations.txt").write_text(read_text(new))
    (old_dir / "module_0003.jit_weight_transposed.cpu_after_optimizations-buffer-assignment.txt").write_text("x")
    report = diff_paths(str(old_dir), str(new_dir))
    assert not report.unreadable
    got = {m.name: sorted(f.status for f in m.fusions) for m in report.modules}
    assert got == {
        "jit_weight_transposed.after_optimizations": ["changed", "same"],
        "jit_op_added.after_optimizations": ["added", "same"],
    }


def test_unreadable_input_is_a_positioned_diagnostic(tmp_path):
    bad = tmp_path / "bad.hlo.txt"
    bad.write_text("HloModule m\n\nENTRY %e {\n  %p = f32[4] parameter(0)\n  ROOT %r = f32[4 negate(%p)\n}\n")
    report = diff_paths(pair_paths("op_added")[0], str(bad))
    assert report.unreadable
    assert any(d.severity == "error" and d.path == str(bad) and d.line == 5 for d in report.diagnostics)


@pytest.mark.parametrize(
    "text, kind, percent",
    [
        ("duplicated_reads", "duplicated_reads", None),
        ("uncoalesced", "uncoalesced", None),
        ("bytes>5%", "bytes", 5.0),
        ("time > 2.5 %", "time", 2.5),
    ],
)
def test_conditions_parse(text, kind, percent):
    assert parse_condition(text) == FailCondition(kind, percent)


@pytest.mark.parametrize("text", ["bytes>5", "bytes<5%", "maps", "time>%", ""])
def test_bad_conditions_are_refused(text):
    with pytest.raises(ValueError, match="is not a condition"):
        parse_condition(text)


GPT12 = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "gpt12_train"


@pytest.mark.skipif(not GPT12.is_dir(), reason="the shared corpus is not here")
def test_gpt12_against_a_renamed_copy_pairs_each_layer_with_its_copy(tmp_path):
    source = str(GPT12 / "gpt12_train_step.after_optimizations.hlo.txt.gz")
    renamed, names = rename_everything(read_text(source))
    copy = tmp_path / "renamed.hlo.txt"
    copy.write_text(renamed)
    [module] = diff_paths(source, str(copy)).modules
    assert len(module.fusions) > 1000
    assert {(f.status, f.matched_by) for f in module.fusions} == {("same", "structure")}
    assert all(names[f.old.name] == f.new.name for f in module.fusions)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_two_processes_give_the_report_of_one(pair, monkeypatch):
    """OLD's side analysed in a second process gives the report one process gives (structural
    identities are digests, equal across processes)."""
    from hlo_index.render.diff_json import render_diff_json
    from hlo_index.report import diff_figures

    serial = render_diff_json(diff_paths(*pair_paths(pair)))
    monkeypatch.setattr(diff_figures, "PARALLEL_FROM_BYTES", 0)
    forks = []
    real_fork = diff_figures.os.fork

    def counted_fork():
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(diff_figures.os, "fork", counted_fork)
    assert render_diff_json(diff_paths(*pair_paths(pair), processes=2)) == serial
    assert forks == [1]


def test_a_failed_second_process_costs_only_time(monkeypatch):
    """OLD's process dies before it sends its side: this process reads OLD itself."""
    import os

    from hlo_index.render.diff_json import render_diff_json
    from hlo_index.report import diff_figures

    pair = min(PAIRS)
    serial = render_diff_json(diff_paths(*pair_paths(pair)))
    monkeypatch.setattr(diff_figures, "PARALLEL_FROM_BYTES", 0)
    parent = os.getpid()
    real_side_figures = diff_figures.side_figures

    def dies_in_the_child(path, cost=None, device=None):
        if os.getpid() != parent:
            os._exit(3)
        return real_side_figures(path, cost, device)

    monkeypatch.setattr(diff_figures, "side_figures", dies_in_the_child)
    assert render_diff_json(diff_paths(*pair_paths(pair), processes=2)) == serial
