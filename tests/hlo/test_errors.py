"""Errors: positions and messages, pathological inputs, loading from files/dirs/gz/stdin, never a traceback."""

from __future__ import annotations

import gzip
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import ParseError, format_diagnostic, load, parse_module_text, parse_modules_text

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "samples")
GOOD = "HloModule m\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n}\n"


def diagnostic_of(text: str):
    try:
        parse_module_text(text, "x.hlo")
    except ParseError as e:
        return e.diagnostic
    raise AssertionError("expected a ParseError")


def test_syntax_error_position_message_and_caret():
    d = diagnostic_of(GOOD.replace("negate(%p)", "negate(%p) junk"))
    assert (d.path, d.line, d.column) == ("x.hlo", 5, 31)
    assert "junk" in d.message
    text = format_diagnostic(d)
    first, source, caret = text.split("\n")
    assert first.startswith("x.hlo:5:31: error: ")
    assert source == "  ROOT %n = f32[4] negate(%p) junk"
    assert caret.index("^") == source.index("junk")


def test_bad_character_position():
    d = diagnostic_of(GOOD.replace("%p = f32[4]", "%p = f32[4] @"))
    assert (d.line, d.column) == (4, 15) and "'@'" in d.message


def test_empty_and_blank_input():
    for text in ("", "   \n\n  "):
        d = diagnostic_of(text)
        assert "empty" in d.message and d.line == 1


def test_huge_dimensions_are_refused_cleanly():
    d = diagnostic_of(GOOD.replace("f32[4] parameter", "f32[100000000000000000000000] parameter"))
    assert "int64" in d.message and d.line == 4
    d = diagnostic_of(GOOD.replace("f32[4] parameter", "f32[100000000000,1000000000000] parameter"))
    assert "elements" in d.message


def test_a_broken_parameter_late_in_a_long_signature_is_found_where_it_is():
    # each ", " between parameters must be read one way only: a signature regex that could give a
    # comma's blank to either side had 2^60 ways to fail here, and never returned
    params = [f"p{k}: f32[768]" for k in range(64)]
    params[60] = "p60: f3-5[768]"
    body = "".join(f"  p{k} = f32[768] parameter({k})\n" for k in range(64))
    text = f"HloModule m\n\n%c ({', '.join(params)}) -> f32[768] {{\n{body}  ROOT r = f32[768] negate(p0)\n}}\n"
    text += "\nENTRY %main {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n}\n"
    d = diagnostic_of(text)
    assert d.line == 3 and d.column == text.split("\n")[2].index("f3-5") + 1, (d.line, d.column, d.message)


def test_deep_nesting_is_refused_cleanly():
    deep = "(" * 5000 + "f32[]" + ")" * 5000
    d = diagnostic_of(GOOD.replace("f32[4] parameter", deep + " parameter"))
    assert "nested deeper" in d.message
    braces = "{" * 5000 + "}" * 5000  # deep but balanced raw attribute: fine, kept raw
    m = parse_module_text(GOOD.replace("negate(%p)", f"negate(%p), odd={braces}"))
    assert m.entry.root.attrs["odd"] == braces
    d = diagnostic_of(GOOD.replace("negate(%p)", "negate(%p), odd=" + "{" * 5000))
    assert "unterminated" in d.message


def test_deeply_nested_inline_computations_are_refused_cleanly():
    inner = "ROOT %z = f32[] parameter(0)"
    for _ in range(100):
        inner = f"ROOT %z = f32[] call(), to_apply={{ {inner} }}"
    d = diagnostic_of(f"HloModule m\nENTRY %e {{\n {inner}\n}}\n")
    assert "nested deeper" in d.message


def test_binary_garbage_files(tmp_path):
    rng = random.Random(0)
    (tmp_path / "noise.hlo").write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    (tmp_path / "latin.hlo").write_bytes(b"HloModule m\n\xff\xfe")
    (tmp_path / "nul.hlo").write_bytes(b"HloModule m\n\x00\x01\x02")
    for name in ("noise.hlo", "latin.hlo", "nul.hlo"):
        results = load(str(tmp_path / name))
        assert len(results) == 1 and results[0].module is None
        d = results[0].diagnostics[0]
        assert d.severity == "error" and d.path.endswith(name)
    assert load(str(tmp_path / "latin.hlo"))[0].diagnostics[0].line == 2


