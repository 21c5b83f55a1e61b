"""Rows of a whole computation as columns (``RowTable``): the order the API promises, one row per
operand an output does not read, one per element read of a tuple operand, and row objects equal
to the columns."""

from __future__ import annotations

from hlo_index.fusion import input_to_output, input_to_output_table, output_to_input, output_to_input_table
from hlo_index.hlo import parse_module_text

FLAT = """HloModule flat

ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  s = f32[4] add(a, a)
  ROOT t = (f32[4], f32[4]) tuple(s, b)
}
"""

TUPLED = """HloModule tupled

ENTRY main {
  p = (s32[], f32[4], f32[4]) parameter(0)
  q = f32[4] parameter(1)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  y = f32[4] get-tuple-element(p), index=2
  xy = f32[4] add(x, y)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i, xy, y)
}
"""


def _entry(text: str):
    return parse_module_text(text).entry


def _shape(rows) -> list[tuple[int, int, int, int]]:
    return [(r.output, r.operand, r.operand_element, len(r.maps)) for r in rows]


def _columns(table) -> list[tuple[int, int, int, int]]:
    return [(o, p, e, len(m)) for o, p, e, m in zip(table.outputs, table.operands, table.elements, table.maps)]


def test_every_operand_has_a_row_per_output_read_or_not():
    comp = _entry(FLAT)
    # (output, operand, element, maps): output 0 reads a only, output 1 reads b only; c is never read
    expected = [(0, 0, 0, 1), (0, 1, 0, 0), (0, 2, 0, 0), (1, 0, 0, 0), (1, 1, 0, 1), (1, 2, 0, 0)]
    assert _shape(output_to_input(comp)) == expected
    assert _columns(output_to_input_table(comp)) == expected


def test_a_tuple_operand_has_a_row_per_element_read():
    comp = _entry(TUPLED)
    # output 0 reads element 0 of p; output 1 elements 1 and 2; output 2 element 2; q is never read
    expected = [
        (0, 0, 0, 1),
        (0, 1, 0, 0),
        (1, 0, 1, 1),
        (1, 0, 2, 1),
        (1, 1, 0, 0),
        (2, 0, 2, 1),
        (2, 1, 0, 0),
    ]
    assert _shape(output_to_input(comp)) == expected
    assert _columns(output_to_input_table(comp)) == expected


def test_input_to_output_rows_go_operand_by_operand():
    comp = _entry(TUPLED)
    # (output, operand, element, maps), ordered by operand, then element of a tuple operand, then output
    expected = [
        (0, 0, 0, 1),
        (1, 0, 0, 0),
        (2, 0, 0, 0),
        (0, 0, 1, 0),
        (1, 0, 1, 1),
        (2, 0, 1, 0),
        (0, 0, 2, 0),
        (1, 0, 2, 1),
        (2, 0, 2, 1),
        (0, 1, 0, 0),
        (1, 1, 0, 0),
        (2, 1, 0, 0),
    ]
    assert _shape(input_to_output(comp)) == expected
    assert _columns(input_to_output_table(comp)) == expected


def test_row_objects_are_the_columns():
    comp = _entry(TUPLED)
    table = output_to_input_table(comp)
    rows = table.rows()
    assert len(table) == len(rows)
    for i, row in enumerate(rows):
        assert row == table.row(i)
        assert row.maps is table.maps[i]
