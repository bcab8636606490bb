#!/usr/bin/env python3
"""Generate the short-turn dialogue development set (bench/dialogues/short_turns.json).

    python3 bench/dialogues/make.py [--out PATH] [--no-check]

Twelve synthetic two-person chat histories (LoCoMo-like: short turns, many sessions over months) and
about 300 questions about them, in the LongMemEval record format the benchmark loader reads. Standard
library only, fixed seed: two runs write byte-identical JSON. It prints a summary and a word-overlap
sanity check (a plain lexical ranker must not find context-dependent evidence; it should usually find
single-hop evidence). See README.md in this folder.
"""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

SEED = 20240917
HERE = Path(__file__).resolve().parent
OUT = HERE / "short_turns.json"
N_CONV = 12
PARA_SINGLE = 0.2  # share of single-hop questions worded away from their evidence (<= 1 shared word)
PARA_OTHER = 0.15  # the same for temporal and knowledge-update questions
PARA_MULTI = 0.1  # the same for multi-hop questions (pets and the like are worded away anyway)


def data(name: str) -> dict:
    """The templates and word pools of one section below, kept as data in data/<name>.json."""
    return json.loads((HERE / "data" / f"{name}.json").read_text(encoding="utf-8"))


def linked(value):
    """`value` (read from data/) with each {"$": name} made the module-level object of that name:
    a kind's slot function or condition."""
    if isinstance(value, dict):
        if value.keys() == {"$"}:
            return globals()[value["$"]]
        return {k: linked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [linked(v) for v in value]
    return value


# ----------------------------------------------------------------------------------------------
# words: content words, a light stemmer (the same one the sanity check ranks with)

STOP = set(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves im ive id ill youre youve dont didnt
    cant wont isnt wasnt couldnt doesnt arent havent don didn can won isn wasn couldn doesn aren haven
    get got gets getting go goes going gone went gonna wanna gotta also still even really much many
    lol haha hahaha omg ok okay oh yeah yes yep nope yay hey hi hii wow like lot lots bit thing things
    one ones s t re ve ll d m u ur rn tho btw thats theres whats hes shes its let lets yet ever every
    let's it's that's what's he's she's there's who's here's i'm i've i'd i'll you're you've you'd
    we're we've they're they've can't won't don't didn't isn't wasn't doesn't aren't haven't hasn't
    hadn't couldn't wouldn't shouldn't ain't gonna y'all kind sort something anything everything
    nothing someone anyone everyone well new good great""".split()
)
# "new", "good", "great" are so common in chat that they are treated as stop words.

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def stem(w: str) -> str:
    stripped = False
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w, stripped = w[:-3], True
    elif len(w) > 4 and w.endswith("ed"):
        w, stripped = w[:-2], True
    elif len(w) > 4 and w.endswith("es") and w[-3] in "sxz":
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if stripped and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def tokens(text: str) -> list[str]:
    """Content-word stems of a text, in order, with repeats (for BM25)."""
    out = []
    for t in _TOKEN.findall(text.lower().replace("\u2019", "'")):
        if t in STOP:
            continue
        t = re.sub(r"'(s|re|ve|ll|d|m|t)$", "", t)
        if not t or t in STOP:
            continue
        out.append(stem(t))
    return out


def content(text: str) -> set[str]:
    return set(tokens(text))


# ----------------------------------------------------------------------------------------------
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


# ----------------------------------------------------------------------------------------------
# statement kinds: one person states a fact. say = plain statements, say_t = with a relative time
# ({when}/{When}), echo = the listener restating part of it, follow = (listener question, answer),
# q = (question, answer) templates valid for every say/say_t variant, tq = the temporal question.

_STATEMENTS = data("statements")  # this section's templates and pools: data/statements.json
PLACES = _STATEMENTS["PLACES"]
HIGHLIGHTS = _STATEMENTS["HIGHLIGHTS"]
BANDS = _STATEMENTS["BANDS"]
VENUES = _STATEMENTS["VENUES"]
RACES = [
    ("half marathon", lambda r: f"1:{r.randint(44, 59)}:{r.randint(10, 59)}"),
    ("10K", lambda r: f"{r.randint(44, 64)}:{r.randint(10, 59)}"),
    ("5K", lambda r: f"{r.randint(22, 33)}:{r.randint(10, 59)}"),
    ("trail race", lambda r: f"2:{r.randint(5, 40)}:{r.randint(10, 59)}"),
    ("sprint triathlon", lambda r: f"1:{r.randint(15, 45)}:{r.randint(10, 59)}"),
]
COLORS = _STATEMENTS["COLORS"]


def s_instrument(r, o):
    return dict(
        inst=r.choice(
            [
                "cello",
                "violin",
                "piano",
                "ukulele",
                "saxophone",
                "drums",
                "trumpet",
                "banjo",
                "mandolin",
                "flute",
                "clarinet",
                "harp",
                "accordion",
                "bass guitar",
            ]
        ),
        teacher=r.choice(SIDE_F),
    )


def s_dog(r, o):
    return dict(
        breed=r.choice(
            [
                "beagle",
                "corgi",
                "golden retriever",
                "border collie",
                "dachshund",
                "greyhound",
                "labrador",
                "shiba inu",
                "poodle mix",
                "jack russell",
                "boxer",
                "whippet",
            ]
        ),
        dog=r.choice([n for n in DOG_NAMES if n != (o.pet or ("", ""))[1]]),
    )


def s_cat(r, o):
    return dict(
        cat=r.choice(
            ["tabby", "black", "ginger", "tortoiseshell", "grey", "calico", "white", "fluffy orange"]
        ),
        catname=r.choice([n for n in CAT_NAMES if n != (o.pet or ("", ""))[1]]),
    )


def s_painting(r, o):
    rel = r.choice(["mom", "dad", "grandma", o.sib, o.sib])
    return dict(
        rel=rel,
        medium=r.choice(["watercolor", "oil painting", "acrylic painting"]),
        subject=r.choice(
            [
                "the house we grew up in",
                "the lake we used to camp at",
                "a field of sunflowers",
                "the beach at sunset",
                "a lighthouse from our childhood holidays",
                "the family cabin",
                "a bowl of lemons",
                "the old bakery on our street",
            ]
        ),
    )


def s_trip(r, o):
    return dict(place=r.choice(PLACES), highlight=r.choice(HIGHLIGHTS))


def s_concert(r, o):
    return dict(band=r.choice(BANDS), venue=r.choice(VENUES))


def s_race(r, o):
    race, t = r.choice(RACES)
    return dict(race=race, rtime=t(r))


def s_injury(r, o):
    return dict(
        part=r.choice(["ankle", "wrist", "knee", "shoulder"]),
        how=r.choice(
            [
                "playing basketball",
                "bouldering",
                "tripping on the stairs at work",
                "skiing",
                "at a pickup soccer game",
                "falling off my bike",
                "on a trampoline with my " + o.kidrel,
                "carrying a couch up three floors",
            ]
        ),
    )


def s_course(r, o):
    return dict(
        course=r.choice(
            [
                "an evening course in web design",
                "a night class in accounting",
                "an online course on data analysis",
                "a UX design bootcamp",
                "a nutrition certificate",
                "a photography course",
                "a coding bootcamp",
                "a sign language class",
                "a woodworking class",
                "a creative writing workshop",
            ]
        )
    )


def s_car(r, o):
    return dict(
        car=r.choice(
            [
                "a used Honda Civic",
                "a 2015 Subaru Outback",
                "a little red Fiat",
                "a Toyota Prius",
                "a secondhand Mazda 3",
                "a VW Golf",
                "an old Volvo wagon",
                "a Kia Soul",
            ]
        ),
        color=r.choice(COLORS),
    )


def s_garden(r, o):
    return dict(
        plants=r.choice(
            [
                "tomatoes and basil",
                "strawberries",
                "zucchini and peppers",
                "a lemon tree",
                "sunflowers along the fence",
                "lavender",
                "kale and lettuce",
                "a row of raspberry canes",
            ]
        )
    )


def s_show(r, o):
    return dict(
        show=r.choice(
            [
                "The Bear",
                "Severance",
                "Succession",
                "Ted Lasso",
                "Slow Horses",
                "Only Murders in the Building",
                "The Last of Us",
                "Dark",
                "Abbott Elementary",
                "Shrinking",
                "The Great British Bake Off",
                "Poker Face",
                "Reservation Dogs",
                "Fleabag",
            ]
        )
    )


def s_volunteer(r, o):
    place, task = r.choice(
        [
            ("the animal shelter", "mostly walking dogs and cleaning kennels"),
            ("a food bank", "sorting donations and packing boxes"),
            ("the library's reading program", "reading with kids after school"),
            ("a community garden", "weeding and teaching kids to plant stuff"),
            ("a soup kitchen", "chopping onions for three hours lol"),
            ("an after-school tutoring program", "helping teens with math"),
        ]
    )
    return dict(vplace=place, vtask=task, day=r.choice(WD[:6]))


def s_recipe(r, o):
    return dict(
        dish=r.choice(
            [
                "pierogi",
                "lasagna",
                "dumplings",
                "tamales",
                "lamb stew",
                "banana bread",
                "apple strudel",
                "jollof rice",
                "chicken adobo",
                "goulash",
                "spanakopita",
            ]
        ),
        rel=r.choice(["grandma", "grandpa", "aunt", "mom"]),
    )


def s_pottery(r, o):
    return dict(
        item=r.choice(
            [
                "a mug",
                "a wonky bowl",
                "a little vase",
                "a set of plates",
                "a plant pot",
                "a teapot",
                "a spoon rest",
            ]
        )
    )


def s_language(r, o):
    return dict(
        lang=r.choice(
            [
                "Japanese",
                "Portuguese",
                "Italian",
                "Korean",
                "German",
                "Greek",
                "Turkish",
                "Dutch",
                "Arabic",
                "Swahili",
                "Mandarin",
            ]
        ),
        n=str(r.randint(20, 300)),
    )


def s_promotion(r, o):
    return dict(
        title=r.choice(
            [
                "senior designer",
                "team lead",
                "head nurse",
                "store manager",
                "senior engineer",
                "department coordinator",
                "lead chef",
                "project manager",
                "shift supervisor",
                "clinic manager",
            ]
        )
    )


def s_surgery(r, o):
    rel = r.choice(["dad", "mom", "grandpa", "grandma", "uncle", "aunt"])
    g = REL_G[rel]
    return dict(
        rel=rel,
        relhe=PRON[g][0],
        relhim=PRON[g][1],
        op=r.choice(
            [
                "knee replacement",
                "hip surgery",
                "cataract surgery",
                "a heart stent",
                "gallbladder surgery",
                "back surgery",
                "shoulder surgery",
            ]
        ),
    )


def s_hike(r, o):
    return dict(
        trail=r.choice(
            [
                "Angel's Landing",
                "the Mount Tam loop",
                "Ben Nevis",
                "Half Dome",
                "the ridge trail above the lake",
                "Mount Washington",
                "Snowdon",
                "the Bright Angel trail",
                "Pulpit Rock",
                "Mount Si",
            ]
        ),
        km=str(r.randint(9, 26)),
    )


def s_engage(r, o):
    pg = o.pg
    return dict(
        where=r.choice(
            [
                "on the beach at sunset",
                "at the restaurant where we had our first date",
                "on top of a mountain after a brutal hike",
                "at home in our pyjamas",
                "in front of my whole family at dinner",
                "on a boat in the harbor",
            ]
        ),
        phe=PRON[pg][0],
        phim=PRON[pg][1],
    )


def s_kidparty(r, o):
    return dict(
        theme=r.choice(["dinosaur", "space", "mermaid", "pirate", "wizard", "unicorn", "superhero", "jungle"])
    )


def s_book(r, o):
    return dict(
        book=r.choice(
            [
                "Pachinko",
                "The Midnight Library",
                "Klara and the Sun",
                "Project Hail Mary",
                "Educated",
                "Circe",
                "The Overstory",
                "A Gentleman in Moscow",
                "Lessons in Chemistry",
                "Demon Copperhead",
                "Tomorrow, and Tomorrow, and Tomorrow",
                "The Covenant of Water",
            ]
        )
    )


def s_sport(r, o):
    return dict(
        sport=r.choice(
            [
                "bouldering",
                "pickleball",
                "salsa dancing",
                "kayaking",
                "aerial yoga",
                "fencing",
                "tennis",
                "open water swimming",
                "boxing",
                "ultimate frisbee",
                "rowing",
                "roller skating",
            ]
        )
    )


def s_restaurant(r, o):
    c, d = r.choice(
        [
            ("Ethiopian", "lentil stew"),
            ("Sichuan", "dan dan noodles"),
            ("Peruvian", "ceviche"),
            ("Georgian", "khachapuri"),
            ("Vietnamese", "bun cha"),
            ("Lebanese", "shawarma plate"),
            ("Oaxacan", "mole tacos"),
            ("Korean", "bibimbap"),
            ("Nepali", "momos"),
        ]
    )
    return dict(cuisine=c, rdish=d)


def s_paint(r, o):
    return dict(
        room=r.choice(["kitchen", "bedroom", "living room", "bathroom", "hallway"]), color=r.choice(COLORS)
    )


def s_exam(r, o):
    return dict(
        test=r.choice(
            [
                "driving test",
                "nursing boards",
                "bar exam",
                "CPA exam",
                "citizenship test",
                "scuba certification",
                "sommelier exam",
                "motorcycle license test",
            ]
        )
    )


def s_camera(r, o):
    return dict(
        gear=r.choice(
            [
                "a film camera",
                "a drone",
                "a Fujifilm X100",
                "a secondhand Canon",
                "an instant camera",
                "a telephoto lens",
            ]
        )
    )


def s_move(r, o):
    return dict(
        feature=r.choice(
            [
                "a bigger kitchen",
                "a little balcony",
                "a second bedroom",
                "a washer in the unit",
                "a view of the park",
            ]
        )
    )


def s_tripf(r, o):
    return dict(place=r.choice(PLACES), days=r.choice(["five", "six", "ten", "twelve"]))


def s_sibwed(r, o):
    return dict(
        role=r.choice(
            [
                "the officiant",
                "a witness",
                "in charge of the flowers",
                "in charge of the playlist",
                "the one giving the toast",
            ]
        )
    )


def s_interview(r, o):
    return dict(
        co=r.choice(COMPANIES),
        role=r.choice(["a design role", "an analyst position", "a manager job", "a remote role"]),
    )


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


KINDS = linked(_STATEMENTS["KINDS"])
KIND = {k["key"]: k for k in KINDS}


# ----------------------------------------------------------------------------------------------
# context-dependent kinds: the other person asks (prompt: holds the question's key words), the owner
# answers briefly (reply: the evidence, meaningless without the prompt). setup = the owner raising
# the matter in an earlier session (a distractor that shares the question's words too).


def c_hotel(r, o):
    a, b = r.sample(
        [
            "Porto",
            "Seville",
            "Kyoto",
            "Vienna",
            "Lisbon",
            "Split",
            "Quebec City",
            "Savannah",
            "Bruges",
            "Oaxaca",
            "Ljubljana",
            "Hoi An",
        ],
        2,
    )
    return dict(city=a, city2=b)


def c_interview(r, o):
    return dict(co=r.choice(COMPANIES), month=r.choice(MONTHS))


def c_choice(r, o):
    item = r.choice(["sofa", "rug", "bike", "kitchen tiles", "winter coat", "armchair"])
    a, b = r.sample(["green", "grey", "mustard", "navy", "rust", "cream", "pink", "black"], 2)
    return dict(item=item, c1=a, c2=b, pick=r.choice([a, b]))


_CONTEXT = data("context")  # this section's templates and pools: data/context.json
PET_ISSUES = _CONTEXT["PET_ISSUES"]


def c_vet(r, o):
    issue = r.choice(sorted(PET_ISSUES))
    if o.pet[0] == "cat" and issue == "cough":
        issue = "eye"
    return dict(petissue=issue)


def c_party(r, o):
    return dict(
        party=r.choice(
            [
                "birthday party",
                "housewarming",
                "going-away party",
                "thirtieth",
                "game night",
                "summer barbecue",
            ]
        ),
        n=str(r.randint(8, 40)),
    )


def c_gift(r, o):
    rel = r.choice(["mom", "dad", "grandma", o.sib])
    g = REL_G[rel]
    return dict(
        rel=rel,
        relhe=PRON[g][0],
        relhim=PRON[g][1],
        relhis=PRON[g][2],
        gift=r.choice(
            ["scarf", "necklace", "photo album", "cookbook", "watch", "framed print", "record player"]
        ),
    )


def c_exam(r, o):
    ex, sc = r.choice(
        [
            ("IELTS", lambda: f"{r.choice(['7.0', '7.5', '8.0', '8.5'])}"),
            ("GRE", lambda: str(r.randint(312, 334))),
            ("statistics final", lambda: f"{r.randint(71, 98)}%"),
            ("anatomy midterm", lambda: f"{r.randint(71, 98)}%"),
            ("LSAT", lambda: str(r.randint(158, 175))),
            ("CPA section", lambda: str(r.randint(75, 93))),
        ]
    )
    return dict(exam=ex, score=sc())


def c_movie(r, o):
    return dict(
        movie=r.choice(
            [
                "Oppenheimer",
                "Barbie",
                "Dune Part Two",
                "Past Lives",
                "Everything Everywhere All at Once",
                "Top Gun: Maverick",
                "The Holdovers",
                "Poor Things",
                "Killers of the Flower Moon",
                "Wonka",
                "Glass Onion",
                "The Banshees of Inisherin",
            ]
        )
    )


def c_flat(r, o):
    a, b = r.sample(
        [
            ("the balcony", "balcony"),
            ("the huge kitchen", "kitchen"),
            ("the garden", "garden"),
            ("the fireplace", "fireplace"),
            ("the rooftop terrace", "rooftop"),
        ],
        2,
    )
    return dict(fa=a[0], fas=a[1], fb=b[0], fbs=b[1])


def c_repair(r, o):
    return dict(
        repair=r.choice(["brakes", "transmission", "cracked windshield", "AC", "timing belt", "exhaust"]),
        n=str(r.randint(18, 140) * 10),
    )


def c_name(r, o):
    return dict(
        thing=r.choice(
            [
                "sourdough starter",
                "new car",
                "little boat",
                "goldfish",
                "food truck",
                "vegetable patch scarecrow",
            ]
        ),
        nm=r.choice(
            [
                "Gerald",
                "Princess Dough",
                "Captain Bob",
                "Marge",
                "Kevin",
                "Sir Loafsalot",
                "Big Tony",
                "Agnes",
            ]
        ),
    )


def c_bake(r, o):
    return dict(
        bake=r.choice(
            [
                "sourdough",
                "birthday cake",
                "croissants",
                "macarons",
                "lemon tart",
                "cinnamon rolls",
                "baguettes",
            ]
        )
    )


def c_racet(r, o):
    race, t = r.choice(RACES)
    return dict(race=race, rtime=t(r))


def c_companion(r, o):
    return dict(place=r.choice(PLACES), cname=r.choice(SIDE_F))


def c_teacher(r, o):
    return dict(
        subject=r.choice(["piano", "driving", "yoga", "Spanish", "swimming", "guitar", "French", "dance"])
    )


def c_role(r, o):
    return dict(
        role=r.choice(
            [
                "team lead",
                "manager",
                "head of design",
                "charge nurse",
                "senior analyst",
                "assistant principal",
            ]
        )
    )


def c_baby(r, o):
    return dict(
        rel2=r.choice(["sister", "cousin", "sister-in-law", "best friend"]),
        wt=r.choice(["3.2 kg", "7 pounds", "3.6 kilos", "8 pounds 2 ounces"]),
    )


def c_outfit(r, o):
    return dict(
        event=r.choice(
            [
                "your cousin's wedding",
                "the work gala",
                "the high school reunion",
                "the opera",
                "the awards dinner",
            ]
        )
    )


DOCTOR = _CONTEXT["DOCTOR"]


def c_doctor(r, o):
    return dict(symptom=r.choice(sorted(DOCTOR)))


def c_team(r, o):
    team, parts = r.choice(
        [
            ("community choir", ["the altos", "second sopranos", "the tenors"]),
            ("soccer team", ["goalkeeper", "left defense", "the bench"]),
            ("theater production", ["the lead", "the narrator", "tree number two"]),
            ("orchestra", ["second violin", "the back row of the cellos"]),
        ]
    )
    return dict(team=team, part=r.choice(parts))


def c_landlord(r, o):
    return dict(
        issue=r.choice(["heating", "leaky roof", "broken washer", "mold in the bathroom", "front door lock"])
    )


def c_cake(r, o):
    return {}


def c_carsale(r, o):
    return dict(
        car=r.choice(["Corolla", "Jetta", "Civic", "Focus", "minivan", "old Volvo"]),
        n=str(r.randint(8, 60) * 100),
    )


def c_flight(r, o):
    return dict(place=r.choice(PLACES))


def c_noise(r, o):
    return dict(noise=r.choice(["drumming", "late-night parties", "barking", "4am treadmill", "karaoke"]))


CTX = linked(_CONTEXT["CTX"])


def ctx_replies(k, sl):
    if k["key"] == "c_vet":
        return PET_ISSUES[sl["petissue"]]
    if k["key"] == "c_doctor":
        base = DOCTOR[sl["symptom"]]
        return [base, ("Stress apparently \U0001f644 sleep more, drink water, the usual", "stress")]
    return k["replies"]


# ----------------------------------------------------------------------------------------------
# knowledge-update kinds: old value in an earlier session (stays, as a distractor), new value later
# (the evidence). q asks for the current value.


def u_job(r, o):
    a, b = r.sample(COMPANIES, 2)
    return dict(v1=a, v2=b)


def u_city(r, o):
    b = r.choice([c for c in CITIES if c != o.city])
    return dict(v1=o.city, v2=b)


def u_race(r, o):
    a, b = r.choice(
        [
            ("half marathon", "full marathon"),
            ("10K", "half marathon"),
            ("5K", "10K"),
            ("sprint triathlon", "olympic triathlon"),
        ]
    )
    return dict(v1=a, v2=b)


def u_trip(r, o):
    a, b = r.sample(PLACES, 2)
    return dict(v1=a, v2=b, month=r.choice(MONTHS))


def u_books(r, o):
    a = r.randint(4, 14)
    return dict(v1=str(a), v2=str(a + r.randint(5, 16)))


def u_wedding(r, o):
    m1, m2 = r.sample(MONTHS, 2)
    return dict(v1=f"{m1} {r.randint(3, 28)}", v2=f"{m2} {r.randint(3, 28)}")


def u_car(r, o):
    a, b = r.sample(
        [
            "Corolla",
            "old Jetta",
            "Ford Focus",
            "Nissan Leaf",
            "Subaru Forester",
            "Mini Cooper",
            "Hyundai Kona",
            "Tesla Model 3",
            "Honda Fit",
        ],
        2,
    )
    return dict(v1=a, v2=b)


def u_roommate(r, o):
    a, b = r.sample(SIDE_F + SIDE_M, 2)
    return dict(v1=a, v2=b)


def u_5k(r, o):
    m = r.randint(24, 31)
    return dict(
        v1=f"{m}:{r.randint(10, 59)}", v2=f"{m - r.randint(1, 3)}:{r.randint(10, 59)}", goal=f"{m - 2}"
    )


def u_diet(r, o):
    return dict(
        v1="vegetarian", v2=r.choice(["eats fish again", "eats meat again"]), n=str(r.randint(12, 60))
    )


def u_instrument(r, o):
    a, b = r.sample(["guitar", "piano", "drums", "violin", "bass", "ukulele", "cello"], 2)
    return dict(v1=a, v2=b)


def u_major(r, o):
    a, b = r.sample(
        [
            "biology",
            "accounting",
            "psychology",
            "nursing",
            "computer science",
            "history",
            "graphic design",
            "economics",
        ],
        2,
    )
    return dict(v1=a, v2=b)


_UPDATES = data("updates")  # this section's templates and pools: data/updates.json
UPDATES = linked(_UPDATES["UPDATES"])


# ----------------------------------------------------------------------------------------------
# chit-chat pools

_CHITCHAT = data("chitchat")  # this section's templates and pools: data/chitchat.json
GREETINGS = _CHITCHAT["GREETINGS"]
GREETINGS_LONG = _CHITCHAT["GREETINGS_LONG"]
GREET_TAILS = _CHITCHAT["GREET_TAILS"]
GREET_TAILS_TOD = _CHITCHAT["GREET_TAILS_TOD"]
CLOSE_1 = _CHITCHAT["CLOSE_1"]
CLOSE_2 = _CHITCHAT["CLOSE_2"]
CLOSE_3 = ["\u2764\ufe0f", "\U0001f618", "xx", "\U0001f44b"]
CLOSE_TAILS = _CHITCHAT["CLOSE_TAILS"]
GEN_TAILS = _CHITCHAT["GEN_TAILS"]
CHAT_TAILS = _CHITCHAT["CHAT_TAILS"]
RESP_TAILS = _CHITCHAT["RESP_TAILS"]
REACT_TAILS = _CHITCHAT["REACT_TAILS"]
CTX_TAILS = _CHITCHAT["CTX_TAILS"]
PROMPT_TAILS = _CHITCHAT["PROMPT_TAILS"]


ASK_LEADS = _CHITCHAT["ASK_LEADS"]


def pad(r, who, text, pool, scale=1.0, sl=None, before=False):
    """A second sentence from pool, as often as the speaker tends to write one."""
    if r.random() < who.verb * scale:
        a = r.choice(pool)
        extra = fill(a, sl if sl is not None else who.slots())
        text = sjoin(extra, text) if before else sjoin(text, extra)
    return text


def ask(r, who) -> str:
    return pad(r, who, surf(r, r.choice(GENERIC_ASK)), ASK_LEADS, 0.9, before=True)


ACKS = _CHITCHAT["ACKS"]
REACT = _CHITCHAT["REACT"]
CLOSERS = _CHITCHAT["CLOSERS"]
ANNOUNCE = _CHITCHAT["ANNOUNCE"]
ASKED = _CHITCHAT["ASKED"]
GENERIC_ASK = _CHITCHAT["GENERIC_ASK"]
NEWS_BRIDGE = _CHITCHAT["NEWS_BRIDGE"]
PROMPT_LEAD = ["", "", "", "Ooh ", "Wait, ", "Oh! ", "Ok but ", "Omg ", "Speaking of, "]

# fillers: each a list of lines, alternating speakers; each line a list of variants.
_FILLERS = data("fillers")  # this section's templates and pools: data/fillers.json
FILLERS = _FILLERS["FILLERS"]
TOPIC_FILLERS = _FILLERS["TOPIC_FILLERS"]
FRIENDS = ["Jess", "Marco", "Tanya", "Ollie", "Becca", "Dom", "Kat", "Jules"]

RANTS = _FILLERS["RANTS"]
SIB_CITY = _FILLERS["SIB_CITY"]
SIB_VISIT = _FILLERS["SIB_VISIT"]
PET_MENTION = _FILLERS["PET_MENTION"]


# ----------------------------------------------------------------------------------------------
# turns and episodes


class Turn:
    __slots__ = ("who", "text")

    def __init__(self, who: Person, text: str):
        self.who, self.text = who, text


class Ep:
    """A run of turns built when the session is assembled (who speaks first is known only then).
    The facts (slots, the evidence wording) are fixed when the episode is planned; building only
    chooses the framing (who opens, reactions, follow-ups), so a rebuild never changes an answer."""

    def __init__(self, fn, required: bool):
        self.fn, self.required = fn, required
        self.turns: list[Turn] = []
        self.ev: list[Turn] = []

    def build(self, first: Person):
        self.turns, self.ev = self.fn(first)


class Question:
    def __init__(self, qtype: str, question: str, answer: str, eps: list[Ep]):
        self.qtype, self.question, self.answer, self.eps = qtype, question, answer, eps

    def evidence(self) -> list[Turn]:
        return [t for ep in self.eps for t in ep.ev]


_EPISODES = data("episodes")  # this section's templates and pools: data/episodes.json
FOLLOW_ACKS = _EPISODES["FOLLOW_ACKS"]
NEG_TAILS = _EPISODES["NEG_TAILS"]
O_SMALL_NEG = _EPISODES["O_SMALL_NEG"]
CTX_AFTER_TAILS = _EPISODES["CTX_AFTER_TAILS"]
CTX_BACK = _EPISODES["CTX_BACK"]
LONG_TAILS = _EPISODES["LONG_TAILS"]
O_SMALL = _EPISODES["O_SMALL"]
SETUP_REACT = _EPISODES["SETUP_REACT"]
SETUP_TAILS = _EPISODES["SETUP_TAILS"]
SETUP_REACT_TAILS = _EPISODES["SETUP_REACT_TAILS"]
SETUP_BACK = _EPISODES["SETUP_BACK"]
RANT_REACT = _EPISODES["RANT_REACT"]
RANT_BACK = ["right??", "I'm still processing", "anyway", "lol yes", "thank you for listening"]


def ends_open(s: str) -> bool:
    return bool(s) and (s[-1].isalnum() or s[-1] in ")\"'")


def sjoin(a: str, b: str) -> str:
    return f"{a}. {b}" if ends_open(a) else f"{a} {b}"


def lead(pre: str, text: str, sl: dict) -> str:
    """Prefix a chat opener, lower-casing the text's first letter unless it is 'I' or a name."""
    if not pre:
        return text
    if pre.rstrip().lower().endswith("so") and text.lower().startswith("so "):
        text = text[3:]
    protected = [v for v in sl.values() if isinstance(v, str) and v[:1].isupper()]
    if text.startswith(("I ", "I'")) or any(text.startswith(v) for v in protected) or text[:2].isupper():
        return pre + text
    return pre + text[0].lower() + text[1:]


def surf(r: random.Random, text: str) -> str:
    """Chat surface noise on non-evidence lines: a dropped full stop, a lower-case start, a 'lol'."""
    if text.endswith(".") and not text.endswith("..") and r.random() < 0.6:
        text = text[:-1]
    if text[:1].isupper() and text[1:2].islower() and r.random() < 0.2 and not text.startswith(("I ", "I'")):
        text = text[0].lower() + text[1:]
    if ends_open(text) and r.random() < 0.07:
        text += r.choice([" lol", " haha", " \U0001f605", "!!"])
    return text


def other(p: Person, pair: tuple[Person, Person]) -> Person:
    return pair[1] if p is pair[0] else pair[0]


def stmt_ep(
    r, o, x, sl, text, mood, echo, follow, required=True, long_p=0.08, react_tail=True, tail=True
) -> Ep:

    def fn(first):
        turns: list[Turn] = []
        asked = first is x
        if asked:
            turns.append(Turn(x, ask(r, x)))
        stmt = lead(r.choice(ASKED if asked else ANNOUNCE), fill(text, sl), sl)
        fol = list(follow)
        r.shuffle(fol)
        details = [f for f in fol if len(f) > 2]
        tails = NEG_TAILS if mood in ("neg", "relief") else GEN_TAILS
        if len(details) >= 2 and r.random() < long_p:
            for f in details[:2]:
                stmt = sjoin(stmt, fill(f[2], sl))
                fol.remove(f)
            stmt = sjoin(sjoin(stmt, fill(r.choice(tails), o.slots())), r.choice(LONG_TAILS))
        elif details and r.random() < o.verb * 0.6:
            f = details[0]
            stmt = sjoin(stmt, fill(f[2], sl))
            fol.remove(f)
        elif tail:
            stmt = pad(r, o, stmt, tails, 0.5)
        ev = Turn(o, stmt)
        turns.append(ev)
        if echo and r.random() < 0.7:
            rx = fill(r.choice(echo), sl)
            if r.random() < 0.5:
                rx = sjoin(r.choice(REACT[mood]), rx)
        else:
            rx = r.choice(REACT[mood])
        nf = min(len(fol), r.choice([0, 1, 1, 2, 2]))
        if nf == 0:
            turns.append(Turn(x, pad(r, x, rx, REACT_TAILS[mood], 1.25 if react_tail else 0)))
        for i in range(nf):
            qf, af = fol[i][:2]
            if i == 0:
                turns.append(
                    Turn(x, sjoin(pad(r, x, rx, REACT_TAILS[mood], 0.5 if react_tail else 0), fill(qf, sl)))
                )
            else:
                turns.append(Turn(x, lead(r.choice(FOLLOW_ACKS), fill(qf, sl), sl)))
            turns.append(Turn(o, pad(r, o, surf(r, fill(af, sl)), tails, 0.75)))
        if r.random() < 0.25:
            if turns[-1].who is o:
                turns.append(Turn(x, pad(r, x, r.choice(CLOSERS[mood]), REACT_TAILS[mood], 1.0)))
            else:
                small = O_SMALL if mood == "pos" else O_SMALL_NEG if mood in ("neg", "relief") else CTX_BACK
                turns.append(Turn(o, pad(r, o, r.choice(small), tails, 0.6 if react_tail else 0)))
        return turns, [ev]

    return Ep(fn, required)


def ctx_ep(r, k, o, x, sl, prompt, reply, qtext="", required=True) -> Ep:
    qwords = content(qtext)
    tails = [t for t in CTX_TAILS if not content(t) & qwords]

    def fn(first):
        turns: list[Turn] = []
        if first is o:
            turns.append(Turn(o, r.choice(NEWS_BRIDGE)))
        pre = r.choice(PROMPT_LEAD) if turns else ""
        ptext = lead(pre, fill(prompt, sl), sl)
        if r.random() < x.verb * 0.35:
            ptext = (
                sjoin(r.choice(PROMPT_TAILS), ptext)
                if r.random() < 0.5
                else sjoin(ptext, r.choice(PROMPT_TAILS))
            )
        turns.append(Turn(x, ptext))
        rtext = fill(reply, sl)
        if r.random() < o.verb * 0.4:
            rtext = sjoin(rtext, r.choice(tails))
        ev = Turn(o, rtext)
        turns.append(ev)
        after = fill(r.choice(k["after"]), sl)
        turns.append(Turn(x, pad(r, x, after, CTX_AFTER_TAILS, 0.7)))
        if r.random() < 0.2:
            turns.append(Turn(o, r.choice(CTX_BACK)))
        return turns, [ev]

    return Ep(fn, required)


def setup_ep(r, o, x, sl, text, mood="pos") -> Ep:
    def fn(first):
        turns: list[Turn] = []
        if first is x:
            turns.append(Turn(x, ask(r, x)))
        turns.append(Turn(o, pad(r, o, lead(r.choice(ANNOUNCE), fill(text, sl), sl), SETUP_TAILS, 0.5)))
        turns.append(Turn(x, pad(r, x, r.choice(SETUP_REACT[mood]), SETUP_REACT_TAILS, 0.8)))
        if r.random() < 0.4:
            turns.append(Turn(o, r.choice(SETUP_BACK)))
        return turns, []

    return Ep(fn, True)


def in_season(lines, month: int) -> bool:
    """Snow only in winter, heat waves only in summer (northern hemisphere)."""
    text = " ".join(v for line in lines for v in line).lower()
    if "snow" in text:
        return month in (11, 12, 1, 2, 3)
    if "so hot" in text or "35 degrees" in text or "water balloon" in text:
        return month in (6, 7, 8, 9)
    return True


def filler_ep(r, lines, pair, extra: dict) -> Ep:
    def fn(first):
        a = first
        b = other(a, pair)
        out = []
        use = lines if len(lines) < 3 or r.random() < 0.5 else lines[:2]
        for i, v in enumerate(use):
            who = a if i % 2 == 0 else b
            sl = dict(who.slots(), **extra)
            text = surf(r, fill(r.choice(v), sl))
            if i == 0:
                text = pad(r, who, text, CHAT_TAILS, 0.45)
            elif i == 1:
                text = pad(r, who, text, RESP_TAILS, 0.45)
            out.append(Turn(who, text))
        return out, []

    return Ep(fn, False)


def rant_ep(r, pair) -> Ep:
    src = r.choice(RANTS)

    def fn(first):
        k = r.randint(4, min(6, len(src)))
        keep = sorted(r.sample(range(1, len(src)), k - 1))
        text = " ".join([src[0]] + [src[i] for i in keep])
        b = other(first, pair)
        turns = [Turn(first, text), Turn(b, pad(r, b, r.choice(RANT_REACT), RESP_TAILS, 0.8))]
        if r.random() < 0.3:
            turns.append(Turn(first, r.choice(RANT_BACK)))
        return turns, []

    return Ep(fn, False)


# ----------------------------------------------------------------------------------------------
# planning a conversation


def overlap(a: str, b: str) -> int:
    return len(content(a) & content(b))


def says(k, field="say") -> list[tuple[str, list]]:
    """A kind's statements as (text, questions valid only for that text)."""
    return [(x, []) if isinstance(x, str) else x for x in k.get(field, [])]


def say_text(r, k, field="say") -> str:
    return r.choice(says(k, field))[0]


def best_q(r, text: str, qs: list, sl: dict, lexical: bool):
    """A question template for an evidence text: sharing >= 2 content words when lexical, at most
    one otherwise (falls back to the closest)."""
    scored = [
        (overlap(fill(text, sl), fill(q if isinstance(q, str) else q[0], sl)), i) for i, q in enumerate(qs)
    ]
    good = [i for ov, i in scored if (ov >= 2) == lexical and (ov <= 1) != lexical]
    if not good:
        key = max if lexical else min
        target = key(ov for ov, _ in scored)
        good = [i for ov, i in scored if ov == target]
    return qs[r.choice(good)]


class Conv:
    def __init__(self, ci: int, r: random.Random, A: Person, B: Person):
        self.ci, self.r, self.A, self.B = ci, r, A, B
        self.pair = (A, B)
        n = r.randint(12, 20)
        self.n = n
        start = dt.datetime(2022, 1, 3) + dt.timedelta(days=r.randint(0, 520))
        span = r.randint(185, 350)
        w = [r.uniform(0.35, 1.65) for _ in range(n - 1)]
        days = [0]
        for wi in w:
            days.append(days[-1] + max(2, round(span * wi / sum(w))))
        self.times = []
        for d in days:
            h = r.choice([8, 9, 12, 13, 17, 18, 19, 20, 20, 21, 21, 22, 22, 23])
            self.times.append(start + dt.timedelta(days=d, hours=h, minutes=r.randint(0, 59)))
        self.sess: list[list[Ep]] = [[] for _ in range(n)]
        self.qs: list[Question] = []
        self.topics: list[str] = []

    # -- helpers
    def other(self, p):
        return other(p, self.pair)

    def place(self, ep: Ep, lo: int = 0, hi: int | None = None, avoid=(), months=None) -> int:
        hi = self.n - 1 if hi is None else hi
        cand = [s for s in range(lo, hi + 1) if s not in avoid] or list(range(lo, hi + 1))
        if months:
            cand = [s for s in cand if self.times[s].month in months] or cand
        sample = self.r.sample(cand, min(3, len(cand)))
        s = min(sample, key=lambda i: (len([e for e in self.sess[i] if e.required]), i))
        self.sess[s].append(ep)
        return s

    def free_kinds(self, o, pool, need=None):
        out = []
        for k in pool:
            if k["key"] in o.used or not k.get("req", lambda p: True)(o):
                continue
            if need and not k.get(need):
                continue
            out.append(k)
        return out

    def sl(self, k, o):
        return dict(o.slots(), **k["slots"](self.r, o))

    def distract(self, k, o, p=0.55, avoid=()):
        """The other person states the same kind of fact (other values), elsewhere."""
        x = self.other(o)
        if self.r.random() < p and k in self.free_kinds(x, KINDS):
            x.used.add(k["key"])
            sl = self.sl(k, x)
            self.place(
                stmt_ep(
                    self.r, x, o, sl, say_text(self.r, k), k["mood"], k["echo"], k["follow"], required=False
                ),
                avoid=avoid,
                months=k.get("months"),
            )

    # -- question builders
    def single(self, o):
        r, x = self.r, self.other(o)
        k = r.choice(self.free_kinds(o, KINDS))
        o.used.add(k["key"])
        sl = self.sl(k, o)
        want_para = r.random() < PARA_SINGLE
        pairs = [(s, q) for s, extra in says(k) for q in k["q"] + extra]
        good = [(s, q) for s, q in pairs if (overlap(fill(s, sl), fill(q[0], sl)) <= 1) == want_para]
        s, (qt, at) = r.choice(good or pairs)
        ep = stmt_ep(r, o, x, sl, s, k["mood"], k["echo"], k["follow"])
        si = self.place(ep, months=k.get("months"))
        self.qs.append(Question("single-hop", fill(qt, sl), fill(at, sl), [ep]))
        self.topics.append(k["topic"])
        self.distract(k, o, avoid=(si,))

    def context(self, o):
        r, x = self.r, self.other(o)
        k = r.choice(self.free_kinds(o, CTX))
        o.used.add(k["key"])
        sl = self.sl(k, o)
        rt, at = r.choice(ctx_replies(k, sl))
        prompt = r.choice(k["prompts"])
        qt = r.choice(k["q"])
        ep = ctx_ep(r, k, o, x, sl, prompt, rt, qtext=fill(qt, sl))
        has_setup = bool(k.get("setup")) and r.random() < 0.6
        si = self.place(ep, lo=1 if has_setup else 0)
        if has_setup:
            self.sess[max(0, si - r.choice([1, 1, 2]))].append(
                setup_ep(r, o, x, sl, r.choice(k["setup"]), k["mood"])
            )
        self.qs.append(Question("context-dependent", fill(qt, sl), fill(at, sl), [ep]))
        self.topics.append(k["topic"])
        if r.random() < 0.3 and k in self.free_kinds(x, CTX):
            x.used.add(k["key"])
            xs = self.sl(k, x)
            self.place(
                ctx_ep(
                    r, k, x, o, xs, r.choice(k["prompts"]), r.choice(ctx_replies(k, xs))[0], required=False
                ),
                avoid=(si,),
            )

    def temporal(self, o):
        r, x = self.r, self.other(o)
        k = r.choice(self.free_kinds(o, KINDS, need="say_t"))
        o.used.add(k["key"])
        sl = self.sl(k, o)
        ep_holder: list[Ep] = []
        # the session must be known before the wording: plan the slot first
        si = self.place(Ep(lambda f: ([], []), True))
        self.sess[si].pop()
        expr, ans = when_expr(r, self.times[si], k["tense"])
        sl["when"] = expr
        text = say_text(r, k, "say_t")
        ep = stmt_ep(r, o, x, sl, text, k["mood"], k["echo"], k["follow"])
        self.sess[si].append(ep)
        ep_holder.append(ep)
        qt = best_q(r, text, k["tq"], sl, lexical=r.random() >= PARA_OTHER)
        self.qs.append(Question("temporal", fill(qt, sl), ans, [ep]))
        self.topics.append(k["topic"])
        self.distract(k, o, p=0.4, avoid=(si,))

    def update(self, o):
        r, x = self.r, self.other(o)
        cands = self.free_kinds(o, UPDATES)
        k = r.choice(cands)
        o.used.add(k["key"])
        sl = self.sl(k, o)
        i = r.randint(0, self.n - 4)
        j = r.randint(i + 2, self.n - 1)
        old = stmt_ep(
            r, o, x, sl, r.choice(k["old"]), "neu", k["echo_old"], [], long_p=0, react_tail=False, tail=False
        )
        ntext = r.choice(k["new"])
        new = stmt_ep(r, o, x, sl, ntext, "pos", k["echo_new"], [], long_p=0, react_tail=False, tail=False)
        self.sess[i].append(old)
        self.sess[j].append(new)
        qt = best_q(r, ntext, k["q"], sl, lexical=r.random() >= PARA_OTHER)
        self.qs.append(Question("knowledge-update", fill(qt, sl), fill(k["a"], sl), [new]))
        self.topics.append(k["topic"])
        if r.random() < 0.3 and k in self.free_kinds(x, UPDATES):
            x.used.add(k["key"])
            xs = self.sl(k, x)
            self.place(
                stmt_ep(
                    r,
                    x,
                    o,
                    xs,
                    r.choice(k["old"]),
                    "neu",
                    k["echo_old"],
                    [],
                    required=False,
                    long_p=0,
                    react_tail=False,
                    tail=False,
                )
            )

    def multi(self, o):
        r, x = self.r, self.other(o)
        pats = []
        if o.pet and (self.free_kinds(o, [KIND["dog"]]) or self.free_kinds(o, [KIND["kitten"]])):
            pats.append("pets")
        for key in ("trip", "concert", "book"):
            if self.free_kinds(o, [KIND[key]]):
                pats.append(key)
        for key in ("sport", "instrument", "language", "race"):
            if self.free_kinds(o, [KIND[key]]) and self.free_kinds(x, [KIND[key]]):
                pats.append("both-" + key)
        if "sibvisit" not in o.used:
            pats.append("bridge")
        pat = r.choice(pats)
        two = r.sample(range(self.n), 2)
        if pat == "pets":
            ks = self.free_kinds(o, [KIND["dog"], KIND["kitten"]])
            k = r.choice(ks)
            o.used.add(k["key"])
            sl = self.sl(k, o)
            e1 = stmt_ep(r, o, x, sl, r.choice(PET_MENTION[o.pet[0]]), "pos", [], [], long_p=0)
            e2 = stmt_ep(r, o, x, sl, say_text(r, k), "pos", k["echo"], k["follow"])
            new = (
                f"a {sl['breed']} named {sl['dog']}"
                if k["key"] == "dog"
                else f"a {sl['cat']} kitten named {sl['catname']}"
            )
            q = Question(
                "multi-hop",
                fill(r.choice(["What pets does {N} have?", "Which animals live with {N}?"]), sl),
                f"a {o.pet[0]} named {o.pet[1]} and {new}",
                [e1, e2],
            )
            self.topics.append("pets")
        elif pat in ("trip", "concert", "book"):
            k = KIND[pat]
            o.used.add(pat)
            sl1 = self.sl(k, o)
            sl2 = self.sl(k, o)
            keyname = {"trip": "place", "concert": "band", "book": "book"}[pat]
            while sl2[keyname] == sl1[keyname]:
                sl2 = self.sl(k, o)
            s1, s2 = [t for t, _ in r.sample(says(k), 2)]
            e1 = stmt_ep(r, o, x, sl1, s1, "pos", k["echo"], k["follow"])
            e2 = stmt_ep(r, o, x, sl2, s2, "pos", k["echo"], k["follow"])
            qt = {
                "trip": [
                    "Which places has {N} traveled to?",
                    "What trips has {N} come back from?",
                    "Name the destinations {N} visited.",
                ],
                "concert": [
                    "Which artists has {N} seen live?",
                    "Which bands has {N} seen live in concert?",
                    "What concerts did {N} attend?",
                ],
                "book": ["Which books has {N} been reading?", "What novels has {N} read?"],
            }[pat]
            q = Question(
                "multi-hop",
                fill(best_q(r, s1, qt, sl1, r.random() >= PARA_MULTI), sl1),
                f"{sl1[keyname]} and {sl2[keyname]}",
                [e1, e2],
            )
            self.topics.append(k["topic"])
        elif pat.startswith("both-"):
            key = pat[5:]
            k = KIND[key]
            o.used.add(key)
            x.used.add(key)
            slo = self.sl(k, o)
            slx = self.sl(k, x)
            shared = {"sport": "sport", "instrument": "inst", "language": "lang", "race": "race"}[key]
            slx[shared] = slo[shared]
            if key == "race":
                _, tf = next(rc for rc in RACES if rc[0] == slo["race"])
                slx["rtime"] = tf(r)
                while slx["rtime"] == slo["rtime"]:
                    slx["rtime"] = tf(r)
            e1_text, e2_text = [t for t, _ in r.sample(says(k), 2)]
            e1 = stmt_ep(r, o, x, slo, e1_text, "pos", k["echo"], k["follow"])
            e2 = stmt_ep(r, x, o, slx, e2_text, "pos", k["echo"], k["follow"])
            names = dict(A=o.name, B=x.name)
            if key == "race":

                def secs(t):
                    v = 0
                    for part in t.split(":"):
                        v = v * 60 + int(part)
                    return v

                fast, slow = (o, x) if secs(slo["rtime"]) < secs(slx["rtime"]) else (x, o)
                q = Question(
                    "multi-hop",
                    f"Who was faster in the {slo['race']}, {o.name} or {x.name}?",
                    f"{fast.name} ({slo['rtime'] if fast is o else slx['rtime']} against "
                    f"{slx['rtime'] if fast is o else slo['rtime']})",
                    [e1, e2],
                )
            else:
                qt = {
                    "sport": [
                        "What activity have both {A} and {B} taken up?",
                        "What kind of club have both {A} and {B} joined?",
                        "What sport are both {A} and {B} doing twice a week?",
                        "What did both {A} and {B} try for the first time recently?",
                    ],
                    "instrument": [
                        "Which instrument are both {A} and {B} learning?",
                        "Which instrument are both {A} and {B} learning to play?",
                        "What instrument lessons did both {A} and {B} sign up for?",
                        "Which instrument have both {A} and {B} started lessons for?",
                    ],
                    "language": [
                        "What language are both {A} and {B} studying?",
                        "Which language are both {A} and {B} learning?",
                        "What language classes did both {A} and {B} start?",
                    ],
                }[key]
                val = {"sport": "sport", "instrument": "inst", "language": "lang"}[key]
                qq = best_q(r, e1_text, [t.format(**names) for t in qt], slo, r.random() >= PARA_MULTI)
                q = Question("multi-hop", qq, slo[val], [e1, e2])
            self.topics.append(k["topic"])
        else:  # bridge: where the sibling lives + the visit
            o.used.add("sibvisit")
            sl = dict(o.slots(), bcity=r.choice([c for c in CITIES if c not in (o.city,)]))
            two.sort()
            if two[0] == two[1]:
                two[1] = min(self.n - 1, two[0] + 1)
            e1 = stmt_ep(r, o, x, sl, r.choice(SIB_CITY), "pos", [], [], long_p=0)
            e2 = stmt_ep(r, o, x, sl, r.choice(SIB_VISIT), "pos", [], [], long_p=0)
            q = Question(
                "multi-hop",
                fill(
                    r.choice(
                        [
                            "Which city is {N} going to for the visit to {his} {sib}?",
                            "To what city will {N} travel to see {his} {sib}?",
                        ]
                    ),
                    sl,
                ),
                sl["bcity"],
                [e1, e2],
            )
            self.topics.append("family")
        self.sess[two[0]].append(q.eps[0])
        self.sess[two[1]].append(q.eps[1])
        self.qs.append(q)

    # -- filling and assembling sessions
    def add_fillers(self):
        r = self.r
        topics = sorted(set(self.topics))
        for s in range(self.n):
            for _ in range(r.choice([1, 1, 2])):
                o = r.choice(self.pair)
                month = self.times[s].month
                free = [k for k in self.free_kinds(o, KINDS) if month in k.get("months", (month,))]
                if free:
                    k = r.choice(free)
                    o.used.add(k["key"])
                    self.sess[s].append(
                        stmt_ep(
                            r,
                            o,
                            self.other(o),
                            self.sl(k, o),
                            say_text(r, k),
                            k["mood"],
                            k["echo"],
                            k["follow"],
                            required=False,
                        )
                    )
            if r.random() < 0.55:
                t = r.choice(topics)
                if TOPIC_FILLERS.get(t):
                    self.sess[s].append(filler_ep(r, r.choice(TOPIC_FILLERS[t]), self.pair, self.extra(s)))
            if r.random() < 0.3:
                self.sess[s].append(rant_ep(r, self.pair))

    def extra(self, s):
        return dict(friend=self.r.choice(FRIENDS), month=MONTHS[self.times[s].month - 1])

    def greeting(self, s, first) -> list[Turn]:
        r = self.r
        t = self.times[s]
        gap = (t - self.times[s - 1]).days if s else 0
        sec = other(first, self.pair)
        tod = "morning" if t.hour < 12 else "afternoon" if t.hour < 17 else "evening"
        sl = dict(tod=tod, weekday=WD[t.weekday()])
        ex = r.choice(GREETINGS_LONG if gap > 21 and r.random() < 0.7 else GREETINGS)
        if t.hour >= 12:
            ex = [[v for v in line if "Morning" not in v] or line for line in ex]
        turns = []
        for i, line in enumerate(ex):
            who = first if i % 2 == 0 else sec
            if i == 2 and r.random() < 0.3:
                break
            text = fill(r.choice(line), dict(sl, other=other(who, self.pair).name))
            turns.append(Turn(who, pad(r, who, text, GREET_TAILS + GREET_TAILS_TOD[tod] * 2, 0.8)))
        return turns

    def assemble(self, s) -> list[Turn]:
        r = self.r
        first = self.A if s == 0 else r.choice(self.pair)
        eps = list(self.sess[s])
        r.shuffle(eps)
        # a ctx setup must come before nothing in particular; but a setup placed in the same session
        # as its question (only possible in session 0 clamps) goes first
        target = r.randint(18, 36)
        for _ in range(30):
            turns = self.greeting(s, first)
            for ep in eps:
                nxt = other(turns[-1].who, self.pair)
                ep.build(nxt)
                if ep.turns and ep.turns[0].who is turns[-1].who:
                    turns.append(Turn(nxt, r.choice(ACKS)))
                turns.extend(ep.turns)
            nxt = other(turns[-1].who, self.pair)
            turns.append(Turn(nxt, pad(r, nxt, r.choice(CLOSE_1), CLOSE_TAILS, 0.3)))
            turns.append(Turn(other(nxt, self.pair), r.choice(CLOSE_2)))
            if r.random() < 0.05:
                turns.append(Turn(nxt, r.choice(CLOSE_3)))
            if len(turns) < max(14, target - 4):
                fl = [f for f in FILLERS if in_season(f, self.times[s].month)]
                eps.insert(r.randint(0, len(eps)), filler_ep(r, r.choice(fl), self.pair, self.extra(s)))
                continue
            if len(turns) > 40:
                opt = [i for i, e in enumerate(eps) if not e.required]
                if opt:
                    eps.pop(r.choice(opt))
                    continue
            break
        self.sess[s] = eps
        return turns


def plan_counts(r: random.Random) -> dict[str, int]:
    return {
        "single-hop": r.choice([8, 9, 9, 10]),
        "context-dependent": r.choice([6, 6, 7]),
        "multi-hop": r.choice([3, 4, 4]),
        "temporal": r.choice([3, 4, 4]),
        "knowledge-update": r.choice([2, 3, 3]),
    }


def make_conversation(ci: int, r: random.Random, A: Person, B: Person):
    c = Conv(ci, r, A, B)
    counts = plan_counts(r)
    order = ["knowledge-update", "multi-hop", "temporal", "context-dependent", "single-hop"]
    builders = {
        "single-hop": c.single,
        "context-dependent": c.context,
        "multi-hop": c.multi,
        "temporal": c.temporal,
        "knowledge-update": c.update,
    }
    j = r.randint(0, 1)
    for qtype in order:
        for _ in range(counts[qtype]):
            builders[qtype](c.pair[j % 2])
            j += 1
    c.add_fillers()
    sessions = [c.assemble(s) for s in range(c.n)]
    return c, sessions


def build_all(seed: int = SEED):
    r = random.Random(seed)
    fem, mal = list(MAIN_F), list(MAIN_M)
    r.shuffle(fem)
    r.shuffle(mal)
    pairs = [("f", "m"), ("m", "f")] * 3 + [("f", "f"), ("m", "m")] * 3
    r.shuffle(pairs)
    convs = []
    for ci in range(N_CONV):
        side_f, side_m = list(SIDE_F), list(SIDE_M)
        r.shuffle(side_f)
        r.shuffle(side_m)
        genders = pairs[ci % len(pairs)]
        people = []
        for g in genders:
            name = fem.pop() if g == "f" else mal.pop()
            people.append(Person(r, name, g, side_f, side_m))
        convs.append(make_conversation(ci, r, people[0], people[1]))
    return convs


def records(convs) -> list[dict]:
    out = []
    for c, sessions in convs:
        cid = f"d{c.ci + 1:02d}"
        sids = [f"{cid}_s{s + 1:02d}" for s in range(c.n)]
        dates = [stamp(t) for t in c.times]
        where = {id(t): (s, i) for s, turns in enumerate(sessions) for i, t in enumerate(turns)}
        qdate = c.times[-1] + dt.timedelta(days=c.r.randint(2, 20), hours=c.r.randint(-6, 2))
        for qi, q in enumerate(c.qs):
            marks = {where[id(t)] for t in q.evidence()}
            hs = [
                [
                    {
                        "role": "user" if t.who is c.A else "assistant",
                        "content": t.text,
                        "speaker": t.who.name,
                        "has_answer": (s, i) in marks,
                    }
                    for i, t in enumerate(turns)
                ]
                for s, turns in enumerate(sessions)
            ]
            out.append(
                {
                    "question_id": f"{cid}_q{qi + 1:03d}",
                    "question_type": q.qtype,
                    "question": q.question,
                    "answer": q.answer,
                    "question_date": stamp(qdate),
                    "haystack_session_ids": sids,
                    "haystack_dates": dates,
                    "haystack_sessions": hs,
                    "answer_session_ids": [sids[s] for s in sorted({s for s, _ in marks})],
                }
            )
    return out


# ----------------------------------------------------------------------------------------------
# summary and the word-overlap sanity check


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def rank_of(scores: list[float], targets: list[int]) -> float:
    """Best (smallest) rank among targets; ties count half (the mid-rank of the tie block)."""
    best = math.inf
    for t in targets:
        s = scores[t]
        higher = sum(1 for v in scores if v > s)
        ties = sum(1 for v in scores if v == s)
        best = min(best, higher + (ties + 1) / 2)
    return best


def bm25_scores(docs: list[list[str]], q: list[str]) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / max(1, n)
    df = Counter(w for d in docs for w in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for w in set(q):
            if w in tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * len(d) / avg))
        out.append(s)
    return out


def summary(recs: list[dict]) -> dict:
    sessions, turns = {}, {}
    for rec in recs:
        for sid, ses in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True):
            if sid not in sessions:
                sessions[sid] = ses
                for i, t in enumerate(ses):
                    turns[f"{sid}:{i}"] = t["content"]
    lens = [len(t) for t in turns.values()]
    convs = sorted({rec["question_id"][:3] for rec in recs})
    per_sess = [len(s) for s in sessions.values()]
    ses_per_conv = Counter(sid[:3] for sid in sessions)
    months = {}
    for rec in recs:
        d0 = dt.datetime.strptime(rec["haystack_dates"][0][:10], "%Y/%m/%d")
        d1 = dt.datetime.strptime(rec["haystack_dates"][-1][:10], "%Y/%m/%d")
        months[rec["question_id"][:3]] = round((d1 - d0).days / 30.4, 1)
    by_type = Counter(rec["question_type"] for rec in recs)
    ctx_zero = ctx_prev = ctx_n = 0
    low = 0
    low_by: dict[str, list[bool]] = defaultdict(list)
    echo, same_topic = [], []
    for rec in recs:
        q = content(rec["question"])
        ev = [
            (s, i)
            for s, ses in enumerate(rec["haystack_sessions"])
            for i, t in enumerate(ses)
            if t["has_answer"]
        ]
        best = max(len(q & content(rec["haystack_sessions"][s][i]["content"])) for s, i in ev)
        low += best <= 1
        low_by[rec["question_type"]].append(best <= 1)
        if rec["question_type"] != "context-dependent":
            for s, i in ev:
                ses = rec["haystack_sessions"][s]
                if i + 1 < len(ses) and ses[i + 1]["speaker"] != ses[i]["speaker"]:
                    echo.append(bool(content(ses[i]["content"]) & content(ses[i + 1]["content"])))
        if rec["question_type"] == "single-hop":
            others = [
                t["content"]
                for s2, ses in enumerate(rec["haystack_sessions"])
                for i2, t in enumerate(ses)
                if (s2, i2) not in ev
            ]
            same_topic.append(sum(1 for c in others if q & content(c)))
        if rec["question_type"] == "context-dependent":
            ctx_n += 1
            s, i = ev[0]
            ctx_zero += best == 0
            ctx_prev += len(q & content(rec["haystack_sessions"][s][i - 1]["content"])) >= 1
    distinct = len(set(turns.values()))
    return {
        "conversations": len(convs),
        "sessions": len(sessions),
        "turns": len(turns),
        "distinct_turn_texts": distinct,
        "sessions_per_conversation": f"{min(ses_per_conv.values())}-{max(ses_per_conv.values())}",
        "turns_per_session": f"{min(per_sess)}-{max(per_sess)} (median {statistics.median(per_sess)})",
        "months_spanned": f"{min(months.values())}-{max(months.values())}",
        "questions": len(recs),
        "questions_per_type": dict(sorted(by_type.items())),
        "turn_chars_median": statistics.median(lens),
        "turn_chars_p90": pct(lens, 90),
        "turns_under_200_chars": round(sum(x < 200 for x in lens) / len(lens), 3),
        "turns_300_plus_chars": sum(x >= 300 for x in lens),
        "turn_chars_max": max(lens),
        "ctx_evidence_sharing_no_content_word": round(ctx_zero / ctx_n, 3),
        "ctx_previous_turn_sharing_a_content_word": round(ctx_prev / ctx_n, 3),
        "questions_sharing_at_most_one_content_word": round(low / len(recs), 3),
        "... by type": {t: round(sum(v) / len(v), 2) for t, v in sorted(low_by.items())},
        "evidence_next_turn_restating_a_content_word": round(sum(echo) / len(echo), 3),
        "single_hop_other_turns_sharing_a_question_word_median": statistics.median(same_topic),
    }