@settings(deadline=None, derandomize=True, max_examples=300)
@given(
    st.text(
        alphabet=st.sampled_from(list("%=(){}[],:;<>?*/\"'\\\n -_.x0123456789abfsuROOTENTRYHloModule")), max_size=120
    )
)
def test_random_text_gives_parse_error_or_module(text):
    try:
        parse_module_text(text)
    except ParseError as e:  # parsing may as well succeed: pytest.raises does not fit
        assert e.diagnostic.severity == "error" and e.diagnostic.message  # noqa: PT017


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.data())
def test_damaged_real_dump_never_crashes(data):
    with open(os.path.join(SAMPLES, "conv1d_nwc_causal.before_optimizations.hlo.txt")) as f:
        text = f.read()
    start = data.draw(st.integers(0, len(text) - 1))
    length = data.draw(st.integers(1, 40))
    insert = data.draw(st.sampled_from(["", "{", "}", "(", ")", ",", '"', "%", "=", "[", "]", "ROOT ", "\n"]))
    damaged = text[:start] + insert + text[start + length :]
    try:
        parse_module_text(damaged)
    except ParseError as e:  # parsing may as well succeed: pytest.raises does not fit
        assert e.diagnostic.line >= 0 and e.diagnostic.message  # noqa: PT017


def test_load_gz_stdin_and_multi_module_file(tmp_path, monkeypatch):
    import io
    import sys

    gz = tmp_path / "a.hlo.txt.gz"
    with gzip.open(gz, "wt") as f:
        f.write(GOOD + GOOD.replace("HloModule m", "HloModule second"))
    results = load(str(gz))
    assert [r.module.name for r in results] == ["m", "second"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    results = load("-")
    assert results[0].module.name == "m" and results[0].path == "<stdin>"
    missing = load(str(tmp_path / "nope.txt"))
    assert missing[0].module is None and "cannot read" in missing[0].diagnostics[0].message


def test_damaged_gzip_file_is_an_error_of_the_file(tmp_path):
    """A .gz file whose compressed data is damaged (zlib's own error, not an OSError) is reported
    as a piped one is: "cannot read", the module unusable, never a traceback."""
    whole = gzip.compress((GOOD * 40).encode())
    damaged = whole[:12] + b"\xff" * 8 + whole[20:]  # the deflate stream's first bytes
    for name in ("a.hlo.txt.gz", "saved-without-suffix.txt"):
        path = tmp_path / name
        path.write_bytes(damaged)
        (result,) = load(str(path))
        assert result.module is None
        assert result.diagnostics[0].message.startswith("cannot read: corrupt gzip data: Error -3")


def test_dump_directory_skips_siblings_and_survives_a_broken_file(tmp_path):
    (tmp_path / "module_0001.jit_f.before_optimizations.txt").write_text(GOOD)
    (tmp_path / "module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt").write_text(GOOD.replace("negate", "abs"))
    (tmp_path / "module_0002.jit_g.before_optimizations.txt").write_text(GOOD.replace("ROOT %n", "ROOT %n = "))
    (tmp_path / "module_0001.jit_f.hlo_module_config.txt").write_text("HloModule config-ish text")
    (tmp_path / "module_0001.jit_f.sm_8.0_gpu_after_optimizations-buffer-assignment.txt").write_text("HloModule x")
    (tmp_path / "module_0001.jit_f.execution_options.txt").write_text("HloModule x")
    (tmp_path / "module_0001.jit_f.sm_8.0_gpu_after_optimizations-memory-usage-report.txt").write_text("HloModule x")
    (tmp_path / "module_0001.jit_f.after_optimizations.dot").write_text("digraph {}")
    (tmp_path / "notes.txt").write_text("not hlo at all")
    results = load(str(tmp_path))
    names = sorted(os.path.basename(r.path) for r in results)
    assert names == [
        "module_0001.jit_f.before_optimizations.txt",
        "module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt",
        "module_0002.jit_g.before_optimizations.txt",
    ]
    ok = [r for r in results if r.module is not None]
    bad = [r for r in results if r.module is None]
    assert len(ok) == 2 and len(bad) == 1 and bad[0].diagnostics[0].line == 5


def test_dump_directory_reports_a_module_dump_that_holds_no_module(tmp_path):
    # a crashed run can leave a module's dump empty or cut before its header: named as HLO
    # text, it is read and its error given, where a file of another name without a header is
    # passed over (notes, XLA's other siblings)
    (tmp_path / "module_0001.jit_f.before_optimizations.txt").write_text(GOOD)
    (tmp_path / "module_0002.jit_g.sm_8.0_gpu_after_optimizations.txt").write_text("")
    (tmp_path / "module_0003.jit_h.0004.simplification.after_algsimp.txt.gz").write_bytes(gzip.compress(b"garbage"))
    (tmp_path / "snippet.hlo").write_text("  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n")
    (tmp_path / "module_0001.jit_f.thunk_sequence.txt").write_text("")
    (tmp_path / "notes.txt").write_text("")
    results = load(str(tmp_path))
    by_name = {os.path.basename(r.path): r for r in results}
    assert sorted(by_name) == [
        "module_0001.jit_f.before_optimizations.txt",
        "module_0002.jit_g.sm_8.0_gpu_after_optimizations.txt",
        "module_0003.jit_h.0004.simplification.after_algsimp.txt.gz",
        "snippet.hlo",
    ]
    empty = by_name["module_0002.jit_g.sm_8.0_gpu_after_optimizations.txt"]
    assert empty.module is None and "empty input" in empty.diagnostics[0].message
    cut = by_name["module_0003.jit_h.0004.simplification.after_algsimp.txt.gz"]
    assert cut.module is None and (cut.diagnostics[0].line, cut.diagnostics[0].column) == (1, 8)
    assert by_name["snippet.hlo"].module.entry.root.opcode == "negate"


def test_bad_attribute_column_points_at_that_attribute():
    d = diagnostic_of(GOOD.replace("negate(%p)", "negate(%p), index=1, dimensions={x}"))
    assert (d.line, d.column) == (5, 41) and "dimensions" in d.message
    d = diagnostic_of(GOOD.replace("f32[4] parameter", "f32[4]{3} parameter"))
    assert (d.line, d.column) == (4, 15) and "permutation" in d.message  # at the layout's "3"


def test_crlf_line_endings():
    crlf = GOOD.replace("\n", "\r\n")
    assert parse_module_text(crlf).entry.root.opcode == "negate"
    d = diagnostic_of(crlf.replace("negate(%p)", "negate(%p) junk"))
    assert (d.line, d.column) == (5, 31) and d.source_line == "  ROOT %n = f32[4] negate(%p) junk"


def test_a_broken_module_does_not_hide_the_others_in_its_file(tmp_path):
    broken = GOOD.replace("HloModule m", "HloModule broken").replace("negate(%p)", "negate(%p) junk")
    cut = "HloModule cut\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n"  # ends mid-computation
    path = tmp_path / "many.hlo"
    path.write_text(
        GOOD
        + broken
        + GOOD.replace("HloModule m", "HloModule third")
        + cut
        + GOOD.replace("HloModule m", "HloModule last")
    )
    results = load(str(path))
    assert [r.module.name if r.module else None for r in results] == ["m", None, "third", None, "last"]
    d = results[1].diagnostics[0]
    assert (d.line, d.column) == (11, 31) and "junk" in d.message and d.path == str(path)
    d = results[3].diagnostics[0]
    assert "end of input" in d.message and d.line == 22  # after the cut module's last line, not in "last"
    with pytest.raises(ParseError):  # the strict API still refuses the file
        parse_modules_text(path.read_text())


_FUZZ_SOURCES = ["conv1d_nwc_causal.before_optimizations.hlo.txt", "cond_switch_while.after_optimizations.hlo.txt"]


def _mutate(data, raw: bytes) -> bytes:
    """One of: flipped bytes, a truncation, duplicated / dropped / swapped lines, or two modules
    concatenated with damage in one of them (exercises per-module recovery)."""
    kind = data.draw(st.sampled_from(["flip", "truncate", "duplicate", "drop", "swap", "concat"]))
    if kind == "flip":
        out = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(out) - 1))
            out[i] ^= 1 << data.draw(st.integers(0, 7))
        return bytes(out)
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, len(raw) - 1))]
    lines = raw.split(b"\n")
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(0, len(lines) - 1))
    if kind == "duplicate":
        lines.insert(j, lines[i])
    elif kind == "drop":
        del lines[i]
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    else:
        damaged = b"\n".join(lines[:i] + lines[i + 1 :])
        return raw + damaged if data.draw(st.booleans()) else damaged + raw
    return b"\n".join(lines)


