"""The direct reader (``hlo/reader.py``) and the grammar (Lark's LALR parser over ``grammar/hlo.lark``)
give the same model for the text the reader takes; the grammar alone reads the rest. Under
``make conformance`` this is checked on every real module: XLA's own HLO texts, the CPU corpus and
the field's accelerator dumps (files the reader declines are read by the grammar anyway)."""

from __future__ import annotations

import gzip
import multiprocessing
import os
from pathlib import Path

import pytest

from hlo_index.context import AnalysisContext
from hlo_index.hlo import parser, reader
from hlo_index.hlo.diagnostics import ParseError
from hlo_index.hlo.lexer import LexError
from hlo_index.hlo.parser import parse_shape, parse_syntax

SHARED = Path(__file__).resolve().parents[3] / "shared"
XLA_HLO = SHARED / "conformance" / "xla_hlo"
SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.hlo.txt"))

FORMS = """HloModule forms, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, s32[])}

FileNames
1 "model.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=1 end_column=2}
StackFrames
1 {file_location_id=1 parent_frame_id=0}

%nested (t: (f32[4], (s32[], f32[])), u: f32[2]) -> ((f32[4]), s32[]) {
  %t = (f32[4]{0}, (s32[], f32[])) parameter(0)
  %u = f32[2]{0} parameter(1)
  %g = f32[4]{0} get-tuple-element((f32[4]{0}, (s32[], f32[])) %t), index=0
  %h = (s32[], f32[]) get-tuple-element(%t), index=1
  %i = s32[] get-tuple-element(%h), index=0
  %w = (f32[4]{0}) tuple(%g)
  ROOT %r = ((f32[4]{0}), s32[]) tuple(%w, %i)
}

%empty () -> () {
  ROOT %e = () tuple()
}, execution_thread="host"

ENTRY %main (p: f32[4]) -> (f32[4], s32[]) {
  %p = f32[4]{0} parameter(0), metadata={op_name="jit(f)/p" stack_frame_id=1}
  %c = s32[] constant(3)
  %z = f32[] constant(0)
  %s = f32[] reduce(%p, %z), dimensions={0}, to_apply={
    %a = f32[] parameter(0)
    %b = f32[] parameter(1)
    ROOT %m = f32[] maximum(%a, %b)
  }
  %d = f32[2]{0} slice(f32[4]{0} %p), slice={[0:2]}
  %n = (f32[4]{0}, (s32[], f32[])) tuple(%p, (s32[], f32[]) tuple(%c, %s))
  %k = ((f32[4]{0}), s32[]) call(%n, %d), to_apply=%nested
  %v = f32[4]{0} custom-call(%p), custom_call_target="x", backend_config={"k": {"v": [1, 2]}}
  %e = () call(), to_apply=%empty
  %n2 = (s32[], f32[]) tuple(%c, %s)
  %tl = (f32[4]{0:T(4)}, /*index=1*/(s32[], f32[])) tuple(%p, %n2)
  %tg = f32[4]{0:T(4)} get-tuple-element((f32[4]{0:T(4)}, /*index=1*/(s32[], f32[])) %tl), index=0
  %tw = f32[4]{0:T(4)} get-tuple-element((f32[4]{0:T(4)}, (s32[],f32[])) %tl), index=0
  %dp = ((f32[4]{0:T(4)}, (s32[], f32[])), s32[]) tuple(%tl, %c)
  ROOT %o = (f32[4]{0}, s32[]) tuple(%v, %c)
}
"""

