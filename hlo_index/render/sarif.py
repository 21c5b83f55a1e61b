"""``check`` findings as SARIF 2.1.0, the format code-scanning views (GitHub's among them) read.

* ``tool.driver.rules``: one rule per HI code of the finding-kinds table, with its short and
  full description, help as text and markdown, and a default level: ``error`` for the codes
  ``check`` fails on by default, ``note`` for the benign kinds.
* one result per finding: the message names the fusion, the operand and its maps; the location
  is the dump file, relative to the working directory, at the fusion's line.
* ``partialFingerprints``: a code-scanning view matches results of two runs by these, not by
  the location, so they hold the finding's identity (no names: a renamed recompile is the same
  alert) and the finding's rank among the findings of that identity in the dump (identical
  fusions repeated per layer share an identity; the rank keeps one alert per fusion). The
  rank is over every selected finding, before ``--baseline`` leaves out the known ones, so a
  new repeat of a known fusion is not mistaken for the known ones.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import quote

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/hlo-index/"
IDENTITY_KEY = "hloIndexFindingIdentity/v1"

# What each kind means for the code and what to do about it (help), beyond the one-line description.
_HELP = {
    "HI001": "Some output elements read the same operand element more than once, through different maps: "
    "the fusion re-reads memory. Look at the maps: a broadcast or a gather read twice usually "
    "means a producer was fused into several consumers.",
    "HI002": "The maps cover disjoint parts of the output (the pieces of a concatenate): each output element "
    "reads the operand once. Benign; selected only on request.",
    "HI003": "The maps cover disjoint parts of the output (the pieces of a pad): each output element reads the "
    "operand once. Benign; selected only on request.",
    "HI004": "The maps cover disjoint parts of the output (a select, slices): each output element reads the "
    "operand once. Benign; selected only on request.",
    "HI005": "The operand is read directly and again through a reduce whose result is broadcast back "
    "(softmax, layer norm): the usual two-pass normalisation. Benign; selected only on request.",
    "HI006": "The operand is read directly and again through the pieces of a concatenate (a rotation, as in "
    "RoPE). Benign; selected only on request.",
    "HI007": "Each output element reads several distinct elements of the operand, each through one map (separate "
    "scalars, such as a few coefficients, or rows): nothing is read twice. Benign; selected only on request.",
    "HI900": "--verify sampled output elements and found one whose operand elements differ from what the maps "
    "say: the maps are wrong for this fusion. Please report it with the dump.",
}


def _rule(code: str, name: str, description: str, default_codes: Sequence[str]) -> dict:
    help_text = _HELP.get(code, description)
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": description},
        "fullDescription": {"text": f"{description}. {help_text}"},
        "help": {
            "text": help_text,
            "markdown": f"**{code} {name}**: {description}.\n\n{help_text}\n\n"
            f"Run `hlo-index check --select {code} FILE` to see each finding's maps.",
        },
        "defaultConfiguration": {"level": "error" if code in default_codes else "note"},
    }


def _uri(source: str, cwd: str) -> str:
    path = os.path.relpath(os.path.abspath(source), cwd) if source not in ("-", "<stdin>") else "stdin"
    return quote(path.replace(os.sep, "/"))


def _fingerprint_identity(finding) -> str:
    if finding.identity:
        return finding.identity
    # verify mismatches have no structural identity: their code and message stand in
    return hashlib.sha256(f"{finding.code}\x1f{finding.message}".encode()).hexdigest()[:16]


def occurrence_ranks(found: Iterable) -> dict[int, int]:
    """id(finding) -> its rank among the findings of the same identity, in dump order."""
    seen: dict[str, int] = {}
    ranks = {}
    for f in found:
        key = _fingerprint_identity(f)
        ranks[id(f)] = seen.get(key, 0)
        seen[key] = ranks[id(f)] + 1
    return ranks


def _result(f, rule_index: Mapping[str, int], rank: int, cwd: str) -> dict:
    identity = _fingerprint_identity(f)
    text = f.message
    if f.maps:
        text += ": " + "; ".join(f.maps)
    if f.op_name or f.source_location:
        text += f" (from {' '.join(x for x in (f.op_name, f.source_location) if x)})"
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": _uri(f.source, cwd)}}}
    if f.line:
        location["physicalLocation"]["region"] = {"startLine": f.line}
    if f.fusion:
        location["logicalLocations"] = [
            {"name": f.fusion, "fullyQualifiedName": f"{f.module}/{f.fusion}", "kind": "function"}
        ]
    result = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": "error",
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {
            IDENTITY_KEY: f"{identity}:{rank}",
            "primaryLocationLineHash": f"{identity}:{rank + 1}",
        },
    }
    if f.kind != "verify":
        result["properties"] = {
            "identity": f.identity,
            "module": f.module,
            "fusion": f.fusion,
            "operand": f.operand,
            "operand_name": f.operand_name,
            "output": f.output,
            "maps": list(f.maps),
        }
    return result


def sarif_document(
    found: Sequence,
    rules: Mapping[str, tuple[str, str]],
    default_codes: Sequence[str],
    version: str,
    ranked: Sequence = (),
    cwd: str = "",
) -> dict:
    """The SARIF log of ``found`` (the findings reported). ``ranked``: every selected finding,
    before a baseline removed the known ones (defaults to ``found``); ranks are counted there."""
    cwd = cwd or os.getcwd()
    codes = list(rules)
    rule_index = {code: i for i, code in enumerate(codes)}
    ranks = occurrence_ranks(ranked or found)
    if any(id(f) not in ranks for f in found):
        ranks = occurrence_ranks(found)
    driver = {
        "name": "hlo-index",
        "version": version,
        "informationUri": INFORMATION_URI,
        "rules": [_rule(code, *rules[code], default_codes) for code in codes],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, rule_index, ranks[id(f)], cwd) for f in found],
            }
        ],
    }
