"""Running ``hlo-index`` the way a user does and comparing its maps with the spec's printed maps.

The spec (``/work/shared/seeds/indexing_analysis.en.md``) prints maps in several layouts: one
domain entry per line, sometimes without the comma, ``domain:`` on its own line. ``spec_map_text``
turns that into XLA's one-line map syntax (the only conversion we allow ourselves), and
``compare_maps`` says how close our map is to the spec's: the same text, the same canonical map,
or the same relation found by brute force.
"""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from hlo_index.affine import IndexingMap, parse_map
from hlo_index.cli import main

EXACT, STRUCTURAL, SEMANTIC = "exact", "structural", "semantic"
"""How a map matched: identical printed text (up to whitespace and domain order); equal canonical
(simplified) maps; equal relations {(dims, results)} by brute force over the domain."""


def _runner() -> CliRunner:
    # click < 8.2 mixes stderr into output unless told not to; 8.2+ keeps result.stdout clean.
    if "mix_stderr" in CliRunner.__init__.__code__.co_varnames:
        return CliRunner(mix_stderr=False)
    return CliRunner()


def run_cli(args: list[str]) -> tuple[int, str]:
    """``hlo-index ARGS`` in-process: (exit code, stdout)."""
    result = _runner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.stdout


def analyze(
    tmp_path,
    hlo_text: str,
    *,
    instruction: str | None = None,
    fusion: str | None = None,
    computation: str | None = None,
    direction: str = "both",
) -> dict:
    """The single JSON target ``hlo-index analyze`` reports for the named instruction/fusion."""
    path = tmp_path / "module.hlo"
    path.write_text(hlo_text)
    args = ["analyze", str(path), "--direction", direction, "--format", "json"]
    for flag, name in (("--instruction", instruction), ("--fusion", fusion), ("--computation", computation)):
        if name is not None:
            args += [flag, name]
    code, out = run_cli(args)
    assert code == 0, f"hlo-index analyze exited {code}:\n{out}"
    doc = json.loads(out)
    assert doc["schema"] == "hlo-index/1"
    (module,) = doc["modules"]
    assert not [d for d in module["diagnostics"] if d["severity"] == "error"], module["diagnostics"]
    (target,) = module["targets"]
    return target


def entry(target: dict, direction: str, operand: int, output: int = 0) -> dict:
    """The ``output_to_input`` / ``input_to_output`` entry for one (operand, output) pair."""
    key = {"out2in": "output_to_input", "in2out": "input_to_output"}[direction]
    found = [e for e in target[key] if e["operand"] == operand and e["output"] == output]
    assert len(found) == 1, f"{key}: expected one entry for operand {operand}, output {output}: {target[key]}"
    return found[0]


def map_texts(target: dict, direction: str, operand: int, output: int = 0) -> list[str]:
    """Every map text of the entry; an unknown map fails with the tool's reason."""
    maps = entry(target, direction, operand, output)["maps"]
    for m in maps:
        assert m["map"] is not None, f"unknown map: {m.get('unknown')}"
    return [m["map"] for m in maps]


def spec_map_text(spec_text: str) -> str:
    """The spec's multi-line map in XLA's one-line syntax: entries joined by ``, ``."""
    lines = [ln.strip().rstrip(",").strip() for ln in spec_text.strip().splitlines()]
    lines = [ln for ln in lines if ln]
    head = lines[0]
    # The head line may itself end with "domain:" or carry it on the next line.
    head = re.sub(r",?\s*domain:\s*$", "", head)
    rest = [ln for ln in lines[1:] if ln != "domain:"]
    return f"{head}, domain: " + ", ".join(rest) if rest else head


def spec_map(spec_text: str) -> IndexingMap:
    return parse_map(spec_map_text(spec_text))


def _normalized(text: str) -> tuple[str, tuple[str, ...]]:
    head, _, domain = re.sub(r",\s*", ", ", re.sub(r"\s+", " ", text)).partition("domain:")
    entries, depth, current = [], 0, ""
    for ch in domain:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            entries.append(current.strip())
            current = ""
        else:
            current += ch
    entries.append(current.strip())
    return head.strip().rstrip(",").strip(), tuple(sorted(e for e in entries if e))


