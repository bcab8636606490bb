"""What was made from turns before a re-screening judged them high, withdrawn in the judging
transaction (``pipelines.screening.rescreening``): a turn that reads as high is never embedded, searched or
sent to a model, and neither is anything a model or the search made of it while older rules let it
through.

- a compaction summary naming the turn among those it replaced reads as high (its embedding row is
  deleted, search and the dashboard withhold it, as they do the turn);
- the evidence copy an extraction kept of the turn reads as high (``memory.recall`` and the next
  extraction skip it), and every memory thread citing that evidence is cut;
- a title the titler made for the turn's thread is cleared (a title the client set is kept).
"""

from sqlmodel import Session

from models.base import utcnow
from models.conversation import Turn
from models.queries import derived as queries
from models.queries import embeddings


def withdraw(s: Session, turns: list[Turn]) -> dict[str, int]:
    """Withdraw what was derived from ``turns`` (now high); the counts of what changed."""
    if not turns:
        return {}
    keys = {
        "namespaces": [t.namespace for t in turns],
        "threads": [t.thread_id for t in turns],
        "agents": [t.agent for t in turns],
        "msg_ids": [t.msg_id for t in turns],
    }
    summaries = list(s.execute(queries.SUMMARIES_HIGH, keys).scalars())
    if summaries:
        s.execute(embeddings.DELETE_OF_TURNS, {"ids": summaries})
    evidence = list(s.execute(queries.EVIDENCE_HIGH, keys).scalars())
    cut = (
        list(s.execute(queries.CUT_CITING, {"evidence": evidence, "now": utcnow()}).scalars())
        if evidence
        else []
    )
    titles = list(s.execute(queries.TITLES_CLEARED, keys).scalars())
    return {
        "summaries": len(summaries),
        "evidence": len(evidence),
        "memory_cut": len(cut),
        "titles": len(titles),
    }
