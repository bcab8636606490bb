"""The ``loom`` command's groups, one module each (mirroring ``ops/``); ``cli.py`` at the top level
is the command itself, and imports a group's module only when that group runs."""
