"""Dramatiq actors, one module a stage, over the pipelines. ``workers.broker`` must be imported
before any actor module; the actor modules import it themselves."""
