"""What a query's words say about where its answer lies, beyond the words themselves: the dates its
time expressions name ("two weeks ago", "last Saturday", "in March"), read against the moment it is
asked from, and whose words it asks about ("what did you suggest" the assistant's, "my" the user's,
a named speaker's). ``pipelines.hybrid`` adds the candidates each hint picks as a ranked list.

Tuned on the two development sets (bench/ranking_replica.py, bench/README.md): each window is a
little wider than the words, since a session is dated when it began and people round."""

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

NUMBER = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
    "couple of": 2, "few": 3, "several": 4,
}  # fmt: skip
COUNT = r"(\d{1,3}|" + "|".join(sorted(NUMBER, key=len, reverse=True)) + ")"  # the longest first
MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m and m != "May"})
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
# A month named without a day is a time only after one of these ("in March", "since May"): alone it
# is as often a verb ("may", "march") or a name for something ("my September trip").
MONTH_LEADS = {
    "in", "of", "during", "since", "early", "late", "mid", "from", "to", "and", "between", "last", "by",
    "until", "through",
}  # fmt: skip

AGO = re.compile(r"\b" + COUNT + r" (day|week|month|year)s? (ago|back|before today|earlier)")
MONTH_DAY = re.compile(r"\b(" + "|".join(MONTHS) + r")\.? ?(\d{1,2})?(st|nd|rd|th)?\b")
WEEKDAY = re.compile(r"\b(last|past|this|on|previous) (" + "|".join(WEEKDAYS) + r")\b")

Window = tuple[date, date]  # inclusive


def windows(text: str, now: datetime) -> list[Window]:
    """The days the text's time expressions name, ``now`` being when it is asked."""
    q, today = text.lower(), now.date()
    out: list[Window] = []

    def around(center: date, slack: int) -> None:
        out.append((center - timedelta(days=slack), center + timedelta(days=slack)))

    for m in AGO.finditer(q):
        n = NUMBER.get(m.group(1)) or int(m.group(1))
        days, slack = {"day": (1, 1), "week": (7, 3 + n), "month": (30, 10 + 3 * n), "year": (365, 60)}[
            m.group(2)
        ]
        around(today - timedelta(days=days * n), slack)
    if re.search(r"\byesterday\b", q):
        around(today - timedelta(days=1), 1)
    if re.search(r"\b(today|this morning|tonight|this evening|this afternoon)\b(?<!before today)", q):
        around(today, 2)
    if re.search(r"\b(last|past|previous) weekend\b", q):
        saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
        out.append((saturday - timedelta(days=1), saturday + timedelta(days=5)))
    if re.search(r"\bthis weekend\b", q):
        around(today, 7)
    if re.search(r"\b(last|past|previous) week\b", q):
        out.append((today - timedelta(days=14), today))
    if re.search(r"\bthis week\b", q):
        out.append((today - timedelta(days=7), today))
    if re.search(r"\b(last|past|previous) month\b", q):
        out.append((today - timedelta(days=62), today))
    if re.search(r"\bthis month\b", q):
        out.append((today.replace(day=1) - timedelta(days=3), today))
    if few := re.search(r"\b(last|past|previous) (two|2|few|couple of) (weeks|months)\b", q):
        out.append((today - timedelta(days=14 if few.group(3) == "weeks" else 75), today))
    if re.search(r"\blast year\b", q):
        out.append((date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)))
    for m in WEEKDAY.finditer(q):
        around(today - timedelta(days=(today.weekday() - WEEKDAYS[m.group(2)]) % 7 or 7), 1)
    for m in MONTH_DAY.finditer(q):
        day = m.group(2)
        if not day and not set(q[: m.start()].split()[-2:]) & MONTH_LEADS:
            continue
        month = MONTHS[m.group(1)]
        year = today.year if month <= today.month else today.year - 1  # the last such month
        last = calendar.monthrange(year, month)[1]
        if day and 1 <= int(day) <= 31:
            around(date(year, month, min(int(day), last)), 2)
        else:
            out.append(
                (date(year, month, 1) - timedelta(days=2), date(year, month, last) + timedelta(days=14))
            )
    return out


# A question about what the assistant said ("you recommended", "what did you suggest", "can you
# remind me"), else one in the first person: about what the user said. ("Can you tell me" asks the
# assistant now, about anything: only "did you tell" asks what it said.)
ASSISTANT = re.compile(
    r"\byou\b[^?.]*\b(said|told|suggested|recommended|mentioned|gave|provided|listed|shared|wrote|explained|"
    r"helped|came up with|described|made|created|remember|remembered)\b|\b(can|could) you remind me\b|"
    r"\bdid you (say|tell|suggest|recommend|mention|give|provide|list|share|write|explain|describe|make|"
    r"create|propose|come up with)\b|"
    r"\byour (previous|last|earlier) (answer|response|reply|message|suggestion|recommendation)",
    re.IGNORECASE,
)
FIRST_PERSON = re.compile(r"\b(I|my|me|mine|I'm|I've|I'd)\b")


def role(text: str) -> str | None:
    """The role whose words the text asks about: ``assistant``, ``user``, or None."""
    if ASSISTANT.search(text):
        return "assistant"
    if FIRST_PERSON.search(text):
        return "user"
    return None


def speaker(text: str, names: set[str]) -> str | None:
    """The one of ``names`` the text names (as a whole word, as written), if exactly one."""
    named = [name for name in names if re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text)]
    return named[0] if len(named) == 1 else None


@dataclass(frozen=True)
class Origin:
    """When and by whom a hit was said, as far as its corpus knows."""

    ts: datetime
    role: str | None = None
    name: str | None = None
