"""The dump pairs of ``tests/data/diff`` and a renamer independent of hlo-index's parser and printer."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "diff"


def manifest() -> dict:
    return json.loads((DATA / "MANIFEST.json").read_text())["pairs"]


def pair_paths(pair: str) -> tuple[str, str]:
    def one(side: str) -> str:
        path = DATA / pair / f"{side}.hlo.txt"
        return str(path if path.exists() else path.with_name(path.name + ".gz"))

    return one("old"), one("new")


def read_text(path: str) -> str:
    return gzip.open(path, "rt").read() if path.endswith(".gz") else Path(path).read_text()


_DEFINED = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", re.MULTILINE)  # instructions
_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(|\{)", re.MULTILINE)  # computations
_SIGNATURE_PARAMETER = re.compile(r"([(,]\s*)([\w.\-]+)(?=:\s)")
_REFERENCE = re.compile(r"%([\w.\-]+)")


def rename_everything(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with every instruction and computation renamed (``%r<k>``), by text substitution
    of the dump's ``%name`` references and the computations' parameter lists; metadata untouched.
    Returns the text and the renaming."""
    names: dict[str, str] = {}
    body = text[text.index("\n") + 1 :]  # not the HloModule line (its name is the module's)
    for pattern in (_HEADER, _DEFINED):
        for m in pattern.finditer(body):
            if not m.group(1).isdigit():  # not the numbered rows of the stack-frame tables
                names.setdefault(m.group(1), f"r{len(names)}")
    out = []
    for line in text.splitlines():
        if line.startswith("HloModule"):
            out.append(line)
            continue
        line = _REFERENCE.sub(lambda m: "%" + names.get(m.group(1), m.group(1)), line)
        if _HEADER.match(line) and "=" not in line.split("(", 1)[0]:
            head, _, rest = line.partition("(")
            rest = _SIGNATURE_PARAMETER.sub(lambda m: m.group(1) + names.get(m.group(2), m.group(2)), "(" + rest)
            line = head + rest
        out.append(line)
    return "\n".join(out) + "\n", names
