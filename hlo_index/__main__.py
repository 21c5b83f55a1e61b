"""``python -m hlo_index``: the ``hlo-index`` command line."""
from .cli import main

if __name__ == "__main__":
    main(prog_name="hlo-index")