def sanity(recs: list[dict]) -> dict:
    """Rank every turn by (a) plain content-word overlap with the question, (b) BM25, within the
    question's conversation and over the whole file pooled; hit@10 = an evidence turn in the top 10."""
    conv_turns: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    seen = set()
    for rec in recs:
        for sid, ses in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True):
            if sid in seen:
                continue
            seen.add(sid)
            for i, t in enumerate(ses):
                conv_turns[sid[:3]].append((f"{sid}:{i}", tokens(t["content"])))
    pooled = [x for c in sorted(conv_turns) for x in conv_turns[c]]
    res: dict = defaultdict(lambda: defaultdict(list))
    for rec in recs:
        q = tokens(rec["question"])
        qs = set(q)
        ev = {
            f"{sid}:{i}"
            for sid, ses in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True)
            for i, t in enumerate(ses)
            if t["has_answer"]
        }
        for scope, docs in (("conversation", conv_turns[rec["question_id"][:3]]), ("pooled", pooled)):
            ids = [d[0] for d in docs]
            tg = [i for i, m in enumerate(ids) if m in ev]
            ov = [len(qs & set(d[1])) for d in docs]
            bm = bm25_scores([d[1] for d in docs], q)
            res[(scope, "overlap")][rec["question_type"]].append(rank_of(ov, tg) <= 10)
            res[(scope, "bm25")][rec["question_type"]].append(rank_of(bm, tg) <= 10)
            if rec["question_type"] == "multi-hop":
                every = all(rank_of(ov, [i]) <= 10 for i in tg)
                res[(scope, "overlap")]["multi-hop: every evidence turn"].append(every)
                every = all(rank_of(bm, [i]) <= 10 for i in tg)
                res[(scope, "bm25")]["multi-hop: every evidence turn"].append(every)
            if rec["question_type"] == "context-dependent":
                prev = [i - 1 for i in tg]
                res[(scope, "overlap")]["ctx: previous turn"].append(rank_of(ov, prev) <= 10)
                res[(scope, "bm25")]["ctx: previous turn"].append(rank_of(bm, prev) <= 10)
    return {
        f"{scope}/{how}": {t: f"{sum(v) / len(v):.2f} ({sum(v)}/{len(v)})" for t, v in sorted(d.items())}
        for (scope, how), d in sorted(res.items())
    }


