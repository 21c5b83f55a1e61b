"""``hlo.deferred``: bodies read on first use give the module a whole read gives, field for field;
a module whose deferred parts are not clean is read again, eagerly, and answered as without
deferring (seeded mutants of real modules, analysed split, against the serial answer)."""

from __future__ import annotations

import glob
import os
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo import loader
from hlo_index.hlo.deferred import DeferredBodies
from hlo_index.hlo.model import Computation, DeferredComputation, Module

from .mutations import mutate, texts_of

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SAMPLES = sorted((ROOT / "samples").glob("*.txt"))
FIELD = sorted(p for p in (SHARED / "field").glob("*/*") if "after_optimizations" in p.name or p.suffix == ".hlo")
GPT12 = SHARED / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"


def _instruction_fields(i) -> tuple:
    return (
        (i.name, i.opcode, str(i.shape), i.operand_names, tuple(o.name for o in i.operands), i.line, i.column)
        + (i.is_root, repr(i.metadata), repr(sorted((k, repr(v)) for k, v in i.attrs.items())))
        + (tuple((k, v.name) for k, v in i.called.items()), i.parameter_number, i.literal, i.computation.name)
        + (tuple(p.name for p in i.control_predecessors),)
    )


def _fields(module: Module) -> list[tuple]:
    """What a module's computations and instructions hold, as comparable values."""
    out: list[tuple] = []
    for c in module.computations:
        assert type(c) is Computation
        out.append(
            (c.name, c.is_entry, c.is_fused, c.line, c.column, c.execution_thread, str(c.result_shape))
            + (c.root.name if c.root else None, tuple(sorted(c.parameters)), c.operands_above, tuple(c.by_name))
        )
        out.extend(_instruction_fields(i) for i in c.instructions)
    return out


@pytest.mark.parametrize("path", [*SAMPLES, *FIELD, GPT12], ids=lambda p: p.name[:48])
def test_bodies_read_on_first_use_are_those_a_whole_read_gives(path, defer_all):
    if not path.exists():
        pytest.skip(f"{path} not present")
    text = loader.read_text(str(path))
    (eager,) = loader.parse_checked(text, str(path))
    (late,) = loader.parse_checked(text, str(path), defer_bodies=True)
    assert late.diagnostics == eager.diagnostics
    assert (late.module is None) == (eager.module is None)
    if late.module is None:
        return  # both read whole, the same diagnostics: an unusable module
    bodies = late.module.deferred
    if bodies is not None:  # left unread: fields read one at a time, then the rest
        unread = [c for c in late.module.computations if type(c) is DeferredComputation]
        assert unread and len(unread) == len(bodies.unread)
        # the module's scans for fusions never need a deferred body
        assert [f.name for f in late.module.fusions] == [f.name for f in eager.module.fusions]
        assert all(type(c) is DeferredComputation for c in unread)
        first = unread[0]
        assert first.instructions  # reading one field reads the body, which is then a plain computation
        assert type(first) is Computation and first in bodies.read
        assert bodies.read_rest() and not bodies.unread
    assert _fields(late.module) == _fields(eager.module)


def test_most_modules_read_here_leave_bodies_unread(defer_all):
    """The comparison above is not vacuous: most of its modules have bodies deferred."""
    paths = [*SAMPLES, *(p for p in FIELD if p.stat().st_size < 200_000)]
    deferring = 0
    for path in paths:
        (result,) = loader.parse_checked(loader.read_text(str(path)), str(path), defer_bodies=True)
        deferring += result.module is not None and result.module.deferred is not None
    assert deferring > len(paths) // 2  # (11 of the 17 here: the samples, GPU, ROCm and TPU dumps)


def test_the_big_dumps_leave_most_of_their_text_to_the_processes_that_analyse_it():
    """A GPU training step and a CPU one, at the sizes deferring is for: most text not read at load."""
    for path in (GPT12, *(p for p in FIELD if "sm_8.0" in p.name)):
        if not path.exists():
            continue
        (result,) = loader.parse_checked(loader.read_text(str(path)), str(path), defer_bodies=True)
        assert result.module is not None and result.module.deferred is not None
        assert result.module.deferred.unread_share() > 0.5


def _analysed(args: list[str], text: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, input=text)
    failure = result.exception if not isinstance(result.exception, SystemExit) else None
    assert failure is None, f"{type(failure).__name__}: {failure}"
    return result.exit_code, result.stdout, result.stderr


def _fused_body_edited(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new`` in its first fused computation that holds it."""
    at = text.index("%fused")
    at = text.index(old, at)
    return text[:at] + new + text[at + len(old) :]


@pytest.mark.parametrize(
    "edit",
    [
        ("ROOT %dot.2 = f32[128,128]{1,0} dot(", "ROOT %dot.2 = f32[128,127]{1,0} dot("),  # a wrong shape
        (
            "ROOT %dot.2 = f32[128,128]{1,0} dot(%param_0, %param_1)",
            "ROOT %dot.2 = f32[128,128]{1,0} dot(%param_0, %nope)",
        ),
        ("%param_1 = f32[512,128]{1,0} parameter(1)", "%param_1 = f32[512,128]{1,0} parameter(1) parameter(2)"),
        # what only a whole read names: an instruction nested in an operand list
        ("dot(%param_0, %param_1)", "dot(%param_0, f32[512,128]{1,0} copy(f32[512,128]{1,0} %param_1))"),
    ],
    ids=["wrong-shape", "undefined-operand", "syntax", "nested-instruction"],
)
def test_a_deferred_body_that_is_not_clean_is_answered_as_without_deferring(edit, defer_all, monkeypatch):
    text = _fused_body_edited(
        (ROOT / "samples" / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt").read_text(), *edit
    )
    read_again = []
    monkeypatch.setattr(DeferredBodies, "read_again", lambda self: read_again.append(1) or self.text)
    for args in (["analyze", "-", "--format", "json"], ["analyze", "-", "--color", "never"]):
        serial = _analysed([*args, "-j", "1"], text)
        split = _analysed([*args, "-j", "2"], text)
        assert split == serial
    assert serial[0] == (0 if "copy(" in edit[1] else 2)  # an error at its place, or a module XLA reads
    assert len(read_again) == 2  # each time deferred, found unclean after the load, then read whole


# the samples and the field's modules up to 200 kB: GPU, TPU, ROCm and Neuron dumps to mutate
BASES = texts_of(
    [str(p) for p in SAMPLES]
    + sorted(p for p in glob.glob(str(SHARED / "field" / "*" / "*")) if os.path.getsize(p) < 200_000)
)


@pytest.mark.parametrize("seed", range(60))
def test_a_mutant_split_with_bodies_read_late_is_answered_as_serially(seed, defer_all):
    rng = random.Random(seed)
    text = rng.choice(BASES)
    for _ in range(rng.randint(1, 3)):
        text = mutate(text, rng)
    args = ["analyze", "-", "--format", "json", "--direction", "both"]
    serial = _analysed([*args, "-j", "1"], text)
    assert _analysed([*args, "-j", "2"], text) == serial, f"seed {seed}"
