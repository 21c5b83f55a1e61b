"""Settings from ``pyproject.toml``'s ``[tool.hlo-index]`` table (the nearest one at or above the
working directory), like other linters. Command-line options win over the file.

    [tool.hlo-index]
    select = ["HI001", "HI900"]     # rule codes or prefixes ("ALL")
    ignore = []
    allow = ["fused_computation.1*", "rope_*"]
    baseline = "hlo-index-baseline.json"   # relative to the pyproject.toml
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

KEYS = {"select", "ignore", "allow", "baseline", "exit-zero"}


def find_pyproject(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


class ConfigError(ValueError):
    pass


def load_settings(start: Path | None = None) -> dict:
    """The ``[tool.hlo-index]`` table (empty when none), with ``baseline`` made absolute."""
    path = find_pyproject(start)
    if path is None:
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("hlo-index", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: error: cannot read [tool.hlo-index]: {exc}") from None
    unknown = set(table) - KEYS
    if unknown:
        raise ConfigError(
            f"{path}: error: unknown key(s) in [tool.hlo-index]: {', '.join(sorted(unknown))} "
            f"(known: {', '.join(sorted(KEYS))})"
        )
    for key in ("select", "ignore", "allow"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: error: [tool.hlo-index] {key} must be a list of strings")
    if "baseline" in table:
        table["baseline"] = os.path.join(path.parent, table["baseline"])
    table["_path"] = str(path)
    return table
