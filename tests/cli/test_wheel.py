"""A built wheel, installed in a fresh venv, runs every command (not only an editable checkout).

The wheel is built from a copy of the sources (so the checkout gets no build/ or egg-info) and
installed without dependencies; the venv reaches lark / rich / click / numpy through a ``.pth``
line naming this interpreter's site-packages, so the test needs no network for them. Whatever
``hlo_index`` the venv imports must come from the wheel: the test checks the module's file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt"


def _run(args, cwd, **kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(NO_COLOR="1", COLUMNS="120", HLO_INDEX_PAGER="cat")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False, **kw)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in ("hlo_index", "grammar"):
        shutil.copytree(REPO / name, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(dist)], tmp)
    if built.returncode != 0 and (
        "No matching distribution" in built.stderr or "Could not find a version" in built.stderr
    ):
        pytest.skip("pip cannot reach an index for the build backend (setuptools)")
    assert built.returncode == 0, built.stderr
    [wheel] = dist.glob("hlo_index-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(
        subprocess.run(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # dependencies only: a plain path line, so the checkout's editable hook (a .pth there) is not run
    (purelib / "_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    installed = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        tmp,
    )
    assert installed.returncode == 0, installed.stderr
    return venv, tmp


def test_the_wheel_holds_the_grammar_and_is_what_runs(wheel_venv):
    venv, tmp = wheel_venv
    out = _run(
        [
            venv / "bin" / "python",
            "-c",
            "import hlo_index, hlo_index.hlo.parser as p; print(hlo_index.__file__); print(hlo_index.__version__)",
        ],
        tmp,
    )
    assert out.returncode == 0, out.stderr
    path, version = out.stdout.split()
    assert str(venv) in path and str(REPO) not in path
    assert version[0].isdigit()


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--version"], "version"),
        (["analyze", str(SAMPLE), "--top", "3"], "fusion"),
        (["analyze", str(SAMPLE), "--format", "json"], '"schema"'),
        (["check", str(SAMPLE), "--exit-zero"], "fusion"),
        (["stats", str(SAMPLE)], "fusions"),
        (["bubble", str(SAMPLE)], "module"),
        (["tile", str(SAMPLE), "--fusion", "ynn_fusion.5", "--tile", "2,4"], "tile"),
        (["layout", "f32[4,4]{1,0:T(2,2)}"], "0"),
        (["simplify", "(d0) -> (d0 floordiv 8 * 8 + d0 mod 8), domain: d0 in [0, 31]"], "(d0) -> (d0)"),
        (["compose", "(d0) -> (d0 + 1), domain: d0 in [0, 9]", "(d0) -> (d0 * 2), domain: d0 in [0, 4]"], "d0 * 2 + 1"),
    ],
)
def test_every_command_runs_from_the_wheel(wheel_venv, args, expect):
    venv, tmp = wheel_venv
    out = _run([venv / "bin" / "hlo-index", *args], tmp)
    assert out.returncode == 0, out.stderr
    assert expect in out.stdout
    assert "Traceback" not in out.stderr


def test_python_dash_m_runs_the_cli(wheel_venv):
    venv, tmp = wheel_venv
    out = _run([venv / "bin" / "python", "-m", "hlo_index", "stats", str(SAMPLE), "--format", "json"], tmp)
    assert out.returncode == 0, out.stderr
    assert '"fusions"' in out.stdout
