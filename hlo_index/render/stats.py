"""``stats``' report as tables (Rich) and as JSON (schema ``hlo-index-stats/1``)."""

from __future__ import annotations

import json

SCHEMA = "hlo-index-stats/1"


def stats_json(results: list[dict]) -> str:
    return json.dumps({"schema": SCHEMA, "modules": results}, indent=2)


def render_stats_table(results: list[dict], console) -> None:
    from rich.table import Table
    from rich.text import Text

    for entry in results:
        # The heading is printed on its own: as a table title it wraps to the (narrow) table width.
        console.print(Text(f"{entry['module']}  ({entry['path']})", style="bold"), soft_wrap=True)
        table = Table()
        table.add_column("item")
        table.add_column("count", justify="right")
        table.add_row("computations", str(entry["computations"]))
        table.add_row("instructions", str(entry["instructions"]))
        table.add_row("fusions", str(entry["fusions"]))
        for kind, n in entry["fusion_kinds"].items():
            table.add_row(f"  fusion kind={kind or '?'}", str(n))
        table.add_section()
        for opcode, n in entry["opcodes"].items():
            table.add_row(opcode, str(n))
        console.print(table)
    if len(results) > 1:
        console.print(
            f"{len(results)} modules, "
            f"{sum(e['computations'] for e in results)} computations, "
            f"{sum(e['instructions'] for e in results)} instructions, "
            f"{sum(e['fusions'] for e in results)} fusions"
        )
