"""``python -m cli``: the ``loom`` command without its console script."""

import sys

from cli import app

if __name__ == "__main__":
    sys.exit(app())