@settings(deadline=None, derandomize=True, max_examples=250)
@given(st.data())
def test_mutated_real_dumps_give_modules_or_clean_diagnostics(data):
    import tempfile

    name = data.draw(st.sampled_from(_FUZZ_SOURCES))
    with open(os.path.join(SAMPLES, name), "rb") as f:
        raw = f.read()
    mutated = _mutate(data, raw)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutated.hlo.txt")
        with open(path, "wb") as f:
            f.write(mutated)
        results = load(path)
    assert results
    for r in results:
        if r.module is None:
            assert r.diagnostics and all(d.severity == "error" and d.message for d in r.diagnostics)
            assert not any(d.message.startswith("internal parser error") for d in r.diagnostics), r.diagnostics
        for d in r.diagnostics:
            assert d.line >= 0 and d.column >= 0
            text = format_diagnostic(d)
            assert text.startswith(path)


def test_truncated_module_points_at_the_end_of_its_last_line():
    """A module cut off inside a computation: the caret sits after the last real text, not on a
    line past the end of the file (which has no text to show)."""
    from hlo_index.hlo import ParseError, parse_module_text

    text = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(p)\n\n"
    try:
        parse_module_text(text, "t.hlo")
    except ParseError as exc:
        d = exc.diagnostic
        assert (d.line, d.column) == (4, len("  ROOT r = f32[4] negate(p)") + 1)
        assert "end of input" in d.message
    else:
        raise AssertionError("a truncated module must not parse")


