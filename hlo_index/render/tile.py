"""``tile``'s report as JSON (schema ``hlo-index-tile/1``) and as text."""

from __future__ import annotations

from rich.text import Text

from ..report.tile import SCHEMA, TileReport


def tile_json(report: TileReport) -> dict:
    return {
        "schema": SCHEMA,
        "fusion": report.fusion,
        "output_shape": report.output_shape,
        "tile": list(report.sizes),
        "strides": list(report.strides),
        "tile_counts": list(report.counts),
        "operands": [
            {
                "operand": o.operand,
                "name": o.name,
                "shape": o.shape,
                "tiles": [t.to_json() for t in o.tiles],
                "union": o.union.to_json() if o.union is not None else None,
                "tile_size_constraints": [{"constraint": c, "satisfied": ok} for c, ok in o.constraints],
            }
            for o in report.operands
        ],
    }


def render_tile_text(report: TileReport, out) -> None:
    """The report on the Rich console ``out``."""
    data = tile_json(report)
    out.print(
        Text(
            f"%{report.fusion}: output {data['output_shape']}, tile {data['tile']} strides "
            f"{data['strides']} ({'x'.join(map(str, report.counts))} tiles)",
            style="bold",
        ),
        soft_wrap=True,
    )
    for row in data["operands"]:
        out.print(Text(f"  operand {row['operand']} %{row['name']}  {row['shape']}"), soft_wrap=True)
        if not row["tiles"]:
            out.print(Text("      not read by this output", style="dim"))
        for t in row["tiles"]:
            if t["is_tile"]:
                out.print(Text(f"      tile sizes {t['sizes']} strides {t['strides']}", style="green"))
                out.print(Text(f"      offsets {t['offsets']}"), soft_wrap=True)
                if t["signed_strides"] != t["strides"]:
                    out.print(
                        Text(
                            f"      XLA form: first element at {t['first_offsets']}, strides "
                            f"{t['signed_strides']} (negative: read backwards, a reverse)"
                        ),
                        soft_wrap=True,
                    )
                for note in t["notes"]:
                    out.print(Text(f"      note: {note}", style="dim"), soft_wrap=True)
            else:
                out.print(Text(f"      not a tile: {t['reason']}", style="red"), soft_wrap=True)
        for c in row["tile_size_constraints"]:
            mark = "met" if c["satisfied"] else "not met: XLA would reject these sizes"
            out.print(
                Text(
                    f"      XLA's tile size constraint: {c['constraint']}  ({mark})",
                    style="dim" if c["satisfied"] else "yellow",
                ),
                soft_wrap=True,
            )
        union = row["union"]
        if union is not None:
            head = f"      union of {union['union_of_maps']} maps (bounding tile)"
            if not union["is_tile"]:
                out.print(Text(f"{head}: not a tile: {union['reason']}", style="red"), soft_wrap=True)
                continue
            fill = {
                True: "the maps fill it",
                False: "over-approximates: the maps leave holes",
                None: "too big to check whether the maps fill it",
            }[union["exact"]]
            out.print(
                Text(f"{head}: sizes {union['sizes']} strides {union['strides']} ({fill})", style="cyan"),
                soft_wrap=True,
            )
            out.print(Text(f"        offsets {union['offsets']}"), soft_wrap=True)