def compare_maps(got_text: str, want: IndexingMap, want_text: str | None = None) -> str:
    """EXACT / STRUCTURAL / SEMANTIC, or raise AssertionError describing the difference.

    Runtime-variable intervals are part of the relation (a value outside is infeasible), so the
    brute force also compares them."""
    got = parse_map(got_text)
    if _normalized(got_text) == _normalized(want_text if want_text is not None else str(want)):
        return EXACT
    if got == want:
        return STRUCTURAL
    assert [v.interval for v in got.runtime_vars] == [v.interval for v in want.runtime_vars], (
        f"runtime ranges differ:\n got  {got}\n want {want}"
    )
    assert got.semantically_equal(want), f"maps differ:\n got  {got}\n want {want}"
    return SEMANTIC


def assert_spec_map(got_text: str, spec_text: str) -> str:
    """Our printed map against the spec's printed map (in spec layout)."""
    return compare_maps(got_text, spec_map(spec_text), spec_map_text(spec_text))


def assert_spec_maps(got_texts: list[str], spec_texts: list[str]) -> list[str]:
    """A set of maps (fusions: one operand read several ways) against the spec's set: a bijection."""
    assert len(got_texts) == len(spec_texts), f"got {len(got_texts)} maps {got_texts}, spec has {len(spec_texts)}"
    kinds, unmatched = [], list(got_texts)
    for spec_text in spec_texts:
        for got in unmatched:
            try:
                kinds.append(assert_spec_map(got, spec_text))
            except AssertionError:
                continue
            unmatched.remove(got)
            break
        else:
            raise AssertionError(f"no map of {unmatched} matches the spec's\n{spec_text}")
    return kinds


def relation(maps: list[IndexingMap], limit: int = 1 << 20) -> set[tuple[int, ...]]:
    """Union of the maps' relations {(dims..., results...)} (range variables projected away),
    enumerated exhaustively (small domains only: no runtime variables)."""
    rows: set[tuple[int, ...]] = set()
    for m in maps:
        assert not m.runtime_vars, "relation() enumerates maps without runtime variables only"
        size = 1
        for b in tuple(m.dims) + tuple(m.range_vars):
            size *= b.size
        assert size <= limit, f"domain too big to enumerate: {size}"
        points, results = m.enumerate(limit=limit)
        for p, r in zip(points.tolist(), results.tolist()):
            rows.add(tuple(p[: m.num_dims]) + tuple(r))
    return rows


def _runtime_assignments(maps: list[IndexingMap]) -> list[tuple[int, ...]]:
    """() when no map has runtime variables; else every combination of each variable's bounds and
    midpoint (the maps must agree on how many there are and what they bound)."""
    import itertools

    counts = {len(m.runtime_vars) for m in maps if not m.is_known_empty}
    if counts <= {0}:
        return [()]
    assert len(counts) == 1, f"maps disagree on their runtime variables: {[str(m) for m in maps]}"
    first = next(m for m in maps if m.runtime_vars)
    choices = [sorted({v.interval.lo, (v.interval.lo + v.interval.hi) // 2, v.interval.hi}) for v in first.runtime_vars]
    return list(itertools.product(*choices))


def check_against_spec(target: dict, chk) -> list[str]:
    """Compare the tool's maps for one `examples.MapCheck` with the spec's; returns the match kinds."""
    got = map_texts(target, chk.direction, chk.operand, chk.output)
    if chk.restrict is not None:
        wants = [spec_map_text(t) + ", " + chk.restrict for t in chk.maps]
        assert len(got) == len(wants), f"got {got}, want {wants}"
        return ["restricted " + compare_maps(g, parse_map(w), w) for g, w in zip(got, wants)]
    if chk.except_where_read is not None:
        spec_rows = relation([spec_map(t) for t in chk.maps])
        other = [parse_map(t) for t in map_texts(target, chk.direction, chk.except_where_read, chk.output)]
        mine = [parse_map(t) for t in got]
        # with runtime variables (the other operand's offsets, shared by position), per assignment
        for values in _runtime_assignments(mine + other):
            fixed = [o.substitute_runtime_values(values) if values else o for o in other]
            read_dims = {row[: o.num_dims] for o in fixed for row in relation([o])}
            want = {row for row in spec_rows if row[: mine[0].num_dims] not in read_dims}
            have = relation([m.substitute_runtime_values(values) if values else m for m in mine])
            assert have == want, (
                f"relation differs at runtime values {values}: {len(have - want)} extra rows, "
                f"{len(want - have)} missing (e.g. extra {sorted(have - want)[:3]}, "
                f"missing {sorted(want - have)[:3]})"
            )
        return [f"relation minus operand {chk.except_where_read:d}"]
    return assert_spec_maps(got, list(chk.maps))
