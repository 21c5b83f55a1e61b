"""Real modules, each edited a few times (``mutations.py``): hlo-index answers every mutant with maps
or with an error at a position (exit 0, 1 or 2), never with an internal failure or a traceback.
The edits are seeded: a failure here names its seed, and the same mutant comes back."""

from __future__ import annotations

import glob
import os
import random

import pytest
from click.testing import CliRunner

from hlo_index.cli import main

from .mutations import mutate, texts_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
MUTANTS = 600
COMMANDS = [
    ["analyze", "-", "--format", "json", "--direction", "both"],
    ["analyze", "-", "--format", "json", "--target", "tpu"],
    ["analyze", "-", "--format", "json", "--device", "h100_sxm"],
    ["check", "--verify", "-"],
    ["stats", "-"],
]


def _bases() -> list[str]:
    """The samples, and where ``../shared`` is here, its small corpus and field modules and every
    50th small module of XLA's tests."""
    paths = sorted(glob.glob(os.path.join(ROOT, "samples", "*.txt")))
    paths += sorted(p for p in glob.glob(os.path.join(SHARED, "corpus", "*", "*.txt")) if os.path.getsize(p) < 40_000)
    paths += sorted(p for p in glob.glob(os.path.join(SHARED, "field", "*", "*")) if os.path.getsize(p) < 40_000)
    tests = sorted(glob.glob(os.path.join(SHARED, "conformance", "xla_hlo", "*", "*.hlo")))
    paths += [p for p in tests if os.path.getsize(p) < 8_000][::50]
    return texts_of(paths)


BASES = _bases()


@pytest.mark.parametrize("seed", range(MUTANTS))
def test_a_mutant_is_answered_never_failed_on(seed):
    rng = random.Random(seed)
    text = rng.choice(BASES)
    for _ in range(rng.randint(1, 3)):
        text = mutate(text, rng)
    args = rng.choice(COMMANDS)
    result = CliRunner().invoke(main, args, input=text)
    failure = result.exception if not isinstance(result.exception, SystemExit) else None
    assert failure is None, f"seed {seed}: {type(failure).__name__}: {failure}"
    assert result.exit_code in (0, 1, 2), (seed, result.exit_code)
    internal = [line for line in result.output.splitlines() if "internal: " in line]
    assert not internal, f"seed {seed} ({' '.join(args)}): {internal[0][:300]}"
