"""The ``--format json`` document of ``analyze`` (schema ``hlo-index/1``), written module by module."""
from __future__ import annotations

import json
from typing import Iterable, Optional, TextIO

from .report import SCHEMA, ModuleReport, document

# no indent: the C encoder, 10x faster on big dumps; each document is a fresh tree (no cycles)
_encode = json.JSONEncoder(check_circular=False).encode


def encode_module(module: ModuleReport) -> str:
    """One module's part of the document, as ``write_json`` writes it."""
    return _encode(module.to_json())


def render_json(modules: list[ModuleReport]) -> str:
    return _encode(document(modules))


def write_json(modules: Iterable[ModuleReport], out: TextIO, top: Optional[int] = None,
               sort: str = "bytes") -> None:
    """The same document as ``render_json``, streamed: one module's JSON at a time.

    With ``top``, each module keeps only the ``top`` heaviest targets by ``sort`` over all
    modules, in rank order, each with its ``rank`` (1 = heaviest); the document says
    ``"top": {"sort": ..., "limit": ..., "of": targets ranked}``.
    """
    if top is not None:
        out.write(_encode(ranked_document(list(modules), top, sort)) + "\n")
        return
    out.write('{"schema": "%s", "modules": [' % SCHEMA)
    for i, mod in enumerate(modules):
        text = mod.json_text if mod.json_text is not None else _encode(mod.to_json())
        out.write(("," if i else "") + text)
        if getattr(out, "broken", False):
            return
    out.write("]}\n")


def ranked_document(modules: list[ModuleReport], top: int, sort: str) -> dict:
    from .triage import SORT_KEYS, figures_of
    ranked = [(figures_of(t, m), mi, ti) for mi, m in enumerate(modules) for ti, t in enumerate(m.targets)]
    key = SORT_KEYS[sort]
    ranked.sort(key=lambda item: key(item[0]))
    chosen = ranked[:top]
    rank_of = {(mi, ti): r for r, (_, mi, ti) in enumerate(chosen, 1)}
    out_modules = []
    for mi, m in enumerate(modules):
        doc = m.to_json()
        picked = sorted((rank_of[(mi, ti)], t) for ti, t in enumerate(doc["targets"]) if (mi, ti) in rank_of)
        doc["targets"] = [{**t, "rank": r} for r, t in picked]
        out_modules.append(doc)
    return {"schema": SCHEMA, "top": {"sort": sort, "limit": top, "of": len(ranked)}, "modules": out_modules}
