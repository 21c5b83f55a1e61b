"""Map and shape text for reports, one text object per map or shape object of a module.

The rule cache shares map objects, so ~10^4 maps of a big dump are ~10^2 distinct objects, and the
parser shares shapes: each is printed once per analysis context (one per module report).
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..context import current, register_table
from .model import MapReport

# id(object) -> (object, its report or text) per analysis context; the object is kept to pin its id.
MAP_TEXTS = register_table("report.texts.map_texts")
_SHAPE_TEXTS = register_table("report.texts.shape_texts")


def shape_text(shape) -> str:
    texts = current().tables[_SHAPE_TEXTS]
    cached = texts.get(id(shape))
    if cached is None or cached[0] is not shape:
        cached = texts[id(shape)] = (shape, str(shape))
    return cached[1]


def map_report(m: IndexingMap) -> MapReport:
    """The report of ``m``; one object per map (operand entries share maps, so they share it)."""
    texts = current().tables[MAP_TEXTS]
    cached = texts.get(id(m))
    if cached is None or cached[0] is not m:
        # Printed in the simplifier's normal form, the one every command prints: an op rule's map
        # is exact but may restate a dimension's range as a constraint or keep a folded term.
        shown = m if m.is_undefined else m.simplified()
        if shown.is_undefined:
            report = MapReport(None, shown.undefined_reason or "unknown")
        elif shown.is_known_empty:
            report = MapReport("KNOWN EMPTY")
        else:
            report = MapReport(str(shown))
        cached = texts[id(m)] = (m, report)
    return cached[1]
