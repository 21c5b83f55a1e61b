"""The layout picture, read back from captured Rich output and SVG, equals the offsets."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from layout.helpers import tiled_shapes
from rich.console import Console

from hlo_index.hlo.shapes import parse_shape_text
from hlo_index.layout import physical_offsets
from hlo_index.render.layout_picture import PADDING_MARK, ROW_LABEL_END, TILE_COLOURS, render_svg, render_text
from hlo_index.report.layout_picture import PALETTE_LIMIT, build_picture

ROW = re.compile(rf"^\s*(\d+) {ROW_LABEL_END}(.*)$")
TITLE = re.compile(r"^\[([\d, ]+), :, :\]$")


def read_grids(text: str) -> dict[tuple, list[list]]:
    """Grid rows from the captured picture: {leading index: [[offset or None, ...], ...]}."""
    grids: dict[tuple, list[list]] = {}
    current: tuple = ()
    for line in text.splitlines():
        title = TITLE.match(line.strip())
        if title:
            current = tuple(int(v) for v in title.group(1).split(","))
            continue
        row = ROW.match(line)
        if row:
            cells = re.findall(rf"\d+|{PADDING_MARK}", row.group(2))
            grids.setdefault(current, []).append([None if c == PADDING_MARK else int(c) for c in cells])
    return grids


def captured(shape_text: str, **caps) -> str:
    console = Console(record=True, width=400, color_system=None)
    render_text(build_picture(parse_shape_text(shape_text), **caps), console)
    return console.export_text()


def assert_grids_match(shape, grids):
    offsets = physical_offsets(shape)
    view = offsets.reshape((1,) * max(0, 2 - shape.rank) + offsets.shape)
    for lead, rows in grids.items():
        plane = view[lead] if lead else view.reshape(view.shape[-2:])
        for r, row in enumerate(rows):
            real = [c for c in row if c is not None]
            assert row[: len(real)] == real  # padding only after the real cells of a row
            if r < plane.shape[0]:
                assert real == plane[r, : len(real)].tolist()
                assert len(real) == plane.shape[1]
            else:
                assert real == []  # a whole padding row


def test_spec_figure_1_picture():
    text = captured("F32[3,5]{1,0:T(2,2)}")
    grids = read_grids(text)
    assert grids[()][2][3] == 17
    assert grids[()] == [[0, 1, 4, 5, 8, None], [2, 3, 6, 7, 10, None], [12, 13, 16, 17, 20, None], [None] * 6]
    assert "physical elements: 24" in text


def test_spec_figure_2_picture_draws_nested_tiles():
    text = captured("bf16[4,8]{1,0:T(2,4)(2,1)}")
    assert read_grids(text)[()][1] == [1, 3, 5, 7, 9, 11, 13, 15]
    assert "│" in text and "┃" in text and "━" in text


def test_rank_3_draws_one_grid_per_leading_index_and_caps():
    shape_text = "f32[5,3,4]{0,2,1:T(2,2)}"
    text = captured(shape_text, max_grids=3)
    grids = read_grids(text)
    assert sorted(grids) == [(0,), (1,), (2,)]
    assert_grids_match(parse_shape_text(shape_text), grids)
    assert "2 more grids not shown" in text


def test_large_grids_are_cropped_with_a_note():
    text = captured("f32[100,100]{1,0:T(8,128)}", max_rows=10, max_cols=12)
    grids = read_grids(text)
    assert len(grids[()]) == 10 and all(len(r) == 12 for r in grids[()])
    assert "first 10 rows and 12 columns" in text


@settings(deadline=None, derandomize=True, max_examples=100)
@given(tiled_shapes(max_rank=4, max_elements=200))
def test_random_pictures_show_the_offsets(shape):
    console = Console(record=True, width=1000, color_system=None)
    render_text(build_picture(shape, max_grids=50), console)
    grids = read_grids(console.export_text())
    assert grids
    assert_grids_match(shape, grids)


def test_svg_numbers_equal_the_offsets():
    shape = parse_shape_text("f32[3,5]{1,0:T(2,2)}")
    root = ET.fromstring(render_svg(build_picture(shape)))
    ns = "{http://www.w3.org/2000/svg}"
    numbers = sorted(int(t.text) for t in root.iter(f"{ns}text") if t.get("class") == "offset")
    assert numbers == sorted(physical_offsets(shape).ravel().tolist())
    padding = [r for r in root.iter(f"{ns}rect") if r.get("class") == "padding"]
    assert len(padding) == 4 * 6 - 15


def test_every_palette_slot_the_report_uses_has_a_colour():
    assert len(TILE_COLOURS) == PALETTE_LIMIT
