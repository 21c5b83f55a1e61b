"""``python -m hlo_index``: the ``hlo-index`` command line."""

from .cli import run

if __name__ == "__main__":
    run()
