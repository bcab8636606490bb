"""What every test process starts from."""

import os

# pytest-xdist's workers (make test spreads the files over them) start with COLUMNS=80 set, which a
# user's shell seldom exports: the CLI's consoles, built at import, would keep that width for good,
# and the tests of the CLI's widths set their own.
os.environ.pop("COLUMNS", None)
