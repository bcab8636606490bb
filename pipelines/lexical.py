"""The lexical leg of conversation.search: BM25 over the English full-text vectors of the turns
(``turns.lexemes``, migration 0013: the whole text up to 200,000 characters, stemmed, without stop
words) and of their contexts (``turns.context_lexemes``, migration 0032: the previous said turn's
words when it is short, ``pipelines.contexts``), computed in PostgreSQL.

The query's lexemes (as ``to_tsvector`` makes them) select the candidates through the GIN indexes:
the indexed turns in scope holding the rarest of them in their own words or their context's,
within a budget (``bringing``). Each is scored with BM25 proper, over all the query's lexemes,

    sum over query lexemes t in the turn:  idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

with tf the lexeme's positions in the turn and its context and dl their words
(``turns.lexical_length + turns.context_length``). The corpus is the turns of the search's
namespaces: df per lexeme (the turns whose own words or context hold it) is counted per query
(exactly up to ``EXACT_DF``, estimated past it from the turns' own lexemes). N, avgdl and the dfs
counted are kept (``Corpus``) while the namespaces' turns, as their threads count them (one row a
thread), are within ``DRIFT`` of what they were when counted, and counted again as soon as they are
not, or a fresh df exceeds the N kept: statistics kept from before a namespace filled up would
rank every turn below zero. Within the drift, a kept df is off by at most twice the turns that
moved (a turn holds a word in its own text and in the next one's context).

The same leg ranks the other documents with lexemes (``models.queries.search.Documents``): one
user's saved messages, a loom's memory threads and the messages its extractions read, each a small
corpus of its own counted per query, with no context. Its statements are ``models.queries.search``'s."""

import math
import time
from dataclasses import dataclass, field

from sqlmodel import Session

from models.queries import filled
from models.queries import search as queries
from models.queries.search import TURNS, Documents

# Tuned on both development sets within the usual ranges (bench/README.md): turns range from a word
# to pages, and a document is a turn with its context, so full length normalisation (b 1) keeps long
# answers from matching everything (the LongMemEval file 0.653 -> 0.663 at recall@10, every question
# type at or above; the short-turn dialogues, whose lengths vary little, within one evidence turn).
K1, B = 1.5, 1.0
# A lexeme's document frequency is counted exactly up to this many turns. Past it, counting costs
# more than the exact figure is worth (a word that common weighs little either way): its share of
# the table's turns, as ANALYZE found it (``table_shares``), scaled to the corpus, stands for it.
EXACT_DF = 2_000
# A query word held by more than this share of the corpus (and by more than COMMON_MIN_TURNS turns)
# brings no candidate of its own: it still scores the turns the query's rarer words
# bring. On the LongMemEval file this keeps recall@10 (0.638) and scores a median of 1,823 turns a
# question instead of 2,952 (bench/README.md); a query of common words only is answered from all.
COMMON, COMMON_MIN_TURNS = 0.10, 100
# The rarest query words bring candidates while the turns holding them number at most this many
# (the rarest word always does), so the turns scored do not grow with the corpus:
# bench/lexical_scale.py.
CANDIDATE_BUDGET = 5_000
# N and avgdl are counted again once the namespaces' turns moved by more than this share since
# they were counted: counting them cost 16 ms a query at 10,866 turns (LongMemEval), and grows with
# the corpus.
DRIFT = 0.01
SHARES_SECONDS = 60.0  # the common lexemes' shares (``table_shares``) are read at most this often

KEPT_DFS = 50_000  # the dfs a corpus keeps at most (past it, they are counted afresh)


@dataclass
class Corpus:
    """The statistics of the turns of some namespaces, as counted when they held ``turns``."""

    turns: int  # as their threads count them (THREAD_TURNS)
    n: int
    avgdl: float
    dfs: dict[str, int] = field(default_factory=dict)  # lexeme -> df, as counted since


_corpus: dict[tuple[str, ...], Corpus] = {}  # by namespaces, sorted
_shares: tuple[float, dict[str, float]] = (float("-inf"), {})  # (when, lexeme -> share of turns)


@dataclass(frozen=True)
class Scored:
    id: int  # the document's (Documents.id_column)
    score: float


def query_lexemes(s: Session, query: str) -> list[str]:
    lexemes = s.execute(queries.QUERY_LEXEMES, {"q": query})
    return list(lexemes.scalars())


def corpus(s: Session, namespaces: list[str], recount: bool = False) -> Corpus:
    """The statistics of the indexed turns of these namespaces: as counted while their threads'
    turns stay within DRIFT of what they were then, else (or when ``recount``) counted now."""
    key = tuple(sorted(namespaces))
    turns = s.execute(queries.THREAD_TURNS, {"namespaces": list(key)}).scalar_one()
    seen = _corpus.get(key)
    if recount or seen is None or abs(turns - seen.turns) > DRIFT * seen.turns:
        n, avgdl = s.execute(queries.CORPUS, {"namespaces": list(key)}).one()
        seen = _corpus[key] = Corpus(turns, int(n), max(float(avgdl), 1.0))
    return seen


def idf(n: int, df: int) -> float:
    """BM25's idf, never below zero (a df above N, from statistics that lag, weighs nothing)."""
    return math.log(1 + max(0.0, n - df + 0.5) / (df + 0.5))


