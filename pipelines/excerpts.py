"""The excerpt of a lexical hit: the text around the first word of the query it holds, so a term
deep in a long turn shows (the query's words, or their first five letters, which catches the
other forms a stemmed match finds: "deploys" for "deployment")."""

import re

WORD = re.compile(r"\w{3,}")
LEAD = 3  # the excerpt starts this share of its length before the match


def around(content: str, query: str, chars: int) -> str:
    words = {w.lower() for w in WORD.findall(query)}
    if not words:
        return content[:chars]
    stems = "|".join(re.escape(w[:5]) for w in sorted(words, key=len, reverse=True))
    match = re.search(rf"\b(?:{stems})", content, re.IGNORECASE)
    if match is None or match.start() < chars // LEAD:
        return content[:chars]
    start = match.start() - chars // LEAD
    space = content.rfind(" ", start - 20, start)  # start at a word
    start = space + 1 if space >= 0 else start
    return content[start : start + chars]
