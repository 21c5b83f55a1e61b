"""The JSON text worker processes encoded reaches stdout as the same bytes, whatever stdout is: a
file or a pipe (copied by the kernel), a text buffer (read and written as text), a reader that
leaves halfway (the output stops, nothing raised)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hlo_index.cli.output import SafeStream
from hlo_index.report.model import EncodedElsewhere

ROOT = Path(__file__).resolve().parents[2]
# a GPU dump whose fusions are shared with a worker when the split is forced (tests/report)
DUMP = ROOT.parent / "shared" / "field" / "gpu" / "HLO_breakdown.tf_bert_fp16_baseline_bw.gpu_after_optimizations.txt"


def _encoded(spill, text: bytes, before: bytes = b"#" * 10) -> EncodedElsewhere:
    spill.write(before + text + b"!" * 10)
    spill.flush()
    encoded = EncodedElsewhere(1, len(before), len(text))
    encoded.file = spill
    return encoded


def test_a_text_file_gets_the_bytes_copied_between_its_own_writes(tmp_path):
    path = tmp_path / "out.json"
    text = b'{"a": [1, 2, "\\u00e9"]}' * 5000
    with open(path, "w", encoding="utf-8") as stream:
        out = SafeStream(stream)
        out.write("[")
        with tempfile.TemporaryFile() as spill:
            _encoded(spill, text).write_to(out)
        out.write("]")
        out.flush()
    assert path.read_bytes() == b"[" + text + b"]"


def test_a_text_buffer_gets_the_text_written():
    buffer = io.StringIO()
    out = SafeStream(buffer)
    assert out.copy_range(io.BytesIO(), 0, 5) == 0  # no file descriptor: nothing copied
    out.write("<")
    with tempfile.TemporaryFile() as spill:
        _encoded(spill, b'"x"').write_to(out)
    assert buffer.getvalue() == '<"x"'


def test_a_reader_that_leaves_stops_the_copy_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "w") as stream:
        out = SafeStream(stream)
        with tempfile.TemporaryFile() as spill:
            encoded = _encoded(spill, b"0" * 100_000)
            assert out.copy_range(encoded.file, encoded.offset, encoded.length) == encoded.length
        assert out.broken
        out.write("more")  # ignored, as every write after the reader left


def test_the_document_is_the_same_through_a_pipe_a_file_and_a_text_buffer(tmp_path):
    if not DUMP.exists():
        import pytest

        pytest.skip(f"{DUMP} not present")
    code = (
        "import sys; from hlo_index.report import split_targets as s; "
        "s.MIN_WORK_TO_SPLIT = 0; s.usable_workers = lambda asked: asked; "
        "from hlo_index.cli import main; sys.exit(main(sys.argv[1:], standalone_mode=False))"
    )
    args = [sys.executable, "-c", code, "analyze", str(DUMP), "--format", "json", "-j", "2"]
    piped = subprocess.run(args, capture_output=True, check=True).stdout
    path = tmp_path / "out.json"
    with open(path, "wb") as f:
        subprocess.run(args, stdout=f, check=True)
    from click.testing import CliRunner

    from hlo_index.cli import main

    serial = CliRunner().invoke(main, ["analyze", str(DUMP), "--format", "json", "-j", "1"]).stdout_bytes
    assert len(piped) > 100_000
    assert piped == path.read_bytes() == serial


def test_a_long_text_reaches_the_stream_in_pieces_of_bounded_length(monkeypatch):
    """stdout drops what is past 2 GiB of one write: a longer text goes in pieces, none longer
    than ``MOST_PER_WRITE`` (made small here), together the text, multi-byte characters whole."""
    from hlo_index.cli import output

    monkeypatch.setattr(output, "MOST_PER_WRITE", 7)
    pieces: list[str] = []

    class Recording(io.StringIO):
        def write(self, text: str, /) -> int:
            pieces.append(text)
            return super().write(text)

    stream = Recording()
    text = "é→ab" * 11
    SafeStream(stream).write(text)
    assert stream.getvalue() == text
    assert len(pieces) == 7 and max(map(len, pieces)) == 7
    SafeStream(stream).write("short")
    assert pieces[-1] == "short"
