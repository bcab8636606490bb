"""Dates, and the people of the conversations."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

import datetime as dt
import random
import re

from base import data

# dates

WD = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_DATES = data("dates")  # this section's templates and pools: data/dates.json
MONTHS = _DATES["MONTHS"]


def stamp(t: dt.datetime) -> str:
    return f"{t:%Y/%m/%d} ({WD[t.weekday()][:3]}) {t:%H:%M}"


def fdate(d: dt.date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def fday(d: dt.date) -> str:
    return f"{WD[d.weekday()]}, {fdate(d)}"


def month_of(d: dt.date, delta: int) -> str:
    m = d.month - 1 + delta
    return f"{MONTHS[m % 12]} {d.year + m // 12}"


def when_expr(r: random.Random, t: dt.datetime, tense: str) -> tuple[str, str]:
    """A relative time expression as said at time t, and what it resolves to (the answer)."""
    d = t.date()
    opts: list[tuple[str, str]] = []
    if tense == "past":
        opts += [("yesterday", fday(d - dt.timedelta(1)))] * 2
        if t.hour >= 18:
            opts.append(("last night", fday(d - dt.timedelta(1))))
        if t.hour >= 12:
            opts.append(("this morning", fday(d)))
        k = r.randint(2, 5)
        e = d - dt.timedelta(k)
        opts += [(f"on {WD[e.weekday()]}", fday(e))] * 2
        if d.weekday() <= 3:
            sat = d - dt.timedelta(d.weekday() + 2)
            opts.append(("last weekend", f"the weekend of {sat.day}-{fdate(sat + dt.timedelta(1))}"))
        opts.append(("last week", f"the week before {fdate(d)}"))
        opts.append(
            ("two weeks ago", f"about two weeks before {fdate(d)} (around {fdate(d - dt.timedelta(14))})")
        )
        if d.day >= 8:
            opts.append(("last month", month_of(d, -1)))
    else:
        opts.append(("tomorrow", fday(d + dt.timedelta(1))))
        k = r.randint(2, 5)
        e = d + dt.timedelta(k)
        opts += [(f"this {WD[e.weekday()]}", fday(e)), (f"on {WD[e.weekday()]}", fday(e))]
        opts.append(("next week", f"the week after {fdate(d)}"))
        opts.append(("in two weeks", f"around {fdate(d + dt.timedelta(14))}"))
        opts.append(("next month", month_of(d, 1)))
    return r.choice(opts)


# ----------------------------------------------------------------------------------------------
# people

_PEOPLE = data("people")  # this section's templates and pools: data/people.json
MAIN_F = _PEOPLE["MAIN_F"]
MAIN_M = _PEOPLE["MAIN_M"]
SIDE_F = _PEOPLE["SIDE_F"]
SIDE_M = _PEOPLE["SIDE_M"]
CITIES = _PEOPLE["CITIES"]
JOBS = _PEOPLE["JOBS"]
COMPANIES = _PEOPLE["COMPANIES"]
PRON = {"f": ("she", "her", "her"), "m": ("he", "him", "his")}
REL_G = _PEOPLE["REL_G"]
DOG_NAMES = _PEOPLE["DOG_NAMES"]
CAT_NAMES = _PEOPLE["CAT_NAMES"]


class Person:
    def __init__(self, r: random.Random, name: str, g: str, side_f: list[str], side_m: list[str]):
        side = {"f": side_f, "m": side_m}
        self.name, self.g = name, g
        self.he, self.him, self.his = PRON[g]
        self.city = r.choice(CITIES)
        self.job = r.choice(JOBS)
        self.sib = r.choice(["sister", "brother"])
        self.sibname = side[REL_G[self.sib]].pop()
        self.status = r.choice(["single", "partner", "partner", "married", "engaged"])
        self.pg = ("m" if g == "f" else "f") if r.random() < 0.8 else g
        self.partner = side[self.pg].pop() if self.status != "single" else None
        self.kidrel = (
            r.choice(["daughter", "son"])
            if (self.status == "married" and r.random() < 0.7)
            else r.choice(["niece", "nephew"])
        )
        self.kidname = side[REL_G[self.kidrel]].pop()
        self.kidage = r.randint(4, 10)
        self.pet = None
        if r.random() < 0.55:
            sp = r.choice(["dog", "cat"])
            self.pet = (sp, r.choice(DOG_NAMES if sp == "dog" else CAT_NAMES))
        self.used: set[str] = set()  # kinds this person already has a fact of
        self.verb = r.uniform(0.75, 1.0)  # how often this person adds a second sentence

    def slots(self) -> dict:
        sg = REL_G[self.sib]
        kg = REL_G[self.kidrel]
        d = dict(
            N=self.name,
            he=self.he,
            him=self.him,
            his=self.his,
            city=self.city,
            job=self.job,
            sib=self.sib,
            sibname=self.sibname,
            sibhe=PRON[sg][0],
            sibhim=PRON[sg][1],
            sibhis=PRON[sg][2],
            kidrel=self.kidrel,
            kidname=self.kidname,
            kidhe=PRON[kg][0],
            kidhis=PRON[kg][2],
            kidage=str(self.kidage),
            partner=self.partner or "",
            pet=self.pet[1] if self.pet else "",
            petkind=self.pet[0] if self.pet else "",
            partnerish=self.partner or f"my {self.sib}",
        )
        return d


def fill(t: str, sl: dict) -> str:
    full = dict(sl)
    for k, v in sl.items():
        cap = k[0].upper() + k[1:]
        if isinstance(v, str) and k[:1].islower() and v and cap not in sl:
            full[cap] = v[0].upper() + v[1:]
    out = t.format_map(full)
    out = re.sub(r"\b([Tt]he) the\b", r"\1", out)  # "the {place}" with place = "the Amalfi coast"
    return re.sub(
        r"\b([Aa]) (?=(?:acrylic|oil|orange|old|evening|online|open|olympic|analyst)\b)", r"\1n ", out
    )


# Who a kind can happen to (a kind's req, named in data/*.json).
def partner_only(o):
    return o.status == "partner"


def no_dog(o):
    return not o.pet or o.pet[0] != "dog"


def no_cat(o):
    return not o.pet or o.pet[0] != "cat"


def has_pet(o):
    return o.pet is not None


def engaged_only(o):
    return o.status == "engaged"


def single_only(o):
    return o.partner is None


CONDITIONS = {f.__name__: f for f in (partner_only, no_dog, no_cat, has_pet, engaged_only, single_only)}
