"""--jobs hands out files by the size of their text: a gzip file counts as what it holds."""
from __future__ import annotations

import gzip

from hlo_index.render.driver import _size_of


def test_gzip_files_count_their_uncompressed_text(tmp_path):
    text = ("HloModule m\n" + "// " + "x" * 5000 + "\n") * 20
    plain = tmp_path / "a.hlo"
    plain.write_text(text)
    packed = tmp_path / "b.hlo.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert packed.stat().st_size < len(text) // 10
    assert _size_of(str(packed)) == len(text.encode()) == _size_of(str(plain))
    assert _size_of(str(tmp_path / "missing.hlo")) == 0
