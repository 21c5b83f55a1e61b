"""Per-module memos of the answers a module's targets ask again and again."""

from __future__ import annotations

from ..context import current, remember
from .points import gives_pair, predicted_linear, predicted_read_set, predicted_rows_many


def shared_memo(shared: dict | None, name: str, compute):
    """``compute`` memoised in the module's shared memo under ``name``: a module's targets ask
    for the same answers again and again (the same operand maps at the same seeded elements:
    98% of the image asks on gpt12). At most ``Budgets.verify_image_memo`` entries, then afresh.
    Answers are shared: callers only read them."""
    memo = {} if shared is None else shared.setdefault(name, {})
    limit = current().budgets.verify_image_memo

    def memoised(*key):
        hit = memo.get(key)
        return remember(memo, key, compute(*key), limit) if hit is None else hit

    return memoised


def images_memo(shared: dict | None):
    """``predicted_rows_many(maps, points, distinct)``, memoised (``points`` a tuple)."""
    return shared_memo(shared, "images of input-to-output maps", predicted_rows_many)


def gives_memo(shared: dict | None):
    """``gives_pair(checkable, x, y)`` of a set of maps, memoised by the set's identity (``maps``,
    kept in the entry; ``checkable`` is ``checkable_maps(maps)``): targets check the same shared maps
    at the same seeded elements. At most ``Budgets.verify_image_memo`` entries, then afresh."""
    memo = {} if shared is None else shared.setdefault("pairs given by input-to-output maps", {})
    limit = current().budgets.verify_image_memo

    def gives(maps: tuple, checkable: list, x: tuple, y: tuple) -> bool | None:
        key = (id(maps), x, y)
        hit = memo.get(key)
        if hit is None or hit[0] is not maps:
            hit = remember(memo, key, (maps, gives_pair(checkable, x, y)), limit)
        return hit[1]

    return gives


def read_sets_memo(shared: dict | None):
    """``predicted_read_set(maps, point)``, memoised."""
    return shared_memo(shared, "read sets of output-to-input maps", predicted_read_set)


def linear_read_sets_memo(shared: dict | None):
    """``predicted_linear(maps, point, dims)``, memoised."""
    return shared_memo(shared, "linear read sets of output-to-input maps", predicted_linear)
