"""The layout picture as Rich text and as SVG.

Cells are coloured by first-level tile; tile edges are drawn thick, edges of later (nested)
tiles thin and red; padding added to fill whole tiles shows as ``·``.
"""

from __future__ import annotations

from html import escape

import numpy as np
from rich.console import Console
from rich.text import Text

from ..report.layout_picture import Grid, LayoutOffsets, LayoutPicture

PADDING_MARK = "·"
ROW_LABEL_END = "┊"
# one colour per palette slot the report may use (report.layout_picture.PALETTE_LIMIT)
TILE_COLOURS = (
    "#cfe8ff",
    "#ffe0b3",
    "#d4f7d4",
    "#f7d4f0",
    "#fff6b3",
    "#d9d2ff",
    "#c8f0ec",
    "#ffd1d1",
    "#e6e6e6",
    "#f0dcc8",
    "#d0f0ff",
)
NESTED_EDGE = "#d62728"


def _colour(picture: LayoutPicture, tile: int) -> str | None:
    if tile < 0:
        return None
    return TILE_COLOURS[tile % picture.colours]


# ---- Rich text -------------------------------------------------------------------------


def render_text(picture: LayoutPicture, console: Console) -> None:
    console.print(Text(picture.shape_text, style="bold"))
    padding = picture.physical_elements - picture.real_elements
    console.print(
        Text(f"physical elements: {picture.physical_elements} ({picture.real_elements} elements, {padding} padding)")
    )
    console.print(Text("map: " + picture.map_text), soft_wrap=True)  # one line, never split inside an interval
    for grid in picture.grids:
        console.print()
        if grid.title:
            console.print(Text(grid.title, style="bold"))
        for line in _grid_lines(picture, grid):
            console.print(line, soft_wrap=True, overflow="ignore", crop=False)
    for note in picture.notes:
        console.print(Text("note: " + note, style="italic"))


def _grid_lines(picture: LayoutPicture, grid: Grid) -> list[Text]:
    rows, cols = grid.offsets.shape
    width = max(len(str(int(grid.offsets.max()))), len(str(cols - 1)), 1)
    label = len(str(rows - 1))
    header = Text(" " * (label + 2))
    for c in range(cols):
        header.append(f"{c:>{width}}" + (" " if c + 1 < cols else ""), style="dim")
    lines = [header]
    for r in range(rows):
        line = Text()
        line.append(f"{r:>{label}} {ROW_LABEL_END}", style="dim")
        for c in range(cols):
            offset = int(grid.offsets[r, c])
            colour = _colour(picture, int(grid.tile[r, c]))
            if offset < 0:
                line.append(f"{PADDING_MARK:>{width}}", style="dim")
            else:
                line.append(f"{offset:>{width}}", style=f"black on {colour}" if colour else "")
            if c + 1 < cols:
                line.append(*_column_edge(grid, r, c))
        lines.append(line)
        if r + 1 < rows:
            edge = _row_edge(grid, r, width, label)
            if edge is not None:
                lines.append(edge)
    return lines


def _column_edge(grid: Grid, r: int, c: int) -> tuple[str, str]:
    if grid.tile[r, c] != grid.tile[r, c + 1]:
        return "┃", "bold"
    if grid.nested is not None and grid.nested[r, c] != grid.nested[r, c + 1]:
        return "│", NESTED_EDGE
    return " ", ""


def _row_edge(grid: Grid, r: int, width: int, label: int) -> Text | None:
    outer = grid.tile[r] != grid.tile[r + 1]
    inner = grid.nested[r] != grid.nested[r + 1] if grid.nested is not None else np.zeros_like(outer)
    if not (outer.any() or inner.any()):
        return None
    edge = Text(" " * (label + 1) + ROW_LABEL_END)
    for c in range(len(outer)):
        if outer[c]:
            edge.append("━" * width, style="bold")
        elif inner[c]:
            edge.append("─" * width, style=NESTED_EDGE)
        else:
            edge.append(" " * width)
        if c + 1 < len(outer):
            edge.append("╋" if outer[c] or outer[c + 1] else " ", style="bold")
    return edge


# ---- SVG ---------------------------------------------------------------------------------


