"""Where command output goes: colour decision, the pager, and a closed pipe.

* Colour: ``--color always|never``, else on when stdout is a terminal, ``NO_COLOR`` is unset and
  ``TERM`` is not ``dumb``.
* Pager (text output of long commands): only when stdout *and* stdin are terminals (so a
  scripted run never waits for a key) and ``--no-pager`` is not given. The command is
  ``HLO_INDEX_PAGER``, else ``PAGER``, else ``less``; ``cat`` or an empty value means none. Output
  is streamed into the pager's stdin as it is produced. ``less`` gets ``LESS=FRX`` when ``LESS``
  is unset (quit when one screen is enough, pass colours, keep the screen) and ``R`` added
  otherwise, so colours are shown as colours, never as ``ESC[1m`` text.
* A reader that goes away (``| head``, ``q`` in the pager) ends the output quietly: the command
  still finishes with its own exit status (0 for a clean ``analyze``).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, TextIO

COLOR_CHOICES = ("auto", "always", "never")


def color_enabled(choice: str, stream: TextIO | None = None) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    stream = stream or sys.stdout
    return _isatty(stream) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def pager_command() -> list[str] | None:
    """The pager to run, or None (``cat``, empty, or not installed)."""
    text = os.environ.get("HLO_INDEX_PAGER")
    if text is None:
        text = os.environ.get("PAGER")
    if text is None:
        text = "less"
    try:
        import shlex

        argv = shlex.split(text)
    except ValueError:
        return None
    import shutil

    if not argv or os.path.basename(argv[0]) == "cat" or shutil.which(argv[0]) is None:
        return None
    return argv


def _pager_env() -> dict:
    env = dict(os.environ)
    less = env.get("LESS")
    if less is None:
        env["LESS"] = "FRX"
    elif "R" not in less.replace("-", ""):
        env["LESS"] = less + " -R"
    env.setdefault("LV", "-c")
    return env


# Characters handed to the stream at once: CPython 3.11's stdout keeps only the first 2,147,479,552
# bytes of one write (Linux's cap on one write(2)) and drops the rest without a word; a --top JSON
# document of XLA's benchmark models is 2.95 GB.
MOST_PER_WRITE = 1 << 28


class SafeStream:
    """A text stream whose reader may leave: a broken pipe stops the output, nothing else."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.broken = False

    def write(self, text: str) -> None:
        if self.broken:
            return
        try:
            if len(text) <= MOST_PER_WRITE:
                self.stream.write(text)
                return
            for start in range(0, len(text), MOST_PER_WRITE):
                self.stream.write(text[start : start + MOST_PER_WRITE])
        except BrokenPipeError:
            self._break()

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._break()

    def copy_range(self, file: IO[bytes], offset: int, length: int) -> int:
        """Copy ``length`` bytes of ASCII text at ``offset`` of ``file`` (what a worker process
        encoded) as they are, by the kernel, where the stream is a file descriptor taking ASCII
        unchanged: not decoded here to be encoded again (a GPU training step's JSON is ~50 MB of
        it). Returns how many bytes from ``offset`` on it wrote (all of them once the reader has
        gone); the caller writes the rest as text (an output the kernel cannot copy to: none)."""
        if self.broken:
            return length
        fd = _byte_fd(self.stream)
        if fd is None:
            return 0
        done = 0
        try:
            self.stream.flush()
            while done < length:
                sent = os.sendfile(fd, file.fileno(), offset + done, length - done)
                if sent == 0:
                    break  # the file ends short: the caller's read says so
                done += sent
        except BrokenPipeError:
            self._break()
            return length
        except OSError:
            pass  # this output takes no kernel copy (EINVAL): the rest as text
        return done

    def _break(self) -> None:
        self.broken = True
        if self.stream is sys.stdout:
            silence_stdout()


def _byte_fd(stream: IO[str]) -> int | None:
    """The file descriptor under ``stream`` where ASCII text goes to it unchanged (an ASCII-compatible
    encoding, no newline translation: ``copy_range`` writes no newline), else None."""
    if not hasattr(os, "sendfile"):
        return None
    try:
        fd = stream.fileno()
        encoding = codecs.lookup(getattr(stream, "encoding", None) or "").name
    except (AttributeError, OSError, ValueError, LookupError, TypeError):  # io.UnsupportedOperation: OSError
        return None
    return fd if encoding in _ASCII_AS_IS else None


# encodings that write ASCII text as its own bytes
_ASCII_AS_IS = frozenset({"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"})


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


@contextlib.contextmanager
def text_output(color: str, pager: bool = True) -> Iterator[tuple[SafeStream, bool]]:
    """``(stream, colour on?)`` for text output: the pager's stdin, or stdout."""
    use_color = color_enabled(color)
    argv = pager_command() if pager and _isatty(sys.stdout) and _isatty(sys.stdin) else None
    if argv is None:
        out = SafeStream(sys.stdout)
        yield out, use_color
        out.flush()
        return
    sys.stdout.flush()
    try:
        import subprocess

        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, env=_pager_env(), text=True, encoding="utf-8", errors="replace"
        )
    except OSError:  # the pager cannot start: write to the terminal directly
        out = SafeStream(sys.stdout)
        yield out, use_color
        out.flush()
        return
    stdin = proc.stdin
    assert stdin is not None  # stdin=PIPE
    out = SafeStream(stdin)
    try:
        yield out, use_color
    finally:
        with contextlib.suppress(BrokenPipeError):
            stdin.close()
        proc.wait()


def echo(text: str) -> None:
    """``text`` and a newline on stdout, quietly stopping if the reader has gone."""
    out = SafeStream(sys.stdout)
    out.write(text + "\n")
    out.flush()


def terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((100, 24)).columns
