"""No module-level state that grows while analysing: every cache belongs to an analysis context.

How import-time registries are told apart from run-time caches: every ``hlo_index.*`` module is
imported first (registries such as the op-rule table, the reference table, the context's table
slots fill then); a snapshot of every module-level (and class-level) dict / list / set / deque is
taken; then real work runs through the CLI (every command, both directions, --verify, a
directory of real dumps, a module with a while loop). Any container whose contents changed was
filled at run time, which is exactly what must live in ``hlo_index.context`` instead.
"""

from __future__ import annotations

import collections
import importlib
import pkgutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fusion.hlo_samples import while_sums_rows  # tests/ is on sys.path (rootdir without __init__)

import hlo_index
from hlo_index.context import AnalysisContext, current

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
CORPUS = SHARED / "corpus"
CONTAINERS = (dict, list, set, collections.deque, bytearray)


def _all_modules() -> list:
    modules = [hlo_index]
    for info in pkgutil.walk_packages(hlo_index.__path__, "hlo_index."):
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError:  # optional dependency absent (islpy): nothing of it can run either
            continue
    return modules


def _containers(modules) -> dict[tuple[str, str], object]:
    found = {}
    for module in modules:
        for name, value in vars(module).items():
            if isinstance(value, CONTAINERS):
                found[(module.__name__, name)] = value
            elif isinstance(value, type) and value.__module__ == module.__name__:
                for attr, member in vars(value).items():
                    if isinstance(member, CONTAINERS):
                        found[(module.__name__, f"{name}.{attr}")] = member
    return found


def _snapshot(value) -> object:
    if isinstance(value, dict):
        return ("dict", len(value), list(value.items()))
    return (type(value).__name__, len(value), list(value))


def _changed(before, after) -> bool:
    if before[1] != after[1]:
        return True
    try:
        return before != after
    except Exception:  # noqa: BLE001  an element that cannot compare: lengths matched, check identities
        return any(a is not b for a, b in zip(before[2], after[2]))


def _work(tmp_path: Path) -> None:
    loop = tmp_path / "loop.hlo"
    loop.write_text(while_sums_rows())
    runner = CliRunner()
    from hlo_index.cli import main

    paths = [str(loop)]
    paths.extend(str(CORPUS / sub) for sub in ("mlp", "reshape_bitcast", "control_flow_rng") if (CORPUS / sub).is_dir())
    commands = [
        ["analyze", *paths, "--format", "json", "--direction", "both"],
        ["analyze", *paths[:2], "--direction", "both", "--verify"],  # the reference walk is slow on loops
        ["analyze", str(loop), "--instruction", "w", "--physical"],
        ["check", *paths, "--exit-zero"],
        ["stats", *paths],
        ["bubble", *paths],
        ["simplify", "(d0, d1) -> ((d0 * 16 + d1) floordiv 16), domain: d0 in [0, 7], d1 in [0, 15]"],
        ["compose", "(d0) -> (d0 floordiv 2), domain: d0 in [0, 9]", "(d0) -> (d0 * 2), domain: d0 in [0, 4]"],
        ["layout", "bf16[16,256]{1,0:T(8,128)(2,1)}"],
    ]
    for args in commands:
        result = runner.invoke(main, args)
        assert result.exit_code in (0, 1), (args, result.output[-2000:], result.exception)
    # the library API outside any session too
    [module] = hlo_index.load(str(loop))
    hlo_index.output_to_input(module.entry)
    hlo_index.input_to_output(module.entry)


def test_no_module_level_state_is_filled_at_run_time(tmp_path):
    modules = _all_modules()
    before = {key: _snapshot(value) for key, value in _containers(modules).items()}
    with AnalysisContext():
        _work(tmp_path)
    grown = sorted(
        f"{m}.{n}"
        for (m, n), value in _containers(modules).items()
        if (m, n) in before and _changed(before[(m, n)], _snapshot(value))
    )
    assert not grown, f"module-level containers filled at run time (move them to hlo_index.context): {grown}"


def test_a_context_frees_its_tables_when_it_ends(tmp_path):
    loop = tmp_path / "loop.hlo"
    loop.write_text(while_sums_rows())
    with hlo_index.Session() as session:
        [module] = session.load(str(loop))
        session.analyze(module.entry, "both")
        assert current() is session
        assert session.sizes(), "the session should have cached something"
    assert session.sizes() == {}
    assert current() is not session


def test_where_freeing_waits_a_context_that_ends_is_freed_when_the_next_one_starts(tmp_path, monkeypatch):
    from hlo_index import context

    freeing = context._Freeing()
    monkeypatch.setattr(context, "_FREEING", freeing)
    context.free_when_next_starts()
    loop = tmp_path / "loop.hlo"
    loop.write_text(while_sums_rows())
    with hlo_index.Session() as session:
        [module] = session.load(str(loop))
        session.analyze(module.entry, "both")
        tables, sizes = session.tables, session.sizes()
    assert sizes and session.sizes() == {}  # the context holds nothing once it ends...
    (ended,) = freeing.ended  # ...and its tables wait, unfreed, whole
    assert ended[0] is tables
    waiting = AnalysisContext()
    waiting.tables, waiting.intern = ended
    assert waiting.sizes() == sizes
    with AnalysisContext():
        assert freeing.ended == []  # freed as the next context's life starts
    assert len(freeing.ended) == 1  # that one's tables wait in their turn


@pytest.mark.parametrize("budget", ["maps_per_value", "compositions_per_pass"])
def test_budgets_are_per_context(budget):
    with AnalysisContext(**{budget: 3}) as ctx:
        assert getattr(current().budgets, budget) == 3
    assert getattr(current().budgets, budget) != 3 or ctx is current()
