"""Output in a real (pseudo-)terminal, through the pager, and into pipes that close early."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt"
HLO_INDEX = [sys.executable, "-m", "hlo_index"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LESS", "PAGER", "HLO_INDEX_PAGER", "NO_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="100", LINES="24", **extra)
    return env


def run_in_pty(argv, env, keys: bytes = b"q", settle: float = 1.5, timeout: float = 120.0):
    """Run ``argv`` with a pseudo-terminal as its controlling terminal; once its output has been quiet
    for ``settle`` seconds, type ``keys``. Returns (exit status or None if it never ended, output bytes)."""
    import fcntl
    import pty
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # child: the pty is its stdin, stdout, stderr and controlling terminal
        try:
            os.chdir(REPO)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    out = bytearray()
    sent = False
    last = time.monotonic()
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                out += chunk
                last = time.monotonic()
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
            break
        if not sent and out and time.monotonic() - last > settle:
            os.write(fd, keys)
            sent = True
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    os.close(fd)
    return status, bytes(out)


@pytest.mark.skipif(shutil.which("less") is None, reason="no less installed")
def test_analyze_in_a_terminal_pages_colours_and_quits_on_q():
    status, out = run_in_pty(HLO_INDEX + ["analyze", str(SAMPLE)], _env())
    assert status == 0, out[-2000:]
    assert b"ESC[" not in out  # colours reach the terminal as colours, not as text
    assert b"\x1b[" in out and b"fusion" in out


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("less") is None or not (REPO / ".venv" / "bin" / "hlo-index").exists(),
    reason="needs make, less and .venv",
)
def test_make_run_in_a_terminal_shows_no_escape_text_and_returns_after_q():
    status, out = run_in_pty(["make", "-s", "run"], _env())
    assert status == 0, out[-2000:]
    assert b"ESC[" not in out and b"fusion" in out


def test_no_pager_and_pager_cat_write_straight_to_the_terminal():
    for extra, args in (({}, ["--no-pager"]), ({"HLO_INDEX_PAGER": "cat"}, []), ({"PAGER": "cat"}, [])):
        status, out = run_in_pty(HLO_INDEX + ["analyze", str(SAMPLE), *args], _env(**extra), keys=b"")
        assert status == 0
        assert b"summary" in out and b"ESC[" not in out


def test_stdin_not_a_terminal_never_waits_for_a_key():
    """Like a run under ``script`` or CI: stdout may be a terminal, but nobody types."""
    result = subprocess.run(
        HLO_INDEX + ["analyze", str(SAMPLE), "--color", "always"],
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0 and b"\x1b[" in result.stdout


def test_piped_output_is_plain_and_head_exits_0():
    run = subprocess.run(
        HLO_INDEX + ["analyze", str(SAMPLE)], env=_env(), capture_output=True, timeout=120, cwd=REPO, check=False
    )
    assert run.returncode == 0 and b"\x1b[" not in run.stdout
    for fmt in ("text", "json"):
        pipeline = subprocess.run(
            [
                "bash",
                "-o",
                "pipefail",
                "-c",
                f'"$0" -m hlo_index analyze "$1" "$1" "$1" "$1" "$1" "$1" --format {fmt} | head -c 100 > /dev/null',
                sys.executable,
                str(SAMPLE),
            ],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            check=False,
        )
        assert pipeline.returncode == 0, pipeline.stderr
        assert "Traceback" not in pipeline.stderr and "BrokenPipe" not in pipeline.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["stats", *[str(SAMPLE)] * 12],
        ["layout", "f32[64,64]{1,0:T(8,8)}", "--color", "always"],
        ["check", *[str(SAMPLE)] * 6, "--select", "ALL", "--exit-zero"],
    ],
    ids=lambda a: a[0],
)
def test_every_text_command_exits_0_into_head(args):
    quoted = " ".join(f"'{a}'" for a in args)
    pipeline = subprocess.run(
        ["bash", "-c", f'"$0" -m hlo_index {quoted} | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}', sys.executable],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert pipeline.returncode == 0, pipeline.stderr
    assert "Traceback" not in pipeline.stderr and "error" not in pipeline.stderr


def test_hlo_index_pager_wins_over_pager_and_gets_the_whole_coloured_stream(tmp_path):
    paged = tmp_path / "paged.txt"
    status, _ = run_in_pty(
        HLO_INDEX + ["analyze", str(SAMPLE)], _env(HLO_INDEX_PAGER=f"tee {paged}", PAGER="false"), keys=b""
    )
    assert status == 0
    text = paged.read_bytes()
    assert b"\x1b[" in text and b"summary" in text and text.rstrip().splitlines()[-1].startswith(b"\x1b[1mtotal:")


def test_stats_counts_a_directory_file_by_file_for_its_progress_bar(tmp_path, monkeypatch):
    """``stats`` of a dump directory advances its bar once per file (the bar shows only on a
    terminal: its callback is watched here), and the bar changes nothing it prints."""
    import contextlib
    import json

    from click.testing import CliRunner

    from hlo_index.cli import cmd_analyze, main

    for k in range(3):
        (tmp_path / f"module_000{k}.jit_f{k}.cpu_after_optimizations.txt").write_text(SAMPLE.read_text())
    done: list = []

    @contextlib.contextmanager
    def watched(paths):
        yield done.append, None

    runner = CliRunner()
    whole = runner.invoke(main, ["stats", str(tmp_path), "--format", "json"])
    monkeypatch.setattr(cmd_analyze, "progress_bar", watched)
    watched_run = runner.invoke(main, ["stats", str(tmp_path), "--format", "json"])
    assert watched_run.exit_code == whole.exit_code == 0
    assert len(done) == 3
    assert watched_run.stdout == whole.stdout
    assert len(json.loads(whole.stdout)["modules"]) == 3
