"""Statement parts every ledger module shares."""

from sqlalchemy import ColumnElement
from sqlmodel import col, select
from sqlmodel.sql.expression import SelectOfScalar

from models.stage_run import StageRun

BATCH = 500  # runs a sweep or an operator retry touches per statement
Chosen = SelectOfScalar[int | None]  # a select of run ids (``StageRun.id``, typed None until stored)


def among(chosen: Chosen) -> ColumnElement[bool]:
    """``id IN`` the runs ``chosen`` locks, selected once. Not a plain ``IN (SELECT … LIMIT n FOR
    UPDATE SKIP LOCKED)``: a plan may scan that subquery again for every row of the outer table, and
    each rescan skips the rows this statement already changed and locks n more, so a claim, sweep or
    retry would take every matching run instead of n. A materialised CTE is evaluated exactly once."""
    once = chosen.cte("chosen").prefix_with("MATERIALIZED")
    return col(StageRun.id).in_(select(once.c.id))
