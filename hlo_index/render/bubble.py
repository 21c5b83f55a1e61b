"""``bubble``'s report as JSON and as text; ``rewrites`` maps ``id(chain)`` to the file its
rewritten module was written to."""

from __future__ import annotations

from rich.text import Text

from ..report.bubble import BubbleReport

VERDICT_STYLE = {"legal": "green", "illegal": "red", "conditional": "cyan", "unprovable": "yellow"}
SCHEMA = "hlo-index/1"


def bubble_json(report: BubbleReport, rewrites: dict[int, str]) -> dict:
    return {
        "schema": SCHEMA,
        "modules": [
            {
                "name": m.name,
                "source": m.source,
                "input": m.kind,
                "chains": [c.to_json() if m.kind == "mlir" else c.to_json(rewrites.get(id(c))) for c in m.chains],
            }
            for m in report.modules
        ],
    }


def render_bubble_text(report: BubbleReport, rewrites: dict[int, str], out) -> None:
    # several files may hold modules of one name (a program's before- and after-optimizations dumps)
    several = len({m.source for m in report.modules}) > 1
    for m in report.modules:
        kind = m.kind
        where = f" ({m.source})" if several and kind == "hlo" else ""
        out.print(
            Text(
                f"{'function file' if kind == 'mlir' else 'module'} {m.name}{where}: "
                f"{len(m.chains)} slice/reshape pair(s)",
                style="bold",
            ),
            soft_wrap=True,
        )
        for c in m.chains:
            line = Text("  ")
            line.append(c.verdict, style=VERDICT_STYLE.get(c.verdict, ""))
            pair = f"%{c.slice} -> %{c.reshape}" if c.order == "slice_then_reshape" else f"%{c.reshape} -> %{c.slice}"
            where = f"@{c.computation}" if kind == "mlir" else f"%{c.computation}"
            order = c.direction if kind == "mlir" else c.order
            line.append(f"  {pair}  ({order.replace('_', ' ')}, in {where})")
            out.print(line, soft_wrap=True)
            out.print(Text(f"      {c.reason}"), soft_wrap=True)
            if getattr(c, "condition", None):
                out.print(Text(f"      condition: {c.condition}"), soft_wrap=True)
            if c.rewrite:
                out.print(
                    Text("      rewrite:\n" + "\n".join("        " + s for s in c.rewrite.splitlines())), soft_wrap=True
                )
            path = rewrites.get(id(c)) if kind == "hlo" else None
            if path:
                out.print(Text(f"      rewritten module: {path}"), soft_wrap=True)
