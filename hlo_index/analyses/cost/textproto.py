"""A reader for protobuf text format, enough for XLA's device descriptions
(``GpuTargetConfigProto``) and HLO op profiles (``DeviceHloInstructionProfiles``).

A message is a dict from field name to a list of values (a field may repeat); a value is an int,
a float, a string, an enum name (``str``) or a nested message (``dict``). ``# ...`` comments are
skipped. Errors carry ``line:col``.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<punct>[{}:<>;,\[\]])|(?P<word>[^\s{}:<>;,\[\]"'#]+)"""
)


class TextProtoError(ValueError):
    """Malformed text; the message starts with ``line:col:``."""


def _tokens(text: str):
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TextProtoError(f"{_where(text, pos)}: unexpected character {text[pos]!r}")
        if m.lastgroup:
            yield m.lastgroup, m.group(m.lastgroup), pos
        pos = m.end()


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"{line}:{col}"


def _scalar(kind: str, value: str):
    if kind == "str":
        return bytes(value[1:-1], "utf-8").decode("unicode_escape")
    try:
        return int(value, 0)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value  # an enum name or true/false


def parse_text_proto(text: str) -> dict:
    """The message ``text`` holds, as nested dicts of lists."""
    toks = list(_tokens(text))
    root, _pos = _message(text, toks, 0, None)
    return root


def _message(text: str, toks, i: int, close: str | None) -> tuple[dict, int]:
    out: dict[str, list] = {}
    while i < len(toks):
        kind, value, pos = toks[i]
        if kind == "punct" and value == close:
            return out, i + 1
        if kind == "punct" and value in ";,":
            i += 1
            continue
        if kind != "word":
            raise TextProtoError(f"{_where(text, pos)}: expected a field name, got {value!r}")
        name = value
        i += 1
        if i < len(toks) and toks[i][1] == ":":
            i += 1
        if i >= len(toks):
            raise TextProtoError(f"{_where(text, pos)}: field {name} has no value")
        kind, value, pos = toks[i]
        if kind == "punct" and value in "{<":
            sub, i = _message(text, toks, i + 1, "}" if value == "{" else ">")
            out.setdefault(name, []).append(sub)
        elif kind in ("word", "str"):
            out.setdefault(name, []).append(_scalar(kind, value))
            i += 1
        else:
            raise TextProtoError(f"{_where(text, pos)}: field {name}: unexpected {value!r}")
    if close is not None:
        raise TextProtoError(f"{_where(text, len(text))}: missing {close!r}")
    return out, i


def first(message: dict, name: str, default=None):
    """The first value of field ``name`` (``default`` when absent)."""
    values = message.get(name)
    return values[0] if values else default