def render_svg(picture: LayoutPicture, cell: int = 36) -> str:
    """The picture as a standalone SVG document."""
    margin, title_h, gap = 24, 22, 16
    body: list[str] = []
    y = margin + 3 * 18
    width = margin * 2 + cell
    text_lines = [
        picture.shape_text,
        (
            f"physical elements: {picture.physical_elements} "
            f"({picture.real_elements} elements, "
            f"{picture.physical_elements - picture.real_elements} padding)"
        ),
        "map: " + picture.map_text,
    ]
    for i, line in enumerate(text_lines):
        body.append(
            f'<text x="{margin}" y="{margin + i * 18}" font-size="13" '
            f'font-weight="{"bold" if i == 0 else "normal"}">{escape(line)}</text>'
        )
    for grid in picture.grids:
        if grid.title:
            body.append(
                f'<text x="{margin}" y="{y + 14}" font-size="13" font-weight="bold">{escape(grid.title)}</text>'
            )
            y += title_h
        rows, cols = grid.offsets.shape
        body.extend(_svg_grid(picture, grid, margin, y, cell))
        y += rows * cell + gap
        width = max(width, margin * 2 + cols * cell)
    for note in picture.notes:
        body.append(f'<text x="{margin}" y="{y + 14}" font-size="12" font-style="italic">note: {escape(note)}</text>')
        y += 18
    height = y + margin
    width = max(width, margin * 2 + int(8 * max(len(line) for line in text_lines)))  # ~8px/char
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )


def _svg_grid(picture: LayoutPicture, grid: Grid, x0: int, y0: int, cell: int) -> list[str]:
    rows, cols = grid.offsets.shape
    out = []
    for r in range(rows):
        for c in range(cols):
            x, y = x0 + c * cell, y0 + r * cell
            offset = int(grid.offsets[r, c])
            if offset < 0:
                out.append(
                    f'<rect class="padding" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                    f'fill="white" stroke="#bbbbbb" stroke-dasharray="3,2"/>'
                )
                continue
            fill = _colour(picture, int(grid.tile[r, c])) or "#f4f4f4"
            out.append(
                f'<rect class="element" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="{fill}" stroke="#999999" stroke-width="0.5"/>'
            )
            out.append(
                f'<text class="offset" x="{x + cell / 2}" y="{y + cell / 2 + 4}" '
                f'font-size="12" text-anchor="middle">{offset}</text>'
            )
    out.extend(_svg_edges(grid.nested, x0, y0, cell, NESTED_EDGE, 1.5))
    out.extend(_svg_edges(grid.tile, x0, y0, cell, "black", 2.5))
    return out


def _svg_edges(tiles: np.ndarray | None, x0: int, y0: int, cell: int, colour: str, stroke: float) -> list[str]:
    """Lines along every cell edge where the tile number changes, plus the outer border."""
    if tiles is None:
        return []
    rows, cols = tiles.shape
    segments = []
    for r in range(rows):
        for c in range(cols):
            x, y = x0 + c * cell, y0 + r * cell
            if c + 1 < cols and tiles[r, c] != tiles[r, c + 1]:
                segments.append((x + cell, y, x + cell, y + cell))
            if r + 1 < rows and tiles[r, c] != tiles[r + 1, c]:
                segments.append((x, y + cell, x + cell, y + cell))
    segments.append((x0, y0, x0 + cols * cell, y0))
    segments.append((x0, y0 + rows * cell, x0 + cols * cell, y0 + rows * cell))
    segments.append((x0, y0, x0, y0 + rows * cell))
    segments.append((x0 + cols * cell, y0, x0 + cols * cell, y0 + rows * cell))
    return [
        f'<line x1="{a}" y1="{b}" x2="{c}" y2="{d}" stroke="{colour}" stroke-width="{stroke}"/>'
        for a, b, c, d in segments
    ]


def layout_json(data: LayoutOffsets) -> dict:
    """``{"shape", "map", "physical_elements", "offsets"}``; offsets null above the limit."""
    return {
        "shape": data.shape_text,
        "map": data.map_text,
        "physical_elements": data.physical_elements,
        "offsets": data.offsets,
    }
