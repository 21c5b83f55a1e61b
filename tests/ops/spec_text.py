"""Comparing a rule's map with the text the spec prints (layout-insensitive)."""

from __future__ import annotations

import re

from hlo_index.affine import parse_map


def assert_map_text(m, spec_text: str, exact_text: bool = True) -> None:
    """Equal as maps (canonical), and printed as the spec prints it (as built, or once
    simplified), up to line breaks, commas between domain entries and their order.

    ``exact_text=False`` skips the print comparison where the engine's canonical form differs
    from the spec's spelling (it folds ``(d1 - 3) floordiv 7`` to ``(d1 + 4) floordiv 7 - 1``)."""
    got = m.simplified()
    assert got == parse_map(_parseable(spec_text)).simplified(), f"\n got  {got}\n want {spec_text}"
    if not exact_text:
        return
    want = _entries(spec_text)
    assert want in (_entries(str(m)), _entries(str(got))), f"\n got  {m}\n simplified {got}\n want {spec_text}"


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside brackets, and between ``]`` and the next entry (the spec
    sometimes omits the comma at a line break)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if depth == 0 and (ch == "," or (ch == " " and current.rstrip().endswith("]"))):
            parts.append(current)
            current = ""
            continue
        current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _entries(text: str) -> tuple[str, list[str]]:
    text = re.sub(r"\s+", " ", text).strip()
    head, _, domain = text.partition("domain:")
    return head.strip().rstrip(",").strip(), sorted(_split_top_level(domain))


def _parseable(text: str) -> str:
    head, entries = _entries(text)
    return f"{head}, domain: " + ", ".join(entries) if entries else head