def validate(recs: list[dict]) -> None:
    """The invariants the loader and the benchmark rely on."""
    sessions: dict[str, list] = {}
    for rec in recs:
        sids, dates, hs = rec["haystack_session_ids"], rec["haystack_dates"], rec["haystack_sessions"]
        assert len(sids) == len(dates) == len(hs) and 12 <= len(sids) <= 20, rec["question_id"]
        assert dates == sorted(dates) and rec["question_date"] > dates[-1], rec["question_id"]
        marked = set()
        user = hs[0][0]["speaker"]
        for sid, ses in zip(sids, hs, strict=True):
            assert 14 <= len(ses) <= 40, sid
            for a, b in zip(ses, ses[1:], strict=False):
                assert a["speaker"] != b["speaker"], sid
            for t in ses:
                assert (t["role"] == "user") == (t["speaker"] == user), sid
                if t["has_answer"]:
                    marked.add(sid)
            plain = [(t["role"], t["content"], t["speaker"]) for t in ses]
            assert sessions.setdefault(sid, plain) == plain, sid
        assert marked and sorted(marked) == rec["answer_session_ids"], rec["question_id"]
        if rec["question_type"] in ("multi-hop",):
            assert sum(t["has_answer"] for s in hs for t in s) >= 2, rec["question_id"]
    assert len({rec["question_id"] for rec in recs}) == len(recs)


