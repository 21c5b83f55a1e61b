"""``TextWriter.write``: lines written a batch at a time read as one newline-ended line each."""

from __future__ import annotations

from io import StringIO

from hlo_index.render.text import WRITE_BATCH, TextWriter


class _CountingSink(StringIO):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def write(self, text: str, /) -> int:
        self.calls += 1
        return super().write(text)


def test_lines_across_batches_are_each_newline_ended():
    out = _CountingSink()
    lines = [f"line {i}" for i in range(2 * WRITE_BATCH + 3)]
    TextWriter(out, color=False).write(iter(lines))
    assert out.getvalue() == "".join(f"{line}\n" for line in lines)
    assert out.calls == 3  # two full batches and the rest: never one string of every line


def test_a_batch_exactly_full_and_nothing_at_all():
    out = _CountingSink()
    writer = TextWriter(out, color=False)
    writer.write(["x"] * WRITE_BATCH)
    assert out.getvalue() == "x\n" * WRITE_BATCH and out.calls == 1
    writer.write([])  # an empty list writes an empty line, as joining it always did
    assert out.getvalue().endswith("x\n\n")


class _LeavingReader(_CountingSink):
    """A sink whose reader leaves after the first write, as ``SafeStream`` says (``broken``)."""

    broken = False

    def write(self, text: str, /) -> int:
        n = super().write(text)
        self.broken = True
        return n


def test_lines_stop_when_the_reader_has_gone():
    made = []

    def lines():
        for i in range(5 * WRITE_BATCH):
            made.append(i)
            yield "x"

    out = _LeavingReader()
    TextWriter(out, color=False).write(lines())
    assert out.calls == 1 and len(made) == WRITE_BATCH  # the other lines are never made