def test_malformed_shape_in_a_computation_signature_is_reported_there():
    # XLA (jaxlib 0.10.2) on a TF-ROCm dump: "was parsing 3:18: error: expects integer", at the '(' of
    # the signature's "f16[(0),8]", before the parameter instruction that repeats the shape
    text = (
        "HloModule m\n\n%f (param_0: f16[(0),8]) -> f16[8] {\n  %param_0 = f16[(0),8]{1,0} parameter(0)\n"
        "  ROOT %n = f16[8] negate(%param_0)\n}\n\nENTRY %e (p: f16[8]) -> f16[8] {\n"
        "  %p = f16[8] parameter(0)\n  ROOT %c = f16[8] call(%p), to_apply=%f\n}\n"
    )
    d = diagnostic_of(text)
    assert (d.line, d.column) == (3, 18), d
    assert "(0)" in d.message


# Operand text with parentheses (a tuple shape, a nested instruction) inside an instruction that
# the lexer reads whole: a problem in it is pinned where the operand text says, not at the line.
TUPLE_OPERAND = (
    "HloModule m\n\nENTRY %main {\n  %p = f32[2]{0} parameter(0)\n  %q = f32[3]{0} parameter(1)\n"
    "  %t = (f32[2]{0}, f32[3]{0}) tuple(%p, %q)\n"
    "  ROOT %g = f32[2]{0} get-tuple-element((f32[2]{0}, f32[3]{0}) %t), index=0\n}\n"
)


def test_tuple_shaped_operand_reads_and_checks():
    module = parse_module_text(TUPLE_OPERAND, "x.hlo")
    g = module.entry.by_name["g"]
    assert g.operand_names == ("t",) and g.attrs["index"] == 0
    d = diagnostic_of(TUPLE_OPERAND.replace("f32[3]{0}) %t)", "f32[4]{0}) %t)"))
    assert (d.line, d.column) == (7, 8) and "not compatible" in d.message  # at the instruction's name


def test_malformed_operand_positions_inside_a_common_instruction():
    source = TUPLE_OPERAND.replace("f32[3]{0}) %t)", "f32[3]{0} %t)")  # the tuple shape's ')' is missing
    d = diagnostic_of(source)
    line = source.splitlines()[d.line - 1]
    # the operand that cannot be read starts at the '(' after the opcode's own
    assert "malformed operands of %g" in d.message and line[d.column - 1 :].startswith("(f32[2]{0}, f32[3]{0} %t)")
    source = GOOD.replace("negate(%p)", "add(f32[4] negate(f32[4] %p %q), %p)")
    d = diagnostic_of(source)
    line = source.splitlines()[d.line - 1]
    # the nested instruction's operands go wrong at the second name
    assert "expected ',' or ')'" in d.message and line[d.column - 1 :].startswith("%q")


def test_an_unterminated_string_before_many_strings_is_rejected_at_once():
    # a damaged dump: the string of one metadata runs into the next lines, whose attributes hold many
    # more strings; the lexer's patterns read each string one way only, so the failing match is not
    # retried once per way and string (2**60 tries here)
    lines = [f'  %c{k} = f32[] constant({k}), metadata={{op_name="c{k}" source_file="f.py"}}' for k in range(30)]
    text = (
        "HloModule m\n\nENTRY e {\n"
        '  %p = f32[] parameter(0), metadata={op_name="jit(f)/broken source_line=2}\n'
        + "\n".join(lines)
        + "\n  ROOT %r = f32[] negate(%p)\n}\n"
    )
    d = diagnostic_of(text)
    assert d.line == 4 and "unterminated string" in d.message, d