# Computation headers as dumps write them (read in one match: a name with '%', a flat signature, the
# '{'), one after another's closing brace, and the forms beside them that the tokens read one by one.
HEADERS = """HloModule headers

%first (a: f32[2]) -> f32[2] {
  ROOT %a = f32[2]{0} parameter(0)
}
%second: (b: f32[2]) -> f32[2]{
  ROOT %b = f32[2]{0} parameter(0)
}, execution_thread="host"

%third /* a comment */ (c: f32[2]) -> f32[2] {
  ROOT %c = f32[2]{0} parameter(0)
}
%fourth (d: f32[2]) -> f32[2], execution_thread="host" {
  ROOT %d = f32[2]{0} parameter(0)
}
fifth (e: f32[2]) -> f32[2] {
  ROOT %e = f32[2]{0} parameter(0)
}
%sixth (f: (f32[2], s32[])) -> f32[2] {
  %f = (f32[2]{0}, s32[]) parameter(0)
  ROOT %g = f32[2]{0} get-tuple-element(%f), index=0
}

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %q = f32[2]{0} call(%p), to_apply=%first
  %r = f32[2]{0} call(%q), to_apply=%second
  %s = f32[2]{0} call(%r), to_apply=%third
  %t = f32[2]{0} call(%s), to_apply=%fourth
  ROOT %u = f32[2]{0} call(%t), to_apply=fifth
}
"""


def _model(text: str) -> list[tuple]:
    """Everything the parser builds for ``text``, as plain values (linked objects left out)."""
    out = []
    with AnalysisContext():
        for module in parse_syntax(text, "<t>"):
            comps = []
            for comp in module.computations:
                instrs = [
                    (
                        i.name,
                        i.opcode,
                        i.shape,
                        i.operand_names,
                        repr(sorted(i.attrs.items())),
                        i.metadata,
                        i.is_root,
                        i.line,
                        i.column,
                        i.parameter_number,
                        i.literal,
                    )
                    for i in comp.instructions
                ]
                comps.append((comp.name, comp.is_entry, comp.result_shape, comp.execution_thread, comp.line, instrs))
            entry = module.entry.name if module.entry else None
            out.append((module.name, sorted(module.attrs.items()), entry, repr(module.stack_frames), comps))
    return out


def _declined(*_args, **_kwargs):
    raise reader.Declined


def _no_grammar():
    raise AssertionError("the grammar was asked to read text the direct reader takes")


