"""What ``hlo-index analyze`` of a small CPU module imports: its fixed cost is interpreter start-up,
click and these imports, so the modules that only other dumps, options or outputs need stay out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SMALL = """HloModule tiny

ENTRY main {
  p = f32[8,16]{1,0} parameter(0)
  ROOT n = f32[8,16]{1,0} negate(p)
}
"""

# the program's own run, its modules written to stderr at its ``os._exit``
_RUN = """import os, sys
exit_now = os._exit
def report(code):
    sys.stderr.write("\\n".join(sorted(sys.modules)) + "\\n")
    exit_now(code)
os._exit = report
sys.argv = ["hlo-index", *sys.argv[1:]]
from hlo_index.cli import run
run()
"""

NEVER = (
    "numpy",  # per-operand figures of bigger modules, the reference, --verify
    "rich",  # text output
    "lark",  # the grammar's parser (the lexer and the direct reader read HLO)
    "hlo_index.analyses.gpu_devices",  # GPU targets and --device
    "hlo_index.analyses.emitters",
    "hlo_index.analyses.emitter_plans",
    "hlo_index.ops.windows",  # gather and scatter
    "gzip",  # .gz dumps
    "pkgutil",
)


def test_small_cpu_module_to_json_leaves_the_rest_unimported(tmp_path):
    path = tmp_path / "tiny.hlo"
    path.write_text(SMALL)
    run = subprocess.run(
        [sys.executable, "-c", _RUN, "analyze", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert '"verdict": "vectorisable"' in run.stdout
    imported = set(run.stderr.split())
    assert "hlo_index.analyses.cost.target_cost" in imported  # the run did analyse and cost the module
    assert sorted(name for name in NEVER if name in imported) == []
