"""The program (console script, ``python -m hlo_index``) ends with ``os._exit`` after flushing:
what it writes and its exit status must be those of ``main`` run in process."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from hlo_index.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt"


def _program(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hlo_index", *args], capture_output=True, text=True, timeout=120, cwd=REPO, check=False
    )


def test_program_writes_what_main_writes_and_exits_with_its_status():
    in_process = CliRunner().invoke(main, ["analyze", str(SAMPLE), "--format", "json"])
    program = _program("analyze", str(SAMPLE), "--format", "json")
    assert program.returncode == in_process.exit_code == 0
    assert program.stdout == in_process.stdout and program.stdout.endswith("]}\n")


def test_program_keeps_exit_statuses_1_and_2(tmp_path):
    missing = _program("analyze", str(tmp_path / "missing.hlo"), "--format", "json")
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    usage = _program("analyze")  # click's usage error
    assert usage.returncode == 2 and "Usage" in usage.stderr
    findings = _program("check", str(SAMPLE), "--select", "ALL")
    assert findings.returncode == CliRunner().invoke(main, ["check", str(SAMPLE), "--select", "ALL"]).exit_code


def test_a_damaged_gzip_dump_ends_with_its_error_not_a_traceback(tmp_path):
    whole = tmp_path / "dump.hlo.txt.gz"
    data = gzip.compress(SAMPLE.read_bytes())
    whole.write_bytes(data[:40] + b"\xff" * 20 + data[60:])
    for fmt in ("json", "text"):
        run = _program("analyze", str(whole), "--format", fmt)
        assert run.returncode == 2
        assert f"{whole}: error: cannot read: corrupt gzip data" in run.stderr
        assert "Traceback" not in run.stderr