@pytest.mark.parametrize(
    "text", [FORMS, HEADERS, *(p.read_text() for p in SAMPLES)], ids=["forms", "headers", *(p.name for p in SAMPLES)]
)
def test_direct_reader_builds_what_the_grammar_builds(text, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(parser, "_lark", _no_grammar)
        direct = _model(text)
    with monkeypatch.context() as m:
        m.setattr(parser, "read_module", _declined)
        m.setattr(parser, "read_shape", _declined)
        grammar = _model(text)
    assert direct == grammar
    assert direct and direct[0][4]


@pytest.mark.parametrize("text", ["(f32[2]{0}, (s32[], b(u8[4])))", "()", "f32[3,<=4]{1,0}", "b(s32[2])"])
def test_direct_shape_reading_is_the_grammars(text, monkeypatch):
    with AnalysisContext():
        direct = parse_shape(text)
    with monkeypatch.context() as m, AnalysisContext():
        m.setattr(parser, "read_shape", _declined)
        assert parse_shape(text) == direct


def test_text_outside_the_direct_readers_subset_is_read_by_the_grammar():
    # no HloModule header: the grammar's header-less form
    text = "ENTRY %e (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n"
    with AnalysisContext():
        (module,) = parse_syntax(text)
    assert module.name == "e" and [i.name for i in module.entry.instructions] == ["p"]


REJECTIONS = (ParseError, LexError, ValueError)


class _GrammarAsked(Exception):
    pass


def _refuse_grammar():
    raise _GrammarAsked


def _decline(*_args, **_kwargs):
    raise reader.Declined


def compare(path: str) -> tuple[str, str]:
    """("same" | "declined" | "differs" | "rejected", detail) for one file."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        text = f.read()
    saved = parser._lark, parser.read_module, parser.read_shape
    try:
        parser._lark = _refuse_grammar
        try:
            direct = _model(text)
        except _GrammarAsked:
            direct = None
        except REJECTIONS as exc:  # the grammar must reject it too
            direct = f"error: {exc}"
        parser._lark, parser.read_module, parser.read_shape = saved[0], _decline, _decline
        try:
            grammar = _model(text)
        except REJECTIONS as exc:
            grammar = f"error: {exc}"
    finally:
        parser._lark, parser.read_module, parser.read_shape = saved
    if direct is None:
        return ("rejected" if isinstance(grammar, str) else "declined"), ""
    if isinstance(direct, str) and isinstance(grammar, str):
        return "rejected", ""
    if direct != grammar:
        return "differs", f"{str(direct)[:200]} != {str(grammar)[:200]}"
    return "same", ""


def real_modules() -> list[str]:
    files = sorted(str(p) for p in XLA_HLO.rglob("*") if p.is_file() and p.suffix in (".hlo", ".txt", ".gz"))
    for tree in ("corpus", "field"):
        files += sorted(
            str(p) for p in (SHARED / tree).rglob("*") if p.is_file() and not p.name.endswith((".md", ".json", ".tsv"))
        )
    return files


@pytest.mark.skipif(
    os.environ.get("HLO_INDEX_CONFORMANCE") != "1" or not XLA_HLO.is_dir(), reason="run with `make conformance`"
)
def test_direct_reader_builds_what_the_grammar_builds_on_real_modules():
    files = real_modules()
    with multiprocessing.get_context("fork").Pool(max(1, min(4, os.cpu_count() or 1))) as pool:
        results = dict(zip(files, pool.map(compare, files, chunksize=8)))
    differs = [f"{f}: {detail}" for f, (kind, detail) in results.items() if kind == "differs"]
    assert not differs, "\n".join(differs[:10])
    # the reader exists for the form XLA dumps: it takes every dump of the corpus and the field
    # (one of which is rejected by XLA, and by both readers)
    dumps = [f for f in files if not f.startswith(str(XLA_HLO))]
    declined = [f for f in dumps if results[f][0] not in ("same", "rejected")]
    assert dumps and not declined, declined


@pytest.mark.parametrize(
    "line, kind",
    [
        ("%t = (f32[4]{0}, s32[]) tuple(%p, %c)", "INSTRS"),  # a tuple result: a common instruction
        ("%t = (f32[4]{0:T(4)}, (s32[], f32[])) tuple(%p, %n)", "INSTRS"),  # parentheses two deep
        ("%t = ((f32[4]{0:T(4)}, s32[]), s32[]) tuple(%p, %c)", "DEF"),  # three deep: token by token
        ("%t = b(s32[2]) custom-call(%p)", "DEF"),  # a buffer result
    ],
)
def test_tuple_result_shapes_up_to_two_parentheses_deep_are_common_instructions(line, kind):
    from hlo_index.hlo.lexer import Source, tokenize

    assert next(tokenize(Source(line))).type == kind


@pytest.mark.parametrize(
    "text",
    [
        "(f32[2]{0}, s32[])",
        "(f32[8,128]{1,0:T(8,128)}, bf16[4] {0}, s8[], u8[], pred[], /*index=5*/f32[1,2]{0,1})",
        "( f32[2] )",
        "()",
        "(f32[2], (s32[]))",  # nested: the reader's token-by-token way
        "(f32[2], q32[3])",  # no such element type: worded by the grammar's way
    ],
)
def test_tuple_shape_texts_are_read_as_the_grammar_reads_them(text):
    from hlo_index.hlo.lexer import Source

    with AnalysisContext():
        try:
            direct = parser._shape_from_text(text)
        except Exception as exc:  # noqa: BLE001  the grammar must reject it too, the same way
            direct = type(exc)
        try:
            grammar = parser._lark().parse(Source(text), start="shape")
        except Exception as exc:  # noqa: BLE001
            grammar = type(exc)
    assert direct == grammar
