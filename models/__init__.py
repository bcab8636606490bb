"""Tables (``models.tables`` registers every one), settings and the database session.

Importing the package imports nothing else, so that ``models.settings`` is cheap for a command that
only needs to know where Loom runs (``loom search`` through the running API)."""