def compact(recs: list[dict]) -> str:
    """The records written once per conversation: its sessions, then its questions with their
    evidence as (session, turn) places (``bench/longmemeval.py`` expands them back into records)."""
    conversations, questions = {}, []
    for rec in recs:
        cid = rec["question_id"].split("_")[0]
        sessions = rec["haystack_sessions"]
        conversations.setdefault(
            cid,
            {
                "session_ids": rec["haystack_session_ids"],
                "dates": rec["haystack_dates"],
                "sessions": [
                    [{k: t[k] for k in ("role", "speaker", "content")} for t in s] for s in sessions
                ],
            },
        )
        evidence = [
            [s, i] for s, turns in enumerate(sessions) for i, t in enumerate(turns) if t["has_answer"]
        ]
        keep = ("question_id", "question_type", "question", "answer", "question_date")
        questions.append({**{k: rec[k] for k in keep}, "conversation": cid, "evidence": evidence})
    lines = [json.dumps(q, ensure_ascii=False, separators=(",", ":")) for q in questions]
    convs = json.dumps(conversations, ensure_ascii=False, indent=0)
    return '{"conversations": ' + convs + ',\n"questions": [\n' + ",\n".join(lines) + "\n]}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--no-check", action="store_true", help="skip the word-overlap sanity check")
    args = ap.parse_args()
    recs = records(build_all())
    validate(recs)
    args.out.write_text(compact(recs), encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    print(json.dumps(summary(recs), indent=1, ensure_ascii=False))
    if not args.no_check:
        print(json.dumps(sanity(recs), indent=1))


if __name__ == "__main__":
    main()
