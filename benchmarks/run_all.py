"""`make bench`: run every benchmark script in this folder; each prints a table and writes JSON
to benchmarks/results/."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["parse.py", "simplify.py", "map_text.py", "analyze.py", "commands.py"]


def main() -> int:
    (HERE / "results").mkdir(exist_ok=True)
    scripts = [HERE / name for name in ORDER if (HERE / name).exists()]
    scripts += sorted(p for p in HERE.glob("*.py") if p.name not in ORDER and p.name != Path(__file__).name)
    failed = 0
    for script in scripts:
        print(f"== {script.name}", flush=True)
        failed += subprocess.call([sys.executable, str(script)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