def bringing(dfs: dict[str, int], n: int) -> list[str]:
    """The query words that bring candidates, given each word's document frequency: the rarest
    first, while the turns holding them number at most ``CANDIDATE_BUDGET``, never a common one
    (``COMMON``) but for the rarest word some turn holds, which always does. A word no turn holds
    brings nothing and is left out."""
    chosen: list[str] = []
    held = 0
    for lexeme, df in sorted(
        ((lexeme, df) for lexeme, df in dfs.items() if df), key=lambda item: (item[1], item[0])
    ):
        held += df
        common = df > max(COMMON * n, COMMON_MIN_TURNS)
        if not chosen or (not common and held <= CANDIDATE_BUDGET):
            chosen.append(lexeme)
    return chosen


def table_shares(s: Session) -> dict[str, float]:
    """Each common lexeme's share of all turns, read at most every SHARES_SECONDS."""
    global _shares
    if time.monotonic() - _shares[0] > SHARES_SECONDS:
        _shares = (
            time.monotonic(),
            {lexeme: float(share or 0) for lexeme, share in s.execute(queries.TABLE_SHARES)},
        )
    return _shares[1]


def frequencies(
    s: Session, lexemes: list[str], within: str, params: dict, n: int, documents: Documents = TURNS
) -> dict[str, int]:
    """Each lexeme's document frequency among the ``n`` documents ``within`` admits: counted up
    to EXACT_DF, estimated past it (from the turns' statistics)."""
    statement = filled(
        queries.FREQUENCIES,
        counted=documents.counted,
        table=documents.table,
        within=within,
        indexed=documents.indexed,
        holding=documents.holding(queries.LEXEME),
    )
    rows = s.execute(statement, {**params, "lexemes": lexemes, "exact": EXACT_DF}).all()
    counted = dict(rows)
    if any(df >= EXACT_DF for df in counted.values()):
        shares = table_shares(s)
        for lexeme, df in counted.items():
            if df >= EXACT_DF:
                counted[lexeme] = min(n, max(df, round(shares.get(lexeme, 0.0) * n)))
    return counted


def _turn_frequencies(s: Session, kept: Corpus, lexemes: list[str], params: dict) -> dict[str, int]:
    """The lexemes' dfs among the turns ``kept`` counts: those it holds, the others counted now
    (and kept, up to KEPT_DFS)."""
    missing = [lexeme for lexeme in lexemes if lexeme not in kept.dfs]
    counted = frequencies(s, missing, queries.IN_NAMESPACES, params, kept.n) if missing else {}
    if len(kept.dfs) + len(counted) > KEPT_DFS:
        kept.dfs.clear()
    kept.dfs.update(counted)
    return {lexeme: kept.dfs.get(lexeme, counted.get(lexeme, 0)) for lexeme in lexemes}


def search(
    s: Session,
    lexemes: list[str],
    scope: str,
    params: dict,
    limit: int,
    own_corpus: str | None = None,
    documents: Documents = TURNS,
) -> list[Scored]:
    """The best ``limit`` documents by BM25 among those ``scope`` (a SQL condition on ``t`` with
    its ``params``) admits. The corpus is the turns of the ``namespaces`` the params name, or the
    documents ``own_corpus`` (a condition like ``scope``, on the same params) admits, counted for
    this query: a small corpus of its own, such as one user's saved messages or a loom."""
    if not lexemes:
        return []
    # Planned for these very words: psycopg prepares a statement run 5 times on a connection, and
    # PostgreSQL may then plan it once for any words, a plan that reads every partition for each
    # word's df (706 ms against 105 ms at 31,000 turns).
    s.execute(queries.CUSTOM_PLANS)
    if own_corpus is not None:
        statement = filled(
            queries.OWN_CORPUS,
            number=documents.number,
            length=documents.length,
            table=documents.table,
            indexed=documents.indexed,
            own_corpus=own_corpus,
        )
        n, avgdl = s.execute(statement, params).one()
        n, avgdl = int(n), max(float(avgdl), 1.0)
        dfs = frequencies(s, lexemes, own_corpus, params, n, documents)
    else:
        kept = corpus(s, params["namespaces"])
        dfs = _turn_frequencies(s, kept, lexemes, params)
        if max(dfs.values(), default=0) > kept.n:  # the namespace grew since it was counted
            kept = corpus(s, params["namespaces"], recount=True)
            dfs = _turn_frequencies(s, kept, lexemes, params)
        n, avgdl = kept.n, kept.avgdl
    brought_by = bringing(dfs, n)
    if not brought_by:
        return []
    weights = {lexeme: idf(n, df) for lexeme, df in dfs.items()}
    statement = filled(
        queries.BM25,
        id_column=documents.id_column,
        table=documents.table,
        indexed=documents.indexed,
        words=documents.words,
        tf=documents.tf,
        length=documents.length,
        holding=documents.holding(queries.QUERY),
        scope=scope,
    )
    rows = s.execute(
        statement,
        {
            **params,
            "lexemes": list(weights),
            "weights": list(weights.values()),
            "bringing": brought_by,
            "k1": K1,
            "b": B,
            "avgdl": avgdl,
            "limit": limit,
        },
    ).all()
    return [Scored(found, float(score)) for found, score in rows]
