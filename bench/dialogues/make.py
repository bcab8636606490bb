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
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


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

MAIN_F = [
    "Maya",
    "Priya",
    "Aisha",
    "Sofia",
    "Hana",
    "Elena",
    "Chloe",
    "Nora",
    "Grace",
    "Imani",
    "Lucia",
    "Freya",
    "Amara",
    "Tess",
    "Yara",
    "Ines",
]
MAIN_M = [
    "Leo",
    "Jonas",
    "Daniel",
    "Marcus",
    "Tom",
    "Kofi",
    "Ravi",
    "Sam",
    "Mateo",
    "Hiro",
    "Omar",
    "Felix",
    "Diego",
    "Arjun",
    "Luca",
    "Caleb",
]
SIDE_F = [
    "Ana",
    "Beth",
    "Carla",
    "Dina",
    "Eva",
    "Fatima",
    "Gina",
    "Helen",
    "Iris",
    "Julia",
    "Kate",
    "Lena",
    "Mira",
    "Nadia",
    "Olga",
    "Paula",
    "Rita",
    "Sara",
    "Tina",
    "Vera",
    "Wendy",
    "Zara",
]
SIDE_M = [
    "Alex",
    "Bruno",
    "Carl",
    "Dev",
    "Eli",
    "Frank",
    "Gabe",
    "Hugo",
    "Ivan",
    "Jack",
    "Karl",
    "Liam",
    "Milo",
    "Nate",
    "Oscar",
    "Pete",
    "Rafa",
    "Seb",
    "Tariq",
    "Victor",
    "Wes",
    "Yusuf",
]
CITIES = [
    "Denver",
    "Austin",
    "Portland",
    "Chicago",
    "Toronto",
    "Melbourne",
    "Manchester",
    "Lyon",
    "Seattle",
    "Boston",
    "Atlanta",
    "Glasgow",
    "Dublin",
    "Minneapolis",
    "San Diego",
    "Pittsburgh",
    "Leeds",
    "Montreal",
    "Brisbane",
    "Bristol",
    "Nashville",
    "Vancouver",
]
JOBS = [
    "nurse",
    "software developer",
    "primary school teacher",
    "barista",
    "accountant",
    "graphic designer",
    "paramedic",
    "line cook",
    "lab technician",
    "marketing coordinator",
    "physical therapist",
    "librarian",
    "electrician",
    "architect",
    "vet tech",
    "data analyst",
    "social worker",
    "pharmacist",
    "real estate agent",
    "UX researcher",
    "carpenter",
    "dental hygienist",
    "project manager",
    "sound engineer",
]
COMPANIES = [
    "Brightline",
    "Northwind",
    "Copperleaf",
    "Halcyon Health",
    "Bluebird Labs",
    "Juniper Bank",
    "Fernhill Studio",
    "Orchard Analytics",
    "Sparrow & Co",
    "Tidewater Logistics",
    "Redwood Clinic",
    "Lumen Games",
    "Harbor Books",
    "Meridian Insurance",
    "Pine Street Bakery",
    "Alder Architects",
    "Kestrel Media",
    "Oakmont Hospital",
    "Blue Fern Cafe",
    "Summit Outdoor",
]
PRON = {"f": ("she", "her", "her"), "m": ("he", "him", "his")}
REL_G = {
    "mom": "f",
    "dad": "m",
    "grandma": "f",
    "grandpa": "m",
    "uncle": "m",
    "aunt": "f",
    "sister": "f",
    "brother": "m",
    "daughter": "f",
    "son": "m",
    "niece": "f",
    "nephew": "m",
    "sister-in-law": "f",
    "cousin": "f",
    "best friend": "f",
}
DOG_NAMES = [
    "Biscuit",
    "Pepper",
    "Miso",
    "Olive",
    "Bruno",
    "Juniper",
    "Waffles",
    "Ziggy",
    "Mabel",
    "Otis",
    "Pickles",
    "Nacho",
    "Rosie",
    "Banjo",
]
CAT_NAMES = [
    "Mochi",
    "Luna",
    "Tofu",
    "Pumpkin",
    "Salem",
    "Noodle",
    "Clementine",
    "Pixel",
    "Beans",
    "Sushi",
    "Figaro",
    "Marmalade",
]


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

PLACES = [
    "Lisbon",
    "Kyoto",
    "Mexico City",
    "Iceland",
    "the Amalfi coast",
    "Edinburgh",
    "Marrakech",
    "Vancouver Island",
    "Crete",
    "Prague",
    "Cape Town",
    "Hanoi",
    "Buenos Aires",
    "Copenhagen",
    "New Orleans",
    "Banff",
    "Seoul",
    "Sicily",
    "Istanbul",
    "the Scottish Highlands",
]
HIGHLIGHTS = [
    "a sunset boat tour",
    "a cooking class",
    "the night markets",
    "a day at the hot springs",
    "a street food tour",
    "the hike up to the old fort",
    "a wine tasting",
    "snorkeling",
    "a tiny jazz bar we found by accident",
    "the museum with the whale skeleton",
]
BANDS = [
    "Arctic Monkeys",
    "Phoebe Bridgers",
    "Coldplay",
    "Bon Iver",
    "Florence and the Machine",
    "Hozier",
    "Khruangbin",
    "Lizzo",
    "Tame Impala",
    "Mitski",
    "The National",
    "Vampire Weekend",
    "Kacey Musgraves",
    "Fleet Foxes",
    "Janelle Monae",
    "Sufjan Stevens",
    "Paramore",
    "Lorde",
]
VENUES = [
    "the Fillmore",
    "the arena downtown",
    "a tiny club",
    "the outdoor amphitheater",
    "the old theater on Main",
    "the waterfront stage",
]
RACES = [
    ("half marathon", lambda r: f"1:{r.randint(44, 59)}:{r.randint(10, 59)}"),
    ("10K", lambda r: f"{r.randint(44, 64)}:{r.randint(10, 59)}"),
    ("5K", lambda r: f"{r.randint(22, 33)}:{r.randint(10, 59)}"),
    ("trail race", lambda r: f"2:{r.randint(5, 40)}:{r.randint(10, 59)}"),
    ("sprint triathlon", lambda r: f"1:{r.randint(15, 45)}:{r.randint(10, 59)}"),
]
COLORS = [
    "sage green",
    "navy blue",
    "terracotta",
    "mustard yellow",
    "dusty pink",
    "charcoal grey",
    "teal",
    "cream",
    "forest green",
    "burnt orange",
]


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


KINDS = [
    dict(
        key="instrument",
        topic="music",
        mood="pos",
        slots=s_instrument,
        tense="past",
        say=[
            "I signed up for {inst} lessons!! been wanting to do it for years and I finally did it",
            "so I'm learning to play the {inst} now, don't laugh. it's harder than it looks",
            (
                "I finally bought a secondhand {inst} and booked lessons with a teacher down the street",
                [("Which instrument did {N} buy secondhand?", "the {inst}")],
            ),
            "random update: I've started {inst} lessons on Thursday evenings, right after work",
            (
                "my new thing is the {inst}. two lessons in and I already love it",
                [("Which instrument has {N} had two lessons on so far?", "the {inst}")],
            ),
        ],
        say_t=[
            "had my very first {inst} lesson {when}!! my fingers are destroyed",
            "{When} I finally had my first {inst} lesson, I was so nervous I almost cancelled",
        ],
        echo=[
            "{Inst}! that's such a lovely instrument",
            "Wait, {inst}?? since when are you musical haha",
            "Ooh the {inst}, fancy",
            "A {inst}! you have to play something for me at some point",
            "omg {inst} lessons, I love this for you",
        ],
        follow=[
            (
                "How's the teacher?",
                "really patient, her name's {teacher}. she used to play in an orchestra",
                "My teacher is really patient, her name's {teacher} and she used to play in an orchestra",
            ),
            (
                "Is it hard??",
                "so hard. my neighbors must hate me by now, I practice with the windows closed out of shame",
                "It's so hard, my neighbors must hate me by now",
            ),
            (
                "Are you practicing every day?",
                "trying to! like 20 minutes before bed most nights, some nights it's just five",
                "I'm trying to practice like 20 minutes before bed",
            ),
            (
                "What made you pick it up?",
                "honestly a video I saw at 2am. and I've always loved the sound",
                "Blame a video I saw at 2am, I've always loved the sound",
            ),
        ],
        q=[
            ("What instrument is {N} learning to play?", "the {inst}"),
            ("Which instrument did {N} start taking lessons for?", "the {inst}"),
            ("What kind of music lessons did {N} sign up for?", "{inst} lessons"),
            ("Which instrument did {N} book lessons for?", "the {inst}"),
        ],
        tq=["When did {N} have {his} first {inst} lesson?"],
    ),
    dict(
        key="dog",
        topic="pets",
        mood="pos",
        slots=s_dog,
        tense="past",
        req=lambda o: not o.pet or o.pet[0] != "dog",
        say=[
            "we adopted a dog!!! a {breed} named {dog}, I'm obsessed",
            "Meet {dog}: our new {breed} \U0001f436 rescued from the shelter on Saturday morning",
            "so we finally did it, we have a puppy. {breed}, ten weeks old, named {dog}",
            (
                "I caved and adopted a {breed} from the rescue. {dog} is asleep on my feet right now",
                [("What breed did {N} adopt from the rescue?", "a {breed}")],
            ),
        ],
        say_t=[
            "we brought {dog} home {when}! a little {breed} from the rescue",
            "{When} we adopted a {breed} puppy, we're calling him {dog}",
        ],
        echo=[
            "A {breed}!! I need pictures immediately",
            "{dog} is such a good name haha",
            "omg a puppy!!! \U0001f62d",
            "Stop, a {breed}?? best breed ever",
            "Aww {dog}! welcome to the family",
        ],
        follow=[
            (
                "How's the house training going?",
                "there have been... incidents. but {dog} is learning",
                "House training is... a journey. there have been incidents",
            ),
            (
                "Is the pup sleeping at night?",
                "mostly! some crying around 3am but it's getting better",
                "He mostly sleeps through the night, some crying around 3am",
            ),
            (
                "Who picked the name?",
                "{partnerish} did, I wanted something sillier but I got outvoted",
                "{partnerish} picked the name, I wanted something sillier",
            ),
            (
                "How big is he going to get?",
                "the vet says medium?? we'll see, his paws are huge",
                "The vet says he'll be medium sized, but his paws are huge",
            ),
        ],
        q=[
            ("What breed of dog did {N} adopt?", "a {breed}"),
            ("What is the name of {N}'s new puppy?", "{dog}"),
            ("What breed is the dog {N} got from the rescue shelter?", "a {breed}"),
            ("What did {N} name the dog {he} adopted?", "{dog}"),
        ],
        tq=["When did {N} adopt {his} dog?", "When did {N} bring {dog} home?"],
    ),
    dict(
        key="kitten",
        topic="pets",
        mood="pos",
        slots=s_cat,
        tense="past",
        req=lambda o: not o.pet or o.pet[0] != "cat",
        say=[
            "we got a kitten!! a tiny {cat} one called {catname}, she fits in my hand",
            "so a {cat} kitten has basically moved in with us. her name is {catname} now",
            "my coworker's cat had kittens and I took one, a little {cat} girl. named her {catname}",
        ],
        say_t=[
            "we picked up our kitten {when}! {cat}, named {catname}",
            "{When} we brought home a {cat} kitten, {catname} \U0001f431",
        ],
        echo=[
            "A kitten!!! {catname} is the cutest name",
            "omg a {cat} kitten, I'm dying",
            "Noooo I want one",
            "{catname}!! I need to meet her",
        ],
        follow=[
            (
                "Is she destroying everything yet?",
                "the curtains are not ok. neither is the sofa. she's tiny but she's a menace",
                "She has already destroyed the curtains",
            ),
            (
                "How old is she?",
                "nine weeks, she fits in one hand and screams like a tiny kettle",
                "She's nine weeks old and fits in one hand",
            ),
            (
                "Is she sleeping with you?",
                "on my face. every night. I wake up with a mouth full of fur and I don't even care",
                "She sleeps on my face every night",
            ),
        ],
        q=[
            ("What kind of kitten did {N} get?", "a {cat} kitten"),
            ("What is the name of {N}'s kitten?", "{catname}"),
            ("What is the kitten {N} got called?", "{catname}"),
            ("What did {N} name the cat {he} took home?", "{catname}"),
        ],
        tq=[
            "When did {N} get {his} kitten?",
            "When did {N} pick up {his} kitten?",
            "When did {N} bring home {his} kitten {catname}?",
        ],
    ),
    dict(
        key="painting",
        topic="art",
        mood="pos",
        slots=s_painting,
        tense="past",
        say=[
            "I painted a {medium} of {subject} for my {rel}'s birthday, first painting in years",
            "finally finished the {medium} for my {rel}!! it's {subject}",
            "been painting every night this week, doing {subject} as a present for my {rel}",
        ],
        echo=[
            "Omg {subject}?? that's so thoughtful",
            "Your {rel} is going to cry",
            "You paint?? I didn't know that",
            "Show me when it's done!!",
        ],
        follow=[
            (
                "How long did it take?",
                "like three weekends, I redid the sky twice because it looked like soup",
                "It took me three weekends, I redid the sky twice",
            ),
            (
                "Is it framed?",
                "found a frame at the thrift store for $6, it's perfect",
                "Found a frame at the thrift store for $6, it's perfect",
            ),
            (
                "Do you paint a lot?",
                "used to, in college! getting back into it slowly, it's so relaxing",
                "I haven't painted since college, so this is a big deal",
            ),
        ],
        q=[
            ("What did {N} paint for {his} {rel}?", "a {medium} of {subject}"),
            ("What birthday gift did {N} make for {his} {rel}?", "a {medium} of {subject}"),
            ("What was the subject of the painting {N} made as a gift?", "{subject}"),
        ],
    ),
    dict(
        key="trip",
        topic="travel",
        mood="pos",
        slots=s_trip,
        tense="past",
        say=[
            "just got back from our trip to {place}!! still jetlagged and already missing it",
            "back from {place} and I already want to go back, what a trip",
            (
                "{place} was unreal. we did {highlight} and I may have cried a little",
                [("Where did {N} do {highlight}?", "{place}")],
            ),
            (
                "home from the {place} trip, the laundry mountain is waiting for me",
                [("Which trip did {N} just come home from?", "{place}")],
            ),
        ],
        say_t=[
            "we got back from {place} {when}, still unpacking",
            "{When} we flew home from {place}. best trip in years",
        ],
        echo=[
            "{place}!! so jealous",
            "omg how was {place}??",
            "Ahh I've always wanted to go to {place}",
            "Welcome back!!",
        ],
        follow=[
            (
                "What was the best part?",
                "{highlight}, hands down. I'd go back just for that",
                "The best part was {highlight}",
            ),
            (
                "How was the weather?",
                "perfect except one day of rain, which we spent eating",
                "The weather was perfect except one day of rain",
            ),
            (
                "Did you eat well?",
                "I ate my body weight in pastries and I have zero regrets about it",
                "I ate my body weight in pastries, no regrets",
            ),
        ],
        q=[
            ("Where did {N} go on {his} recent trip?", "{place}"),
            ("Where did {N} just get back from a trip to?", "{place}"),
            ("What destination did {N} travel to?", "{place}"),
        ],
        tq=["When did {N} get back from {place}?", "When did {N} fly home from {place}?"],
    ),
    dict(
        key="concert",
        topic="music",
        mood="pos",
        slots=s_concert,
        tense="past",
        say=[
            "went to see {band} live, I'm still buzzing",
            "the {band} concert was SO good, seeing them live was unreal. I lost my voice",
            (
                "I saw {band} live at {venue}!! we were almost front row",
                [("Who did {N} see live at {venue}?", "{band}")],
            ),
        ],
        say_t=[
            "saw {band} live {when}, best concert of my life",
            "{When} I went to the {band} concert at {venue} \U0001f3b6",
        ],
        echo=["{band}!!! jealous", "omg how were they live?", "I love {band}!!", "Stop, that's amazing"],
        follow=[
            (
                "Did they play the old stuff?",
                "yes!! the whole crowd was singing along, I got chills during the encore",
                "They played all the old songs and the whole crowd sang along",
            ),
            (
                "Who'd you go with?",
                "my {sib}, {sibhe} got the tickets months ago and kept it a surprise",
                "My {sib} got us tickets months ago",
            ),
            (
                "Was it packed?",
                "packed like sardines, we couldn't move at all. totally worth it though",
                "It was packed like sardines but totally worth it",
            ),
        ],
        q=[
            ("Which artist did {N} see in concert?", "{band}"),
            ("Which band did {N} see live?", "{band}"),
            ("What concert did {N} go to?", "{band}"),
        ],
        tq=["When did {N} see {band} live?", "When did {N} go to the {band} concert?"],
    ),
    dict(
        key="race",
        topic="sport",
        mood="pos",
        slots=s_race,
        tense="past",
        say=[
            "I finished my first {race}!!! {rtime}, I can't feel my legs",
            "did the {race} this weekend, finished in {rtime}, my legs are dead",
            "{race} done \u2705 {rtime}. I walked a bit at the end but whatever",
        ],
        say_t=["ran the {race} {when}, finished in {rtime}", "{When} I ran my first {race}!! {rtime}"],
        echo=["{rtime}?? that's so fast", "YOU DID IT!!", "A {race}, I could never", "So proud of you"],
        follow=[
            (
                "How are your legs?",
                "stairs are my enemy right now, I go down them sideways like a crab",
                "Stairs are my enemy right now",
            ),
            (
                "Are you doing another one?",
                "already looking at one in the fall \U0001f605 don't tell anyone, they'll think I'm crazy",
                "Already looking at another one in the fall 😅",
            ),
            (
                "Did anyone come cheer?",
                "my {sib} had a sign, it was embarrassing and perfect",
                "My {sib} came with a sign, it was embarrassing and perfect",
            ),
        ],
        q=[
            ("What was {N}'s finishing time in the {race}?", "{rtime}"),
            ("How long did it take {N} to finish the {race}?", "{rtime}"),
            ("What race did {N} complete?", "a {race}"),
        ],
        tq=["When did {N} run the {race}?"],
    ),
    dict(
        key="injury",
        topic="health",
        mood="neg",
        slots=s_injury,
        tense="past",
        say=[
            (
                "I sprained my {part} {how} \U0001f643 so that's my month ruined",
                [("How did {N} sprain {his} {part}?", "{how}")],
            ),
            "so my {part} is in a brace now. hurt it {how}",
            "guess who hurt their {part} {how}. me. it's me",
        ],
        say_t=["hurt my {part} {when}, {how}. so swollen", "{When} I messed up my {part} {how}, ugh"],
        echo=[
            "Oh no!! your {part}?",
            "ugh I'm so sorry, how bad is it?",
            "Noooo. how??",
            "That sounds so painful",
        ],
        follow=[
            (
                "Did you get it checked?",
                "yep, no fracture thank god, just a bad sprain and a lot of bruising",
                "No fracture thank god, just a bad sprain",
            ),
            (
                "Can you still work?",
                "from the couch, with ice on it and the laptop balanced on a pillow",
                "Working from the couch with ice on it",
            ),
            (
                "How long to heal?",
                "they said four to six weeks, which feels like forever",
                "They said four to six weeks to heal",
            ),
        ],
        q=[
            ("How did {N} hurt {his} {part}?", "{how}"),
            ("What injury did {N} get?", "a sprained {part}"),
            ("What was {N} doing when {he} got hurt?", "{how}"),
        ],
        tq=["When did {N} injure {his} {part}?", "When did {N} hurt {his} {part}?"],
    ),
    dict(
        key="course",
        topic="study",
        mood="pos",
        slots=s_course,
        tense="past",
        say=[
            ("I enrolled in {course}! first class is next week", [("What did {N} enroll in?", "{course}")]),
            "so I signed up for {course}, starts in two weeks. scared",
            (
                "I'm doing {course} now, Tuesday and Thursday nights",
                [("What is {N} doing on Tuesday and Thursday nights?", "{course}")],
            ),
        ],
        say_t=["started {course} {when}, first class was fun", "{When} I had my first session of {course}"],
        echo=[
            "Ooh that's a big step",
            "You're so productive, I love it",
            "Wait that's so cool, is it for work?",
        ],
        follow=[
            (
                "Is it for work?",
                "kind of? mostly I want a change, my job is so boring lately",
                "It's not really for work, I just want a change",
            ),
            (
                "How's the workload?",
                "manageable so far, but ask me again in a month when the projects start",
                "The workload seems manageable so far",
            ),
        ],
        q=[
            ("What course did {N} enroll in?", "{course}"),
            ("What is {N} studying in the evenings?", "{course}"),
            ("What class did {N} sign up for?", "{course}"),
        ],
        tq=["When did {N} start {course}?", "When did {N} have {his} first session of {course}?"],
    ),
    dict(
        key="car",
        topic="car",
        mood="pos",
        slots=s_car,
        tense="past",
        say=[
            (
                "we bought a car! {car}, nicest car I've ever owned",
                [("Which car is the nicest {N} has ever owned?", "{car}")],
            ),
            "I finally replaced the old car, got {car}",
            (
                "so I'm now the proud owner of {car}, goodbye bus pass",
                [("What is {N} now the proud owner of?", "{car}")],
            ),
        ],
        say_t=["picked up the new car {when}, {car}!", "{When} we bought {car}"],
        echo=["A new car!! congrats", "Ooh nice", "Road trip when?"],
        follow=[
            (
                "New or used?",
                "used, 60k miles but super clean, the previous owner was a retired teacher",
                "It's used, 60k miles but super clean",
            ),
            (
                "What color?",
                "{color}, kind of boring on purpose so nobody steals it haha",
                "It's {color}, boring on purpose",
            ),
        ],
        q=[
            ("What car did {N} buy?", "{car}"),
            ("What vehicle did {N} get?", "{car}"),
            ("What did {N} replace {his} old car with?", "{car}"),
        ],
        tq=[
            "When did {N} buy {his} new car?",
            "When did {N} pick up {his} new car?",
            "When did {N} buy {car}?",
        ],
    ),
    dict(
        key="garden",
        months=(3, 4, 5, 6, 7),
        topic="home",
        mood="pos",
        slots=s_garden,
        tense="past",
        say=[
            "spent the whole weekend in the garden, planted {plants}",
            "I planted {plants} in the garden!! dreaming of summer already",
            (
                "my back hurts from digging. we put in {plants}",
                [("What did {N} put in after all that digging?", "{plants}")],
            ),
        ],
        echo=["Ooh {plants}, I'm coming over in August", "You and your green thumb", "Love that for you"],
        follow=[
            (
                "Do you have a veggie patch?",
                "just two raised beds my dad built last year, but they're packed",
                "We have two raised beds my dad built last year",
            ),
            (
                "Any pests?",
                "slugs. so many slugs. I go out at night with a flashlight like a weirdo",
                "The slugs are already circling",
            ),
        ],
        q=[
            ("What did {N} plant in {his} garden?", "{plants}"),
            ("What is {N} growing at home?", "{plants}"),
            ("What did {N} put in the ground over the weekend?", "{plants}"),
        ],
    ),
    dict(
        key="show",
        topic="tv",
        mood="pos",
        slots=s_show,
        tense="past",
        say=[
            "I'm obsessed with {show} right now, I watch it every night",
            "started watching {show} last night and watched five episodes oops",
            (
                "have you seen {show}? I'm binging it and I can't stop",
                [("What show has {N} been binging?", "{show}")],
            ),
        ],
        echo=[
            "{show}!! I loved that",
            "Haven't seen it, is it worth it?",
            "Everyone keeps telling me to watch {show}",
        ],
        follow=[
            (
                "No spoilers but is it sad?",
                "kind of?? you'll see, I don't want to ruin it for you",
                "Fair warning, it gets sad",
            ),
            (
                "What episode are you on?",
                "end of season two, I stayed up until 2am last night, send help",
                "I'm at the end of season two already",
            ),
        ],
        q=[
            ("What TV series has {N} been binge-watching?", "{show}"),
            ("What show is {N} obsessed with watching?", "{show}"),
            ("Which show did {N} start watching?", "{show}"),
        ],
    ),
    dict(
        key="volunteer",
        topic="community",
        mood="pos",
        slots=s_volunteer,
        tense="past",
        say=[
            "I started volunteering at {vplace} on {day}s",
            (
                "been volunteering at {vplace}, honestly the best part of my week",
                [("Where has {N} been volunteering?", "{vplace}")],
            ),
            (
                "signed up to volunteer at {vplace}, my first shift was {day}",
                [("Where did {N} sign up to volunteer?", "{vplace}")],
            ),
        ],
        echo=["That's so lovely", "Aw that's perfect for you", "You're a good person, you know that"],
        follow=[
            ("What do you do there?", "{vtask}", "I'm {vtask}"),
            (
                "How did you find it?",
                "there was a flyer at the coffee shop and I just called the number",
                "Found it on a flyer at the coffee shop",
            ),
        ],
        q=[
            ("Where does {N} volunteer?", "{vplace}"),
            ("What does {N} do on {day}s?", "volunteers at {vplace}"),
            ("Where did {N} start volunteering?", "{vplace}"),
        ],
    ),
    dict(
        key="recipe",
        topic="food",
        mood="pos",
        slots=s_recipe,
        tense="past",
        say=[
            (
                "made my {rel}'s {dish} tonight, tasted exactly like when I was little",
                [("Which of {his} {rel}'s dishes did {N} make?", "{dish}")],
            ),
            "I tried my {rel}'s {dish} recipe finally!! took all afternoon",
            "cooked {dish} from my {rel}'s handwritten recipe card and I'm emotional",
        ],
        echo=["{dish}!! save me some", "Aww that's so special", "Ok now I'm hungry"],
        follow=[
            (
                "Was it hard?",
                "the dough was a nightmare, it stuck to everything, but so worth it",
                "The dough was a nightmare but worth it",
            ),
            (
                "Did you share?",
                "my {sib} came over and took half home, so I guess it was good",
                "My {sib} came over and took half home",
            ),
        ],
        q=[
            ("What dish did {N} cook from {his} {rel}'s recipe?", "{dish}"),
            ("What family recipe did {N} try making?", "{his} {rel}'s {dish}"),
            ("What did {N} cook that reminded {him} of {his} {rel}?", "{dish}"),
        ],
    ),
    dict(
        key="pottery",
        topic="art",
        mood="pos",
        slots=s_pottery,
        tense="past",
        say=[
            "made {item} in my ceramics class!! it's lopsided but it's mine",
            "my {item} came out of the kiln today \U0001f60d pottery class is my happy place",
            "pottery class update: I made {item}. it's ugly, I love it",
        ],
        echo=["You made {item}?? that's so cool", "I need a photo", "Handmade, love"],
        follow=[
            (
                "What glaze did you use?",
                "a blue one that looked grey before firing, so it was a nice surprise",
                "The glaze looked grey before firing and came out blue",
            ),
            (
                "Are you keeping it?",
                "yes, it's on my desk now holding pens, it's my favorite thing",
                "It's on my desk now, holding pens",
            ),
        ],
        q=[
            ("What did {N} make in pottery class?", "{item}"),
            ("What did {N} make at {his} ceramics class?", "{item}"),
            ("What did {N} make out of clay?", "{item}"),
        ],
    ),
    dict(
        key="language",
        topic="study",
        mood="pos",
        slots=s_language,
        tense="past",
        say=[
            (
                "I'm learning {lang}! {n} day streak on the app",
                [("What language is {N} learning on the app?", "{lang}")],
            ),
            (
                "started {lang} classes, the grammar is killing me",
                [("Which language classes did {N} start?", "{lang}")],
            ),
            (
                "trying to learn {lang} before my trip, wish me luck",
                [("What language is {N} trying to learn before {his} trip?", "{lang}")],
            ),
        ],
        echo=["{lang}! that's ambitious", "Say something in {lang}", "Ooh, I always wanted to learn that"],
        follow=[
            (
                "Is it hard?",
                "the pronunciation is humbling, I sound like a confused robot",
                "The pronunciation is humbling",
            ),
            (
                "Why that one?",
                "I've always loved the movies and the food haha, and I want to travel there one day",
                "I've always loved the movies and the food",
            ),
        ],
        q=[
            ("What language is {N} learning?", "{lang}"),
            ("Which foreign language is {N} studying?", "{lang}"),
            ("What language has {N} been practicing on an app?", "{lang}"),
        ],
    ),
    dict(
        key="promotion",
        topic="work",
        mood="pos",
        slots=s_promotion,
        tense="past",
        say=[
            ("I got promoted!!! {title} \U0001f62d", [("What did {N} get promoted to?", "{title}")]),
            (
                "so they promoted me to {title}, still processing",
                [("What did {N} get promoted to?", "{title}")],
            ),
            (
                "officially promoted to {title} as of today, a raise and everything",
                [("What was {N} officially promoted to?", "{title}")],
            ),
        ],
        say_t=[
            "found out {when} that I'm getting promoted to {title}!",
            "{When} my boss told me I got the {title} job",
        ],
        echo=["{title}!!! congrats!!", "About time, you deserve it", "Drinks on you"],
        follow=[
            (
                "Are you managing people now?",
                "four people, which is terrifying, I've never managed anyone before",
                "I'll be managing four people, which is terrifying",
            ),
            (
                "Did you get a raise?",
                "yes, a decent one \U0001f64c first thing I'm doing is fixing my car",
                "And yes, there's a raise 🙌",
            ),
        ],
        q=[
            ("What position was {N} promoted to?", "{title}"),
            ("What is {N}'s new job title?", "{title}"),
            ("What role did {N} get promoted into?", "{title}"),
        ],
        tq=[
            "When did {N} find out about {his} promotion?",
            "When did {N} find out {he} was getting promoted to {title}?",
            "When did {N}'s boss tell {him} about the {title} job?",
        ],
    ),
    dict(
        key="surgery",
        topic="family",
        mood="relief",
        slots=s_surgery,
        tense="past",
        say=[
            "my {rel} had {op}, {relhe}'s recovering at home now",
            "been at the hospital with my {rel} all day, {op}. it went well though",
            "my {rel}'s {op} went fine, thank god",
        ],
        say_t=["my {rel} had {op} {when}. all good so far", "{When} my {rel} had {op}, I was a wreck"],
        echo=["Oh no, I hope {relhe}'s ok", "So glad it went well", "Sending love to your {rel}"],
        follow=[
            (
                "How's {relhe} doing?",
                "grumpy and bossing the nurses around, which means fine",
                "{Relhe}'s grumpy and bossing the nurses around, which means fine",
            ),
            (
                "Are you ok?",
                "tired, but relieved. it was a long week at the hospital",
                "I'm tired but relieved",
            ),
        ],
        q=[
            ("What surgery did {N}'s {rel} have?", "{op}"),
            ("What medical procedure did {N}'s {rel} undergo?", "{op}"),
            ("Why was {N} worried about {his} {rel}?", "{his} {rel} had {op}"),
        ],
        tq=["When did {N}'s {rel} have {op}?"],
    ),
    dict(
        key="hike",
        topic="outdoors",
        mood="pos",
        slots=s_hike,
        tense="past",
        say=[
            (
                "we hiked {trail}, {km} km, my legs are jelly",
                [("Which trail did {N} hike that left {his} legs like jelly?", "{trail}")],
            ),
            (
                "hiked {trail} this weekend!! the views were insane",
                [("What did {N} hike this weekend?", "{trail}")],
            ),
            ("conquered {trail}. {km} km and one blister", [("Which trail did {N} conquer?", "{trail}")]),
        ],
        say_t=["we hiked {trail} {when}, {km} km", "{When} we did {trail}, totally worth it"],
        echo=["{trail}?? hardcore", "Omg the views must've been amazing", "Send pics!"],
        follow=[
            (
                "How long did it take?",
                "about seven hours with snack breaks, we were so slow on the way down",
                "It took us about seven hours with snack breaks",
            ),
            (
                "Was it crowded?",
                "we started super early so not really, we had the top to ourselves",
                "We started super early so we had the top to ourselves",
            ),
        ],
        q=[
            ("Which trail did {N} hike?", "{trail}"),
            ("Where did {N} go hiking?", "{trail}"),
            ("How far was the hike {N} did?", "{km} km"),
        ],
        tq=["When did {N} hike {trail}?"],
    ),
    dict(
        key="engage",
        topic="family",
        mood="pos",
        slots=s_engage,
        tense="past",
        req=partner_only,
        say=[
            "{partner} proposed!!! {where}",
            (
                "I'M ENGAGED. {partner} asked {where} \U0001f48d",
                [("Where did {partner} ask {N} to marry {phim}?", "{where}")],
            ),
            "so... {partner} and I are engaged \U0001f62d {phe} proposed {where}",
        ],
        say_t=["{partner} proposed {when}!!! {where}", "{When} {partner} asked me to marry {phim}, {where}"],
        echo=["WHAT. CONGRATULATIONS", "Omg I'm screaming", "So romantic!!", "Show me the ring!!"],
        follow=[
            (
                "Did you know it was coming?",
                "zero idea, I was in sweatpants with messy hair, it was perfect",
                "I had zero idea, I was in sweatpants",
            ),
            (
                "Have you set a date?",
                "not yet, probably next summer, somewhere small with close friends",
                "No date yet, probably next summer",
            ),
        ],
        q=[
            ("Where did {partner} propose to {N}?", "{where}"),
            ("How did {N} get engaged?", "{partner} proposed {where}"),
            ("Who proposed to {N}?", "{partner}"),
        ],
        tq=[
            "When did {N} get engaged?",
            "When did {partner} propose to {N}?",
            "When did {partner} ask {N} to marry {phim}?",
        ],
    ),
    dict(
        key="kidparty",
        topic="family",
        mood="pos",
        slots=s_kidparty,
        tense="past",
        say=[
            "survived {kidname}'s birthday party, {theme} theme. a dozen kids screaming",
            "{kidname} turned {kidage}!! we did a {theme} party",
            "we threw {kidname} a {theme} party for turning {kidage}, never again",
        ],
        say_t=[
            "{kidname}'s {theme} party was {when}, I'm still finding glitter",
            "we did {kidname}'s birthday {when}, {theme} theme",
        ],
        echo=["A {theme} party!! cute", "{kidage} already?? time is fake", "Happy birthday to {kidname}!!"],
        follow=[
            (
                "How many kids came?",
                "twelve. TWELVE. in our tiny backyard. I need a week to recover",
                "Twelve kids came. TWELVE.",
            ),
            (
                "Did you make the cake?",
                "I bought it, I'm not a hero. nobody noticed anyway",
                "I bought the cake, I'm not a hero",
            ),
        ],
        q=[
            ("What was the theme of {N}'s {kidrel}'s birthday party?", "{theme}"),
            ("What kind of party did {N} throw for {kidname}?", "a {theme}-themed party"),
        ],
        tq=["When was {N}'s {kidrel} {kidname}'s {theme} birthday party?"],
    ),
    dict(
        key="book",
        topic="books",
        mood="pos",
        slots=s_book,
        tense="past",
        say=[
            "just finished reading {book}, best book I've read all year",
            "reading {book} right now and it's such a good book, I can't put it down",
            (
                "{book} made me ugly cry on the train this morning, what a book",
                [("What book made {N} cry on the train?", "{book}")],
            ),
        ],
        echo=[
            "{book}! I loved that one",
            "Is that the one everyone's talking about?",
            "Adding it to my list",
        ],
        follow=[
            (
                "Would you recommend it?",
                "100%, I'll lend it to you next time I see you",
                "I'll lend it to you, you have to read it",
            ),
            (
                "How's the ending?",
                "not saying anything, just read it and then call me immediately",
                "The ending is something else",
            ),
        ],
        q=[
            ("What book has {N} been reading?", "{book}"),
            ("Which novel did {N} mention reading?", "{book}"),
            ("What book did {N} recommend?", "{book}"),
        ],
    ),
    dict(
        key="sport",
        topic="sport",
        mood="pos",
        slots=s_sport,
        tense="past",
        say=[
            "I joined a {sport} club!",
            "been doing {sport} twice a week, I'm hooked",
            "tried {sport} for the first time and I'm obsessed",
        ],
        say_t=[
            "went to my first {sport} session {when}, so fun",
            "{When} I tried {sport} for the first time",
        ],
        echo=["{Sport}!! that's so fun", "Wait you do {sport} now??", "Ooh I've always wanted to try that"],
        follow=[
            (
                "Are you any good?",
                "absolutely not, but I'm having so much fun that I don't care",
                "I'm terrible at it but having so much fun",
            ),
            (
                "Is it expensive?",
                "the first month was free so who knows, I'll find out soon",
                "The first month was free, so we'll see",
            ),
        ],
        q=[
            ("What new sport has {N} taken up?", "{sport}"),
            ("What activity did {N} start doing twice a week?", "{sport}"),
            ("What kind of club did {N} join?", "a {sport} club"),
            ("What did {N} try for the first time?", "{sport}"),
        ],
        tq=["When did {N} first try {sport}?"],
    ),
    dict(
        key="restaurant",
        topic="food",
        mood="pos",
        slots=s_restaurant,
        tense="past",
        say=[
            "found the best {cuisine} place near work, had their {rdish} twice this week",
            (
                "new {cuisine} place opened by my office and I'm obsessed",
                [("What kind of place opened by {N}'s office?", "{cuisine}")],
            ),
            "I have a new favorite lunch place: tiny {cuisine} restaurant two blocks from work",
        ],
        echo=["{cuisine}! take me there", "Ooh what's good there?", "You and your lunch spots"],
        follow=[
            (
                "What should I order?",
                "the {rdish}, trust me, I dream about it",
                "You have to try the {rdish}",
            ),
            (
                "Is it pricey?",
                "cheap!! like $12 for lunch and it's a huge portion",
                "It's cheap too, like $12 for lunch",
            ),
        ],
        q=[
            ("What kind of restaurant did {N} find near {his} office?", "{cuisine}"),
            ("What cuisine has {N} been eating for lunch lately?", "{cuisine}"),
            ("What new place did {N} find near work?", "a {cuisine} restaurant"),
        ],
    ),
    dict(
        key="paint",
        topic="home",
        mood="pos",
        slots=s_paint,
        tense="past",
        say=[
            "we painted the {room} {color}!",
            "spent the weekend painting the {room}. {color} \U0001f60d",
            (
                "the {room} is {color} now and I'm never leaving it",
                [("What color is {N}'s {room} now?", "{color}")],
            ),
        ],
        echo=["{Color}! bold choice", "Ooh I bet that looks so good", "Send a pic"],
        follow=[
            (
                "Did you do it yourselves?",
                "yep, two coats, and there's paint everywhere, including my hair",
                "We did it ourselves, two coats, and there's paint in my hair",
            ),
            (
                "Was it hard to pick?",
                "we had like 15 samples on the wall for a month before deciding",
                "We had like 15 samples on the wall for a month",
            ),
        ],
        q=[
            ("What color did {N} paint the {room}?", "{color}"),
            ("What color are {N}'s {room} walls now?", "{color}"),
            ("How did {N} redecorate {his} {room}?", "painted it {color}"),
        ],
    ),
    dict(
        key="exam",
        topic="study",
        mood="pos",
        slots=s_exam,
        tense="past",
        say=[
            "I PASSED MY {test}!!!",
            "passed the {test} \U0001f389 first try",
            "so the {test} happened and... I passed!!",
        ],
        say_t=["passed my {test} {when}!!", "{When} I took the {test} and passed"],
        echo=["YESSS congrats!!", "First try?! amazing", "I knew you would"],
        follow=[
            (
                "Were you nervous?",
                "so nervous, I couldn't eat breakfast, and my hands were shaking",
                "I was so nervous I couldn't eat breakfast",
            ),
            (
                "How are you celebrating?",
                "pizza and sleep, in that order",
                "Celebrating with pizza and sleep",
            ),
        ],
        q=[
            ("What exam did {N} pass?", "the {test}"),
            ("What test did {N} pass on the first try?", "the {test}"),
            ("What did {N} pass recently?", "the {test}"),
        ],
        tq=["When did {N} pass the {test}?"],
    ),
    dict(
        key="camera",
        topic="hobby",
        mood="pos",
        slots=s_camera,
        tense="past",
        say=[
            "I bought {gear} for taking photos!!",
            ("treated myself to {gear}, no regrets", [("What did {N} treat {him}self to?", "{gear}")]),
            "so I got {gear} to take photos on the trip, I'm a photographer now apparently",
        ],
        echo=["Ooh photographer era", "Send me your first shots", "Nice!! what are you gonna shoot?"],
        follow=[
            (
                "What are you shooting first?",
                "birds at the lake, apparently I'm a bird person now",
                "I'm going to shoot birds at the lake, apparently I'm a bird person now",
            ),
            ("Was it expensive?", "don't ask, I'm pretending it was free"),
        ],
        q=[
            ("What camera gear did {N} buy?", "{gear}"),
            ("What did {N} treat {him}self to?", "{gear}"),
            ("What did {N} buy for taking photos?", "{gear}"),
        ],
    ),
    dict(
        key="move",
        topic="home",
        mood="pos",
        slots=s_move,
        tense="future",
        say=[
            (
                "we found a new apartment!! {feature}, same neighborhood",
                [("What does the new apartment {N} found in the same neighborhood have?", "{feature}")],
            ),
            (
                "signed a lease on a new apartment, it has {feature}",
                [("What does the new apartment {N} signed a lease on have?", "{feature}")],
            ),
            "new apartment is happening. the main selling point: {feature}",
        ],
        say_t=[
            "we're moving into the new apartment {when}, boxes everywhere",
            "moving day is {when}!! can't wait for {feature}",
        ],
        echo=["A new place!! so exciting", "Ooh {feature}, fancy", "Ahh a new place!"],
        follow=[
            (
                "Is it far from your old one?",
                "only a ten minute walk away, so same coffee shop, same everything",
                "It's only ten minutes from the old place",
            ),
            (
                "Need help moving?",
                "yes please, I'll pay in pizza and eternal gratitude",
                "I might need help with boxes, I'll pay in pizza",
            ),
        ],
        q=[
            ("What is the main perk of {N}'s new apartment?", "{feature}"),
            ("What does {N}'s new apartment have that the old one didn't?", "{feature}"),
        ],
        tq=["When is {N} moving into {his} new apartment?", "When is {N}'s moving day?"],
    ),
    dict(
        key="tripf",
        topic="travel",
        mood="pos",
        slots=s_tripf,
        tense="future",
        say=[
            (
                "booked it!! {days} days in {place} \u2708\ufe0f",
                [("Where did {N} book {days} days?", "{place}")],
            ),
            "we're doing {place} for {days} days, finally",
            "I bought tickets to {place}. {days} days. no regrets",
        ],
        say_t=["we fly to {place} {when}!! {days} days", "{When} I'm off to {place} for {days} days"],
        echo=["{place}!!! so jealous", "Ahh bring me with you", "Send me a postcard"],
        follow=[
            (
                "Got an itinerary?",
                "zero. just vibes and food, we'll figure it out when we get there",
                "No itinerary at all, just vibes and food",
            ),
            (
                "Who's watching the house?",
                "my {sib} is house-sitting, bribed with wine",
                "My {sib} is house-sitting, bribed with wine",
            ),
        ],
        q=[
            ("Where is {N} going on vacation?", "{place}"),
            ("Where did {N} book a trip to?", "{place}"),
            ("How many days will {N} spend in {place}?", "{days}"),
        ],
        tq=["When is {N} flying to {place}?", "When is {N} off to {place}?"],
    ),
    dict(
        key="sibwed",
        topic="family",
        mood="pos",
        slots=s_sibwed,
        tense="future",
        say=[
            "my {sib}'s getting married!! and I'm {role} at the wedding",
            (
                "{sibname} asked me to be {role} at the wedding, I'm honored and terrified",
                [("What did {sibname} ask {N} to be at the wedding?", "{role}")],
            ),
            "wedding prep for my {sib} is eating my life. I'm {role}",
        ],
        say_t=["my {sib}'s wedding is {when} and I'm {role}", "{When} is {sibname}'s wedding!! I'm {role}"],
        echo=["Aww that's so sweet", "You're going to do great", "Ooh a wedding! what are you wearing?"],
        follow=[
            (
                "Are you nervous?",
                "a little. ok a lot. I've rewritten my notes five times",
                "I'm so nervous, I've rewritten my notes five times",
            ),
            (
                "Where's the wedding?",
                "a barn outside town, very rustic, fairy lights everywhere",
                "It's in a barn outside town, very rustic",
            ),
        ],
        q=[
            ("What is {N} doing at {his} {sib}'s wedding?", "{role}"),
            ("What role does {N} have in {his} {sib}'s wedding?", "{role}"),
        ],
        tq=["When is {N}'s {sib}'s wedding?"],
    ),
    dict(
        key="interview",
        topic="work",
        mood="pos",
        slots=s_interview,
        tense="future",
        say=[
            "I have an interview at {co}!! {role}",
            "so {co} called me back, interview for {role}",
            (
                "applied to {co} on a whim and they want to interview me \U0001f633",
                [("Which company wants to interview {N}?", "{co}")],
            ),
        ],
        say_t=["interview at {co} {when}, wish me luck", "{When} I have an interview at {co}, {role}"],
        echo=["Ooh good luck!!", "You're going to crush it", "{co}! fancy"],
        follow=[
            (
                "Are you prepared?",
                "making flashcards like it's school, I practice answers in the shower",
                "I'm making flashcards like it's school",
            ),
            (
                "Would you take it?",
                "if the money's right, yes, I've been ready for a change for a while",
                "If the money's right I'd take it",
            ),
        ],
        q=[
            ("Which company is {N} interviewing with?", "{co}"),
            ("Where did {N} get a job interview?", "{co}"),
        ],
        tq=["When is {N}'s interview at {co}?"],
    ),
]
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


PET_ISSUES = {
    "limp": [
        ("Just a sprain thank god. two weeks of rest", "a sprain; two weeks of rest"),
        ("arthritis \U0001f97a pills with breakfast from now on", "arthritis; daily pills"),
    ],
    "itchy skin": [
        ("Allergies apparently! special food from now on", "allergies; special food"),
        ("fleas. FLEAS. the whole flat got treated", "fleas"),
    ],
    "eye": [
        ("an infection, drops twice a day for ten days", "an eye infection; drops"),
        ("a tiny scratch, healing fine", "a small scratch that is healing"),
    ],
    "cough": [
        ("kennel cough, antibiotics for a week", "kennel cough; antibiotics"),
        ("nothing serious, the old thing is just dramatic", "nothing serious"),
    ],
}


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


DOCTOR = {
    "back pain": ("Pinched nerve. physio twice a week for a month", "a pinched nerve; physio"),
    "headaches": ("I need glasses. that's it, that was the whole mystery", "{he} needs glasses"),
    "dizzy spells": ("Low iron! on supplements now", "low iron"),
    "sore knee": ("Tendinitis, no running for six weeks \U0001f629", "tendinitis"),
    "cough": ("Just a lingering virus, it'll pass", "a lingering virus"),
}


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


CTX = [
    dict(
        key="c_hotel",
        topic="travel",
        mood="pos",
        slots=c_hotel,
        setup=[
            "can't decide where to stay for the trip, {city} or {city2}. send help",
            "spent all night comparing hotels, one in {city2} and one in {city}, my eyes hurt",
        ],
        prompts=[
            "Did you end up booking that hotel you liked?",
            "So did you book a hotel for the trip in the end?",
            "Which hotel did you go with in the end?",
            "Did the hotel thing get sorted?",
        ],
        replies=[
            ("Yes, the one in {city}!", "{city}"),
            ("Yep!! the little one in {city}, right by the water", "{city}"),
            ("Went with the one in {city}. cancelled the other", "{city}"),
            ("{city} won \U0001f604 paid for it last night", "{city}"),
        ],
        after=["Ooh jealous", "Good choice!!", "Yay, it's happening!"],
        q=["In which city is the hotel {N} booked?", "Where is the hotel that {N} booked for {his} trip?"],
    ),
    dict(
        key="c_interview",
        topic="work",
        mood="pos",
        slots=c_interview,
        setup=[
            "I have an interview at {co} on Thursday, wish me luck",
            "got an interview with {co}!! trying not to panic",
        ],
        prompts=[
            "How did the interview at {co} go??",
            "Did you hear back from {co} after the interview?",
            "Any news from {co}? the interview?",
            "Sooo the {co} interview?? tell me",
        ],
        replies=[
            ("They offered it to me!!! starting in {month}", "{he} got the job, starting in {month}"),
            ("I'm in!! \U0001f62d still can't believe it", "{he} got the job"),
            ("Nope \U0001f615 they went with someone internal", "{he} didn't get it; they hired internally"),
            ("No luck. said I was too junior", "rejected as too junior"),
        ],
        after=["AHHH congrats!!", "Their loss honestly", "Wow ok!"],
        q=[
            "What was the outcome of {N}'s interview at {co}?",
            "Did {N} get the job at {co}?",
            "What happened with {N}'s job interview at {co}?",
        ],
    ),
    dict(
        key="c_choice",
        topic="home",
        mood="neu",
        slots=c_choice,
        setup=["I'm stuck choosing between a {c1} {item} and a {c2} one, help"],
        prompts=[
            "So which {item} did you go with, the {c1} or the {c2}?",
            "Did you decide on the {item}? {c1} or {c2}?",
            "Final answer on the {item}: {c1} or {c2}?",
        ],
        replies=[
            ("{Pick}! obviously haha", "{pick}"),
            ("{Pick}. {partnerish} wanted the other one but I won", "{pick}"),
            ("went {pick} in the end, no regrets", "{pick}"),
        ],
        after=["Good call", "Ooh nice", "Knew it"],
        q=["What color {item} did {N} choose?", "Which {item} color did {N} decide on?"],
    ),
    dict(
        key="c_vet",
        topic="pets",
        mood="neg",
        slots=c_vet,
        req=lambda o: o.pet is not None,
        setup=["{pet} has been weird about the {petissue} thing, vet on Monday"],
        prompts=[
            "What did the vet say about {pet}'s {petissue}?",
            "How's {pet}? did the vet figure out the {petissue} thing?",
            "Any news from the vet about {pet} and the {petissue}?",
        ],
        replies=None,
        after=["Poor baby", "Oh thank god it's nothing worse", "Give {pet} a cuddle from me"],
        q=[
            "What did the vet tell {N} about {pet}'s {petissue}?",
            "What was behind {N}'s {petkind} {pet}'s {petissue}, according to the vet?",
        ],
    ),
    dict(
        key="c_party",
        topic="social",
        mood="pos",
        slots=c_party,
        setup=["planning my {party}, I have no idea how many people will show up"],
        prompts=[
            "How many people came to your {party}?",
            "Was the {party} busy??",
            "So how was the {party}? did people show up?",
        ],
        replies=[
            ("Like {n}? way more than I expected", "about {n}"),
            ("{n}!! in our tiny flat", "{n}"),
            ("only {n} \U0001f605 but it was cozy", "only {n}"),
        ],
        after=["Haha amazing", "Sounds fun!", "Cozy is good"],
        q=["How many guests attended {N}'s {party}?", "What was the turnout at {N}'s {party}?"],
    ),
    dict(
        key="c_gift",
        topic="family",
        mood="pos",
        slots=c_gift,
        setup=["got my {rel} a {gift} for {relhis} birthday, hope {relhe} likes it"],
        prompts=[
            "Did your {rel} like the {gift}?",
            "So how did the {gift} go down with your {rel}?",
            "Did you give your {rel} the {gift} yet??",
        ],
        replies=[
            ("Loved it!!! {relhe} hasn't stopped talking about it", "{relhe} loved it"),
            ("Honestly? not sure. polite smile", "{relhe} seemed lukewarm"),
            ("{Relhe} cried. good tears \U0001f979", "{relhe} cried happy tears"),
            ("{Relhe} already showed it to half the street", "{relhe} loved it and showed it off"),
        ],
        after=["Aww", "Haha that's the best", "Mission accomplished"],
        q=["How did {N}'s {rel} react to the {gift}?", "Did {N}'s {rel} like the {gift}?"],
    ),
    dict(
        key="c_exam",
        topic="study",
        mood="pos",
        slots=c_exam,
        setup=["my {exam} is on Friday and I'm dying"],
        prompts=[
            "Did you get your {exam} results??",
            "Any news on the {exam}?",
            "So... the {exam}? results out yet?",
        ],
        replies=[
            ("{score}!!! passed", "{score}"),
            ("{score} \U0001f64c celebrating tonight", "{score}"),
            ("{score}. not amazing but good enough", "{score}"),
        ],
        after=["YES", "Amazing!!", "Good enough is good enough!"],
        q=["What score did {N} get on the {exam}?", "What was {N}'s {exam} result?"],
    ),
    dict(
        key="c_movie",
        topic="tv",
        mood="neu",
        slots=c_movie,
        setup=["we're finally seeing {movie} this weekend"],
        prompts=[
            "Did you end up seeing {movie}?",
            "Did you watch {movie} yet?",
            "So what's the verdict on {movie}?",
        ],
        replies=[
            ("Yeah... honestly kind of boring. fell asleep halfway", "{he} found it boring"),
            ("YES. go see it, the ending destroyed me", "{he} loved it, especially the ending"),
            ("we walked out after an hour \U0001f62c", "{he} walked out after an hour"),
            ("Loved it, already want to go again", "{he} loved it"),
        ],
        after=["Haha noted", "Ok it's on my list", "Wow"],
        q=["What did {N} think of {movie}?", "What was {N}'s opinion of the film {movie}?"],
    ),
    dict(
        key="c_flat",
        topic="home",
        mood="pos",
        slots=c_flat,
        setup=["two apartments left on the list: one with {fa}, one with {fb}. decisions"],
        prompts=[
            "Did you go for the apartment with {fa} or the one with {fb}?",
            "So which apartment won, {fa} or {fb}?",
        ],
        replies=[
            ("The {fas} one! signed the lease yesterday", "the one with {fa}"),
            ("{Fbs}. couldn't say no to that", "the one with {fb}"),
            ("{Fas}, obviously \U0001f60c", "the one with {fa}"),
        ],
        after=["Yesss", "Good choice", "Housewarming when?"],
        q=["Which apartment did {N} choose?", "Which apartment did {N} end up picking?"],
    ),
    dict(
        key="c_repair",
        topic="car",
        mood="neg",
        slots=c_repair,
        setup=["car's in the shop again, something with the {repair} \U0001f644"],
        prompts=[
            "How much did the mechanic end up charging for the {repair}?",
            "Did you get the car back? what was the damage for the {repair}?",
            "Ugh how bad was the bill for the {repair}?",
        ],
        replies=[
            ("${n} \U0001f62d", "${n}"),
            ("${n}. nearly cried at the counter", "${n}"),
            ("${n}, less than I feared honestly", "${n}"),
        ],
        after=["Oof", "Ugh cars", "Could've been worse I guess"],
        q=["How much did {N} pay for the {repair} repair?", "What did the {repair} fix cost {N}?"],
    ),
    dict(
        key="c_name",
        topic="misc",
        mood="pos",
        slots=c_name,
        prompts=[
            "Did you guys pick a name for the {thing} yet?",
            "Wait what did you end up calling the {thing}?",
            "So does the {thing} have a name now?",
        ],
        replies=[
            ("{nm}! {kidname} chose it", "{nm}"),
            ("{nm}, don't ask", "{nm}"),
            ("We went with {nm} \U0001f602", "{nm}"),
        ],
        after=["Perfect", "Hahaha love it", "Iconic"],
        q=["What name did {N} give the {thing}?", "What is {N}'s {thing} called?"],
    ),
    dict(
        key="c_bake",
        topic="food",
        mood="neu",
        slots=c_bake,
        setup=["attempting {bake} this weekend, wish me luck"],
        prompts=[
            "How did the {bake} turn out?",
            "Sooo did the {bake} work this time?",
            "Verdict on the {bake}??",
        ],
        replies=[
            ("Flat as a pancake. trying again Saturday", "flat; {he}'ll try again"),
            ("Perfect!! honestly bakery level", "perfectly"),
            ("burnt the bottom but still ate all of it", "burnt on the bottom"),
            ("a disaster. the smoke alarm went off twice", "a disaster"),
        ],
        after=["Hahaha", "Proud of you", "Next time!"],
        q=["How did {N}'s {bake} come out?", "Was {N}'s {bake} a success?"],
    ),
    dict(
        key="c_racet",
        topic="sport",
        mood="pos",
        slots=c_racet,
        setup=["{race} on Sunday, carb loading as we speak"],
        prompts=[
            "How'd the {race} go?? what was your time?",
            "Did you finish the {race}? time??",
            "{race} results!! how did you do?",
        ],
        replies=[
            ("{rtime}! new personal best", "{rtime}"),
            ("{rtime}, not my best but I'll take it", "{rtime}"),
            ("{rtime} \U0001f975 walked the last hill", "{rtime}"),
        ],
        after=["Amazing!!", "That's so good", "Legend"],
        q=["What was {N}'s time in the {race}?", "How fast did {N} run the {race}?"],
    ),
    dict(
        key="c_companion",
        topic="travel",
        mood="pos",
        slots=c_companion,
        setup=["trip to {place} is booked!!"],
        prompts=[
            "Who are you going to {place} with?",
            "Is anyone going to {place} with you?",
            "Wait who's coming on the {place} trip?",
        ],
        replies=[
            ("My cousin {cname} and her husband", "{his} cousin {cname} and her husband"),
            ("Just me! solo \U0001f60e", "nobody; it's a solo trip"),
            ("A couple of friends from work", "two friends from work"),
            ("{sibname}, {sibhe} invited {sibhim}self", "{his} {sib} {sibname}"),
        ],
        after=["Fun!", "Love that", "Ooh nice"],
        q=["Who is {N} traveling to {place} with?", "Who is joining {N} on the trip to {place}?"],
    ),
    dict(
        key="c_teacher",
        topic="study",
        mood="neu",
        slots=c_teacher,
        prompts=[
            "How's the new {subject} teacher?",
            "Do you like your new {subject} teacher?",
            "Is the new {subject} teacher any better than the last one?",
        ],
        replies=[
            ("Super strict but I've improved so much", "strict, but {he} has improved a lot"),
            ("Lovely, very patient with me", "very patient"),
            ("meh. spends half the class on their phone", "not impressed: on the phone half the class"),
            ("Way better, actually explains stuff", "much better; explains well"),
        ],
        after=["Good to hear", "Ugh", "Nice"],
        q=[
            "What does {N} think of {his} new {subject} teacher?",
            "How does {N} rate the new {subject} teacher?",
        ],
    ),
    dict(
        key="c_role",
        topic="work",
        mood="pos",
        slots=c_role,
        setup=["applied for the {role} role internally, fingers crossed"],
        prompts=[
            "Did you hear back about the {role} role?",
            "Any news on the {role} position?",
            "So did they give you the {role} job??",
        ],
        replies=[
            ("YES!!! \U0001f389 still shaking", "yes"),
            ("Someone else \U0001f643", "no, someone else did"),
            ("Yes!!! starting Monday", "yes, starting Monday"),
        ],
        after=["So deserved", "Their loss", "Wooo"],
        q=["Did {N} get the {role} position?", "What happened with {N}'s application for the {role} role?"],
    ),
    dict(
        key="c_baby",
        topic="family",
        mood="pos",
        slots=c_baby,
        setup=["my {rel2} is due any day now, I'm checking my phone every five minutes"],
        prompts=[
            "Has your {rel2} had the baby yet?",
            "Any baby news from your {rel2}??",
            "Is your {rel2}'s baby here yet?",
        ],
        replies=[
            ("Yes!! a little girl, {wt}, born Tuesday", "a girl"),
            ("Yes! a boy \U0001f979 everyone's healthy", "a boy"),
            ("Twins!!! two girls, nobody saw it coming", "twin girls"),
        ],
        after=["Congrats auntie!!", "Omg!!!", "So happy for them"],
        q=["What is the sex of {N}'s {rel2}'s baby?", "Did {N}'s {rel2} have a son or a daughter?"],
    ),
    dict(
        key="c_outfit",
        topic="social",
        mood="neu",
        slots=c_outfit,
        prompts=["What are you wearing to {event}?", "Did you figure out what to wear for {event}?"],
        replies=[
            ("The green dress from the vintage shop", "a green vintage dress"),
            ("My dad's old suit, tailored", "{his} dad's old suit, tailored"),
            ("A jumpsuit! comfy and fancy", "a jumpsuit"),
            ("Borrowing my {sib}'s blazer", "{his} {sib}'s blazer"),
        ],
        after=["Perfect", "Oh that'll look great", "Love"],
        q=["What outfit did {N} choose for {event}?", "What is {N} wearing to {event}?"],
    ),
    dict(
        key="c_doctor",
        topic="health",
        mood="neg",
        slots=c_doctor,
        setup=["doctor's appointment Tuesday about the {symptom}, finally"],
        prompts=[
            "What did the doctor say about your {symptom}?",
            "Did you finally see someone about the {symptom}?",
            "Any answers about the {symptom}?",
        ],
        replies=None,
        after=["Well at least you know", "Oof", "Glad it's nothing scary"],
        q=["What did {N} find out about {his} {symptom}?", "What was causing {N}'s {symptom}?"],
    ),
    dict(
        key="c_team",
        topic="music",
        mood="pos",
        slots=c_team,
        setup=["auditions for the {team} are tomorrow \U0001f62c"],
        prompts=[
            "Did you make the {team}?",
            "Sooo the {team} auditions??",
            "Did you hear back from the {team}?",
        ],
        replies=[
            ("Yes!! I'm in {part}", "{part}"),
            ("I'm in! they put me in {part}", "{part}"),
            ("Made it!! {part}, but I'll take it", "{part}"),
        ],
        after=["Yay!!", "Amazing", "Told you"],
        q=["What part did {N} get in the {team}?", "Where was {N} placed in the {team}?"],
    ),
    dict(
        key="c_landlord",
        topic="home",
        mood="neg",
        slots=c_landlord,
        setup=["the {issue} situation at our place is getting ridiculous"],
        prompts=["Did your landlord ever fix the {issue}?", "Any update on the {issue} with the landlord?"],
        replies=[
            ("Nope. three weeks and counting \U0001f643", "no, still not fixed after three weeks"),
            ("Finally! took him a month", "yes, after a month"),
            ("He sent his nephew who made it worse", "he sent his nephew, who made it worse"),
            (
                "We did it ourselves and took it off the rent",
                "they did it themselves and deducted it from the rent",
            ),
        ],
        after=["Ugh landlords", "Classic", "Unbelievable"],
        q=["Did {N}'s landlord deal with the {issue}?", "What happened with the {issue} at {N}'s place?"],
    ),
    dict(
        key="c_cake",
        topic="family",
        mood="pos",
        slots=c_cake,
        prompts=[
            "What cake did you get for {kidname}'s party?",
            "What kind of cake did {kidname} want in the end?",
        ],
        replies=[
            ("Chocolate with strawberries on top, {kidhe} chose it", "chocolate with strawberries"),
            ("lemon drizzle, {kidhe}'s obsessed", "lemon drizzle"),
            ("a dinosaur one, vanilla inside", "vanilla, dinosaur-shaped"),
            ("Funfetti. always funfetti", "funfetti"),
        ],
        after=["Yum", "Solid choice", "Save me a slice"],
        q=[
            "What flavor was the cake {N} got for {kidname}'s party?",
            "What cake did {N} get for {kidname}'s birthday?",
        ],
    ),
    dict(
        key="c_carsale",
        topic="car",
        mood="neu",
        slots=c_carsale,
        setup=["putting the {car} up for sale this week, wish me luck"],
        prompts=["Did you end up selling the {car}?", "Any bites on the {car} listing?"],
        replies=[
            ("Yep, to a college kid for ${n}", "a college student, for ${n}"),
            ("Sold! to my neighbor, ${n}", "{his} neighbor, for ${n}"),
            ("Nope, no one wants it \U0001f602 might donate it", "nobody yet; {he} might donate it"),
        ],
        after=["Nice", "Haha", "Good riddance"],
        q=["Who bought {N}'s {car}?", "What happened with {N}'s {car} listing?"],
    ),
    dict(
        key="c_flight",
        topic="travel",
        mood="neg",
        slots=c_flight,
        prompts=["How was the flight back from {place}?", "Did you make it home from {place} ok?"],
        replies=[
            ("Delayed 6 hours \U0001f629 landed at 3am", "delayed six hours"),
            ("Smooth! slept the whole way", "smooth; {he} slept"),
            ("They lost my suitcase. still missing", "the airline lost {his} suitcase"),
        ],
        after=["Nooo", "Ugh airlines", "Lucky!"],
        q=["What happened on {N}'s flight back from {place}?", "How did {N}'s return from {place} go?"],
    ),
    dict(
        key="c_noise",
        topic="home",
        mood="neg",
        slots=c_noise,
        setup=["the upstairs neighbor's {noise} is going to end me"],
        prompts=[
            "Did you ever talk to your neighbor about the {noise}?",
            "Is the upstairs neighbor still doing the {noise} thing?",
        ],
        replies=[
            ("I left a note. they bought a rug", "{he} left a note; they bought a rug"),
            ("Yes, super awkward but it's over now", "{he} talked to them; it ended"),
            ("Still going. I bought earplugs", "no change; {he} bought earplugs"),
        ],
        after=["Haha", "Ugh", "Progress"],
        q=[
            "How did {N} handle the {noise} from {his} neighbor?",
            "Did the {noise} from {N}'s neighbor stop?",
        ],
    ),
]


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


UPDATES = [
    dict(
        key="u_job",
        topic="work",
        slots=u_job,
        old=[
            "work at {v1} has been insane this month, everyone's on edge",
            "another Monday at {v1}, kill me",
            "my team at {v1} is doing a potluck friday, I'm bringing chips",
        ],
        new=[
            "first day working at {v2} today!! new company, new me",
            "I handed in my notice at {v1}. starting work at my new company, {v2}, in two weeks!",
            "officially working for {v2} now \U0001f605 new badge and everything",
        ],
        echo_old=[
            "Haha solidarity, my week has been the same",
            "Ugh Mondays, I feel you",
            "Chips is a power move, nobody can complain about chips",
        ],
        echo_new=[
            "WAIT. congrats!! how did I not know about this?",
            "Omg new job!! tell me everything about it",
            "Good riddance to the old place, you deserve better",
        ],
        q=[
            "Where does {N} work now?",
            "Which company does {N} work for now?",
            "Who is {N}'s current employer?",
        ],
        a="{v2}",
    ),
    dict(
        key="u_city",
        topic="home",
        slots=u_city,
        old=[
            "rent in {v1} went up again, ugh",
            "our street in {v1} is so loud lately, I need earplugs",
            "traffic in {v1} is getting so bad",
        ],
        new=[
            "new city, who dis: we officially live in {v2} now!! boxes everywhere",
            "first week living in a new city \u2705 {v2} is huge, I'm still getting lost",
            "we did it, we left {v1}!! we live in {v2} now, new city new us",
        ],
        echo_old=[
            "Ugh same here, it's been a lot",
            "That sounds lovely, I miss it there",
            "Honestly move somewhere else lol",
        ],
        echo_new=[
            "Welcome to your new life!! how does it feel?",
            "Omg that's huge, how are you settling in?",
            "Send pics of the new place, I need to see it",
        ],
        q=["Which city does {N} live in now?", "Where is {N} currently living?"],
        a="{v2}",
    ),
    dict(
        key="u_race",
        topic="sport",
        slots=u_race,
        old=["training for a {v1}, three runs a week", "{v1} training update: my knees hate me"],
        new=[
            "changed my race: now training for the {v2} instead \U0001f605",
            "I switched to the {v2}, go big or go home",
        ],
        echo_old=["You're so disciplined, I could never", "Go you!! I'll come cheer on race day"],
        echo_new=[
            "You're insane (complimentary), I'm so impressed",
            "Wow ok, ambitious! you're going to crush it",
        ],
        q=["What distance is {N} training for now?", "Which race is {N} currently training for?"],
        a="the {v2}",
    ),
    dict(
        key="u_trip",
        topic="travel",
        slots=u_trip,
        old=["we're going to {v1} in {month}!!", "booked flights to {v1} for {month} \U0001f389"],
        new=[
            "change of plans, the {month} trip is {v2} now. flights were way cheaper",
            "we cancelled the {v1} trip, going to {v2} in {month} instead",
        ],
        echo_old=["Ahh so jealous, I need a holiday too", "That's going to be amazing, you deserve it"],
        echo_new=[
            "Ooh even better maybe? I've heard great things",
            "Plot twist! honestly sounds like a good swap",
        ],
        q=["Where is {N} going on {his} {month} trip?", "What is the destination of {N}'s {month} vacation?"],
        a="{v2}",
    ),
    dict(
        key="u_books",
        topic="books",
        slots=u_books,
        old=["I'm at {v1} books this year, trying for 30", "book count for the year: {v1} \U0001f913"],
        new=["{v2} books so far this year \U0001f913", "just hit {v2} books for the year!"],
        echo_old=[
            "Nerd (affectionate), I'm impressed",
            "How do you find the time? I've read one book this year",
        ],
        echo_new=["You're a machine, seriously", "Ok overachiever, send me your favorites"],
        q=["How many books has {N} read this year?", "What is {N}'s book count for the year so far?"],
        a="{v2}",
    ),
    dict(
        key="u_wedding",
        topic="family",
        slots=u_wedding,
        req=lambda o: o.status == "engaged",
        old=["we set the date, {v1}!", "wedding's booked for {v1} \U0001f48d"],
        new=[
            "we had to move the wedding to {v2}, the venue double-booked us",
            "new wedding date: {v2}. long story",
        ],
        echo_old=["Ahh it's real!! I'm so excited for you both", "Saving the date right now"],
        echo_new=["Ugh venues, that's so stressful", "Noted, new date in my calendar, I'll be there"],
        q=["When is {N}'s wedding?", "What is the date of {N}'s wedding?"],
        a="{v2}",
    ),
    dict(
        key="u_car",
        topic="car",
        slots=u_car,
        old=["my {v1} is making that noise again", "took the {v1} through the car wash, she's shiny"],
        new=[
            "new car alert: driving a {v2} now, traded in the {v1}",
            "said goodbye to my old car today. the {v2} is home and I'm driving it everywhere",
        ],
        echo_old=["Uh oh, that doesn't sound good", "Haha nice, treat her well"],
        echo_new=["Ooh fancy, take me for a drive", "RIP old car, it had a good run"],
        q=["What car does {N} drive now?", "What is {N}'s current car?"],
        a="a {v2}",
    ),
    dict(
        key="u_roommate",
        topic="home",
        slots=u_roommate,
        req=lambda o: o.partner is None,
        old=[
            "my roommate {v1} keeps eating my leftovers \U0001f624",
            "{v1} (roommate) adopted a snake. I'm not ok",
        ],
        new=[
            "{v1} moved out!! new roommate is {v2}, seems chill",
            "{v2} moved into {v1}'s old room last week, so far so good",
        ],
        echo_old=["Label your food lol, or hide it at the back", "A SNAKE. I would move out immediately"],
        echo_new=["New roomie! hope they're tidy", "Hope this one's better than the last, fingers crossed"],
        q=[
            "Who is {N}'s roommate now?",
            "Who does {N} currently share {his} apartment with?",
            "Who is {N}'s new roommate?",
        ],
        a="{v2}",
    ),
    dict(
        key="u_5k",
        topic="sport",
        slots=u_5k,
        old=["my 5k best is {v1}, want to get under {goal} minutes"],
        new=["new best 5k time!! {v2}", "ran {v2} for 5k this morning!!! new personal best"],
        echo_old=[
            "You'll get there, you've been so consistent",
            "That's already fast, I'd be happy with that",
        ],
        echo_new=["Speedy!! all that training paid off", "Look at you go, so proud of you"],
        q=["What is {N}'s best 5K time?", "What is {N}'s personal best for five kilometers?"],
        a="{v2}",
    ),
    dict(
        key="u_diet",
        topic="food",
        slots=u_diet,
        old=["day {n} of being vegetarian!", "still vegetarian, surprisingly easy"],
        new=[
            "diet update: the vegetarian thing lasted {n} days, I'm eating fish again",
            "confession: I had a burger. my vegetarian diet era is over",
        ],
        echo_old=["Proud of you, I could never give up cheese", "Haha respect, how are you finding it?"],
        echo_new=["Hahaha it happens, you gave it a good shot", "No judgment at all, life is short"],
        q=["Is {N} still vegetarian?", "Is {N} still following a vegetarian diet?"],
        a="no; {he} {v2}",
    ),
    dict(
        key="u_instrument",
        topic="music",
        slots=u_instrument,
        old=["{v1} practice is going ok, my fingers hurt", "still plugging away at the {v1}"],
        new=[
            "new instrument: I'm playing the {v2} now, quit the {v1}",
            "switched instruments: playing the {v2} now instead of the {v1}, best decision",
        ],
        echo_old=[
            "Keep going! it gets easier, I promise",
            "It gets easier, everyone says the first months are the worst",
        ],
        echo_new=["Haha fair, you have to enjoy it", "Ooh the {v2}! that sounds way more fun"],
        q=["What instrument does {N} play now?", "Which instrument is {N} focused on currently?"],
        a="the {v2}",
    ),
    dict(
        key="u_major",
        topic="study",
        slots=u_major,
        old=["{v1} homework is eating my weekend", "my {v1} classes are actually fun this term"],
        new=["I switched my major to {v2}!!", "officially switched my major to {v2}, goodbye {v1}"],
        echo_old=["Ugh homework on the weekend is the worst", "Nice! glad you're enjoying it"],
        echo_new=["Big change! but it sounds right for you", "Follow your heart, you'll be great at it"],
        q=["What is {N} majoring in now?", "What did {N} switch {his} major to?"],
        a="{v2}",
    ),
]


# ----------------------------------------------------------------------------------------------
# chit-chat pools

GREETINGS = [
    [
        [
            "Hey! how are you?",
            "Hey {other}! how's it going?",
            "Hiii, how are you doing?",
            "Hey you, how's your week been?",
            "Hey, how are things?",
        ],
        [
            "Good, thanks! you?",
            "Pretty good actually, how about you?",
            "Hanging in there, you?",
            "Honestly a bit tired but good. you?",
            "Hey {other}! not bad at all, you?",
        ],
        [
            "Good! busy week",
            "Can't complain!",
            "All good here",
            "Tired but happy",
            "Ugh it's been a week",
            "Not bad! survived {weekday}",
        ],
    ],
    [
        ["Heyyy", "Hi hi!", "Hey hey", "Yo!", "Hellooo"],
        ["Hey! what's up?", "Hiii! what's going on?", "Hey {other}! what's new?", "Omg hi! what's up?"],
    ],
    [
        ["Ok I have five minutes, how are you??", "Quick break at work, how's life?"],
        ["Haha hi! all good, you?", "Busy busy, but good! you?", "Hi!! surviving, you?"],
        ["Same, same", "Good! surviving", "Honestly pretty great"],
    ],
    [
        ["Good {tod}!", "Happy {weekday}!"],
        ["Good {tod}! how's your day going?", "Hey! how's your day been?"],
        ["Pretty good so far!", "Long, but ok", "Slow, which I'm enjoying"],
    ],
    [
        ["Psst. you around?", "You free to chat for a bit?"],
        ["Here! what's up?", "Yep, just finished dinner. what's up?", "Always, what's up?"],
    ],
    [
        ["Hey, how was your weekend?", "Hey! did you have a good weekend?"],
        ["So nice, I did basically nothing. yours?", "Too short! yours?", "Busy but fun. you?"],
        ["Same, way too short", "Lovely, thanks!", "Quiet, which was perfect"],
    ],
    [
        ["Hi {other} \U0001f44b how are things?", "Hey {other}, how are you holding up?"],
        ["Hey! things are good, you?", "Hi! all good here. you?", "Much better than last week! you?"],
        ["Good good", "Not bad at all", "Pretty good!"],
    ],
]
GREETINGS_LONG = [
    [
        [
            "Hey stranger!",
            "It's been ages!!",
            "Sorry I disappeared, life got crazy",
            "Hey! long time no talk",
            "Ok we need to catch up, it's been forever",
        ],
        [
            "I know!! way too long. how are you?",
            "Omg hi, I was about to text you! how ARE you",
            "Life happens! how are you doing?",
            "Finally! how have you been?",
        ],
        [
            "Good! so much to tell you",
            "Honestly a lot has happened",
            "Pretty good, busy busy",
            "Good, finally a bit calmer",
        ],
    ],
]
GREET_TAILS = [
    "I've been meaning to text you all week.",
    "Work has been crazy but I finally have a minute.",
    "Been thinking about you!",
    "Sorry I took so long to reply last time.",
    "Waiting for my laundry to finish, so perfect timing.",
    "Just put the kettle on.",
    "The weather is so nice today, I might go for a walk later.",
]
GREET_TAILS_TOD = {
    "morning": [
        "Just made my first coffee of the day.",
        "On the bus to work, so I have a few minutes.",
        "Up way too early as usual.",
        "Trying to wake up properly before my first meeting.",
    ],
    "afternoon": [
        "I'm on my lunch break, so perfect timing.",
        "Hiding from my inbox for five minutes.",
        "The afternoon slump is real today.",
    ],
    "evening": [
        "Just got home from work and finally sat down.",
        "Sitting on the couch with a cup of tea.",
        "It's been a long day but a good one.",
        "I'm on the train home, so I have a few minutes.",
        "I just got back from the gym and I'm dead.",
        "Making dinner while we chat.",
        "Finally some quiet time after a hectic day.",
    ],
}
CLOSE_1 = [
    "Ok I have to run, dinner is not going to cook itself. talk later!",
    "Gotta go make dinner, bye!! let's talk again soon",
    "Ok bedtime for me, I can barely keep my eyes open. night!",
    "Ok my break is over \U0001f629 back to the spreadsheets. talk later",
    "I'm falling asleep on the couch, night night",
    "Have to jump on a call, but this was fun. bye!",
    "Ok I should actually do some work now, my boss just walked by",
    "Gotta go, miss you! let's do this more often",
    "Ok, off to the gym before I change my mind. ttyl",
    "Battery at 3%, bye!! I'll text you tomorrow",
    "Going to start dinner, talk soon and good luck with everything",
    "Ok I'll let you go, I know you're busy",
    "Let's catch up properly soon, I feel like we barely scratched the surface!",
    "I have to go pick something up before the store closes, talk soon!",
    "Ok, the laundry is calling me. bye for now!",
]
CLOSE_2 = [
    "Bye!! talk soon",
    "Night! \U0001f634 sleep well",
    "Talk soon \U0001f495 miss you",
    "Later! good luck with the rest of your day",
    "Byeee, this was nice",
    "Good luck with everything!",
    "Ttyl! text me whenever",
    "Sleep well, talk tomorrow maybe!",
    "Ok bye bye, take care of yourself",
    "Have fun! don't work too hard",
    "Yes please! bye for now",
    "Go go go, bye!",
    "\U0001f44b\U0001f44b talk later",
    "Bye! it was so good to hear from you",
]
CLOSE_3 = ["\u2764\ufe0f", "\U0001f618", "xx", "\U0001f44b"]
CLOSE_TAILS = [
    "It was so good catching up!",
    "Let's not leave it so long next time.",
    "Talk this weekend?",
    "Good luck with everything this week.",
    "Text me how it goes!",
    "Thanks for listening to me ramble.",
    "This was exactly what I needed today.",
    "Let's get coffee soon, for real.",
    "Say hi to everyone for me.",
]
GEN_TAILS = [
    "It's been such a weird week honestly.",
    "Not complaining though!",
    "I keep thinking about it.",
    "Which was nice for a change.",
    "Anyway, that's life right now.",
    "I really needed that.",
    "We'll see how it goes.",
    "Trying to take it one day at a time.",
    "Don't laugh at me.",
    "I'll send you pictures later.",
    "It felt really good, to be honest.",
    "My {sib} thinks I'm crazy.",
    "Long story, I'll tell you properly next time.",
    "It was totally worth it.",
    "I'm still smiling about it.",
    "Life has been a lot lately, but in a good way.",
    "Honestly the highlight of my month.",
    "I should have done it years ago.",
    "Not gonna lie, I'm a little nervous.",
    "Still can't quite believe it.",
    "Small wins, right?",
    "You know how I get about these things.",
    "I'll tell you all about it when we see each other.",
    "It's the little things.",
    "I'm trying not to overthink it.",
    "My whole weekend basically revolved around it.",
    "I told my mom and she was thrilled.",
    "It's been on my list forever.",
    "Feels like a fresh start, kind of.",
    "I'm exhausted, but the good kind.",
    "Who knew.",
    "I was so nervous beforehand, but it was fine.",
    "Things have been so hectic that this felt like a break.",
    "I didn't expect to enjoy it this much.",
    "More on that later.",
    "I think I'm finally getting the hang of it.",
    "It's a whole thing, honestly.",
    "That's been my week in a nutshell.",
    "I'm kind of proud of myself.",
    "Not sure what I was thinking, to be honest.",
    "My neighbors probably think I'm weird.",
    "So that's where my money went this month.",
    "Everyone I tell is so excited about it.",
    "I've wanted this for such a long time.",
]
CHAT_TAILS = [
    "It's been one of those weeks where nothing goes right.",
    "I swear this only happens to me.",
    "Honestly I don't know why I'm telling you this.",
    "Just one of those days, I guess.",
    "I've been laughing about it all afternoon.",
    "My coworkers think I'm ridiculous.",
    "Anyway, it made me think of you.",
    "I feel like I'm getting old, honestly.",
    "It's the small stuff that gets you.",
    "At least it's almost the weekend.",
    "I really need to get my life together.",
    "I keep telling myself it'll get better.",
    "Not my finest moment, I'll admit.",
    "You would have loved it, honestly.",
    "I almost texted you right away.",
    "The rest of the day was pretty uneventful.",
    "It's funny how these things work out.",
    "I'm trying to see the bright side.",
    "Whatever, tomorrow is a new day.",
    "I need to stop doing this to myself.",
    "Everyone else seemed totally fine with it.",
    "It's been like this all week.",
    "I'm choosing to find it funny.",
    "It sounds silly but it made my day.",
    "That's the most exciting thing that happened today, sadly.",
    "I'll tell you the whole story some other time.",
    "I really don't have the energy for it today.",
    "My {sib} said the exact same thing.",
    "I don't know how people do it.",
    "Good thing I had coffee first.",
    "I was not prepared for that at all.",
    "I'm blaming the weather.",
]
RESP_TAILS = [
    "Same thing happened to me last month.",
    "You always have the best stories.",
    "I'm cracking up over here.",
    "That's honestly so relatable.",
    "I would have done the exact same.",
    "Honestly, same.",
    "This is why I love talking to you.",
    "I feel that in my soul.",
    "Not gonna lie, that made me laugh.",
    "Sounds about right.",
    "I needed that laugh today.",
    "You're not alone, trust me.",
    "That's such a mood.",
    "Oh I know exactly what you mean.",
    "Tell me about it.",
    "I think about this all the time.",
    "Ha, the universe has jokes.",
]
REACT_TAILS = {
    "pos": [
        "You've been talking about this for ages!",
        "I'm so happy for you, seriously.",
        "Tell me everything!",
        "This made my day honestly.",
        "How are you feeling about it?",
        "You totally deserve it.",
        "I'm going to need all the details.",
        "That's the best news I've heard all week.",
        "I knew you'd do it.",
        "Can't wait to hear more.",
        "I'm smiling at my phone like an idiot.",
        "That sounds like so much fun.",
        "I love that you're doing this for yourself.",
        "Proud of you!",
        "Honestly, goals.",
        "I'm a little jealous, not gonna lie.",
        "You have to show me next time we meet up.",
        "That's so you, haha.",
        "How did I not know about this?",
        "This is so exciting.",
        "Ok now I want to do the same.",
        "You've had such a good run lately.",
        "I need an update every week now.",
    ],
    "neg": [
        "Let me know if you need anything at all.",
        "That's such bad luck.",
        "I hope you're taking it easy.",
        "I'm here if you want to vent.",
        "Sending you a big hug.",
        "That sounds so stressful.",
        "Please rest, ok?",
        "What a week you're having.",
        "I'm so sorry you're dealing with that.",
        "That's the last thing you needed.",
        "Do you want me to bring you anything?",
        "Ugh, the timing too.",
    ],
    "neu": [
        "Didn't see that coming.",
        "Huh, I wouldn't have guessed.",
        "How do you feel about it?",
        "Interesting choice, haha.",
        "Fair enough, honestly.",
        "Keep me posted.",
        "Makes total sense.",
    ],
}
CTX_TAILS = [
    "So that's that.",
    "Long story.",
    "Anyway!",
    "I'll tell you more later.",
    "Still processing, honestly.",
    "What a week.",
    "Classic me.",
    "Not what I expected.",
    "Tell you more when I see you.",
    "I'm just glad it's over.",
    "Can't complain.",
    "Honestly, whatever.",
]
PROMPT_TAILS = [
    "I've been dying to know!",
    "I kept wondering all week.",
    "You never told me!",
    "I forgot to ask last time.",
    "I need an update.",
    "Don't leave me hanging.",
]


REACT_TAILS["pos"] += [
    "I remember you mentioning it months ago!",
    "Honestly that's the best thing I've read all day.",
    "You never stop surprising me.",
    "We have to celebrate next time I see you.",
    "I had a feeling something good was coming your way.",
    "This is exactly what you needed.",
    "I'm telling everyone I know, sorry in advance.",
    "Ugh I love this so much for you.",
    "Please keep me updated, I want to know everything.",
    "You're braver than me, honestly.",
    "That must feel amazing after everything.",
    "How long have you been planning this?",
    "Did you tell your family yet?",
    "I can totally picture it.",
]
REACT_TAILS["relief"] = [
    "That must have been such a stressful week.",
    "Give everyone a hug from me.",
    "Let me know if you need anything.",
    "Hospitals are so draining.",
    "I'm so glad it went smoothly.",
]
REACT_TAILS["neg"] += [
    "You've had such a rough stretch lately.",
    "I hope things look up soon, you deserve a break.",
    "Seriously, call me if you want to talk.",
    "That's so unfair.",
    "How are you holding up?",
]
GEN_TAILS += [
    "I've been telling everyone at work about it.",
    "It's been the best part of my week, no contest.",
    "My {sib} already made fun of me for it.",
    "It's one of those things I kept putting off.",
    "I know, I know, I'm full of surprises.",
    "I'm trying to enjoy it before things get busy again.",
    "Let's just say it's been an adventure.",
    "I can't stop talking about it, sorry.",
    "I'll show you properly next time.",
    "It's been a lot of work but I'm happy.",
    "Still feels a bit unreal, to be honest.",
]
CHAT_TAILS += [
    "I swear the universe is testing me this week.",
    "Why are Mondays like this.",
    "I'm not even surprised anymore.",
    "This is what I get for trying to be productive.",
    "I told myself this would be a calm week, ha.",
    "Some days are just like that.",
    "Can't wait for this week to be over.",
    "Honestly it could have been worse.",
]
RESP_TAILS += [
    "I'm so glad I'm not the only one.",
    "You should write a book about your life.",
    "This is peak you, I love it.",
    "Ha, I'm saving this one.",
    "It's always something, right?",
    "You need a long weekend.",
    "Story of both our lives.",
]


ASK_LEADS = [
    "I feel like I've done all the talking lately.",
    "Ok I've been going on about my stuff forever.",
    "I need some good news today.",
    "I'm bored out of my mind at work right now.",
    "Enough about my chaos.",
    "Haha ok, moving on.",
    "Anyway!",
    "Sorry, I've been terrible at texting back.",
    "I was just thinking about you this morning.",
    "Random, but I just realized we haven't talked in a bit.",
    "I'm procrastinating, so entertain me.",
    "Ok wait, I have to ask.",
]


def pad(r, who, text, pool, scale=1.0, sl=None, before=False):
    """A second sentence from pool, as often as the speaker tends to write one."""
    if r.random() < who.verb * scale:
        a = r.choice(pool)
        extra = fill(a, sl if sl is not None else who.slots())
        text = sjoin(extra, text) if before else sjoin(text, extra)
    return text


def ask(r, who) -> str:
    return pad(r, who, surf(r, r.choice(GENERIC_ASK)), ASK_LEADS, 0.9, before=True)


ACKS = [
    "haha yes",
    "lol true",
    "right??",
    "100%",
    "\U0001f602\U0001f602",
    "for sure",
    "totally",
    "ha",
    "yesss",
    "mhm",
    "fair",
    "omg yes",
    "exactly",
    "haha same",
    "true true",
    "lol",
    "hahaha",
    "right",
    "seriously",
    "so true",
    "ok good",
    "\U0001f605",
]
REACT = {
    "pos": [
        "That's awesome!",
        "Haha no way",
        "omg",
        "Nice!!",
        "Wait really?",
        "Love that",
        "Yay!!",
        "Ooh",
        "Good for you!",
        "Oh wow",
        "Haha amazing",
        "No wayyy",
        "That's so cool",
        "Aw that's great",
        "Niceee",
        "Ahh I'm so happy for you",
        "Wow, big news",
        "Hell yes",
        "Congrats!!",
        "That's huge",
        "Amazing!!",
        "Stop, that's so cool",
        "Yesss",
        "I love this",
        "Omg yay",
        "So fun!",
        "Wow!",
        "Look at you!",
        "Ha, amazing",
        "Ooh exciting",
    ],
    "neg": [
        "Oh no!",
        "Ugh that sucks",
        "Oh nooo, are you ok?",
        "That's rough",
        "ugh I'm sorry",
        "Noooo",
        "Oh god",
        "That's awful",
        "Poor you",
        "Oh man",
        "Sending hugs",
        "Ugh, the worst",
    ],
    "neu": [
        "Oh interesting",
        "Huh, nice",
        "Ooh",
        "Oh cool",
        "Ha, fair",
        "Makes sense",
        "Oh fun",
        "Nice nice",
        "Hmm ok!",
        "Oh really?",
    ],
    "relief": [
        "Oh phew",
        "Oh wow, what a relief",
        "Oh no, but I'm glad it went ok",
        "Phew!!",
        "Oh that's good news at least",
    ],
}
CLOSERS = {
    "pos": [
        "Haha love it",
        "Love that so much",
        "That's amazing, honestly",
        "Haha ok fair enough",
        "Keep me posted!",
        "Ha, of course you did",
        "Classic you",
        "\U0001f602",
        "Can't wait to hear more",
        "So good, I'm so happy for you",
        "Hehe I love this",
        "Ok this is the best update",
        "Ha, I would have done the same",
        "I'm going to need photos of all of this",
    ],
    "neg": [
        "Hope it gets better soon",
        "Keep me posted ok?",
        "Ugh, hang in there",
        "Take care of yourself",
        "Let me know if you need anything",
        "Sending lots of love your way",
        "Rest up, seriously",
    ],
    "neu": [
        "Haha ok",
        "Fair enough",
        "Makes sense",
        "Gotcha, interesting",
        "Huh, ok, keep me posted",
        "That sounds about right",
    ],
    "relief": ["Glad it's behind you", "Sending love to everyone", "Take care of yourself too"],
}
ANNOUNCE = [
    "guess what, ",
    "ok so ",
    "omg so ",
    "btw ",
    "oh I forgot to tell you, ",
    "news: ",
    "so ",
    "random update: ",
    "",
    "",
    "",
    "",
    "",
    "ok important update: ",
    "not sure if I told you but ",
]
ASKED = [
    "Actually yes! ",
    "Well, ",
    "Oh! ",
    "Not much! oh wait, ",
    "Busy! ",
    "",
    "",
    "",
    "Ok so ",
    "Funny you ask, ",
    "Lots! ",
    "Big news actually, ",
]
GENERIC_ASK = [
    "Ok enough about me, what's new with you?",
    "Anyway, how's everything on your side? I feel like I haven't heard your news in ages.",
    "What about you, anything exciting going on?",
    "Your turn! what's been happening with you lately?",
    "Ok tell me something fun, my week has been so boring.",
    "So how are you really? it's been a while since we properly talked.",
    "What's new with you?",
    "How's your week going?",
    "Anything exciting happen lately?",
    "So what have you been up to?",
    "How are things on your end?",
    "Tell me something good, I need it",
    "Any news?",
    "What's going on with you these days?",
    "Ok your turn, what's new?",
    "How's life?",
    "You've been quiet, what's up?",
    "Anything fun lately?",
    "How have you been??",
    "What did I miss?",
]
NEWS_BRIDGE = [
    "Ok so I have an update",
    "Sooo guess what",
    "Ugh ok update time",
    "Ok I have news",
    "Wait I never told you how it went",
    "Remember the thing I was stressing about?",
    "Oh! I have an update on the thing",
    "Ask me how it went",
    "So, the update you've been waiting for",
    "Ok you're going to want to hear this",
    "I have news about the thing I mentioned",
    "You'll never guess how it turned out",
]
PROMPT_LEAD = ["", "", "", "Ooh ", "Wait, ", "Oh! ", "Ok but ", "Omg ", "Speaking of, "]

# fillers: each a list of lines, alternating speakers; each line a list of variants.
FILLERS = [
    [
        [
            "ugh it's been raining for like five days straight, I forgot what the sun looks like",
            "is it just me or has this week been grey forever? I haven't seen the sun since Sunday",
        ],
        [
            "Same here, my plants are depressed and so am I",
            "It's sunny here, sorry \U0001f605 come visit and steal some",
            "Honestly I kind of love it, perfect excuse to stay in with a book",
        ],
        [
            "lol I might take you up on that",
            "I'm buying one of those sad lamps, I swear",
            "the weekend forecast looks better at least",
        ],
    ],
    [
        [
            "what are you doing this weekend? please tell me something fun so I can live through you",
            "any plans for the weekend? I have absolutely nothing scheduled and I'm thrilled",
        ],
        [
            "Nothing and I'm so excited about it. sleep, snacks, maybe a walk if I'm feeling wild",
            "Might go to the farmers market on Saturday, then cleaning. the apartment is a crime scene",
            "Brunch with some friends and then probably the couch for the rest of it",
        ],
        [
            "honestly that sounds perfect",
            "ok that's the dream, I'm jealous",
            "a balanced weekend, I respect it",
        ],
    ],
    [
        [
            "I just ate an entire bag of chips for dinner and I feel like a raccoon",
            "dinner tonight was cereal standing over the sink, don't judge me",
        ],
        [
            "Honestly iconic, no judgment here",
            "I had toast and a handful of grapes, so we're even",
            "You're living the dream, nobody can stop you",
        ],
    ],
    [
        [
            "I'm so tired today, I slept like four hours because my brain wouldn't switch off",
            "why am I so sleepy all the time lately? I had two coffees and I'm still yawning",
        ],
        [
            "Same. coffee isn't even working anymore, I think I've built up an immunity",
            "Go to bed early tonight!! phone in the other room, I mean it",
            "Ugh I feel that, this week has been draining for everyone",
        ],
        ["if only, I have laundry to do", "ok ok, I'll try, no promises", "coffee number three it is"],
    ],
    [
        [
            "traffic this morning was insane, it took me an hour to do a twenty minute drive",
            "my bus was 25 minutes late again and then it was too full to get on",
        ],
        [
            "Ugh the worst, every single day it's something",
            "Have you thought about cycling? I'm only half joking",
            "That's why I never leave the house before nine",
        ],
    ],
    [
        [
            "groceries are so expensive now, I paid seven dollars for a tiny box of berries",
            "why is butter six dollars?? I stood in the aisle doing math like a crazy person",
        ],
        [
            "I know!! it's ridiculous, I've started going to the discount place across town",
            "Don't even get me started, I just stopped buying anything fancy",
            "Same, my grocery bill is basically a second rent at this point",
        ],
    ],
    [
        [
            "I just watched a video of a cat playing the piano for ten minutes straight, I'm sending it to you",
            "ok this video killed me, I've watched it five times on the bus \U0001f602",
        ],
        [
            "Hahaha I'm crying, why is this so funny",
            "I've watched it three times now, the ending gets me every time",
            "Please keep sending me these, it's the only thing getting me through today",
        ],
    ],
    [
        [
            "I'm procrastinating by reorganizing my spice rack alphabetically",
            "productivity level today: zero. I've been reading about octopuses for an hour",
        ],
        [
            "Honestly valid, that's basically self care",
            "Octopuses are fascinating though, they have like nine brains or something",
            "Same, I cleaned my entire desk instead of answering one email",
        ],
        ["right? it's research", "exactly, it counts as a task", "we're so productive it's scary"],
    ],
    [
        [
            "my phone screen cracked again, it slid off the table while I was making coffee",
            "dropped my phone in the sink this morning \U0001f643 it's in a bag of rice now",
        ],
        [
            "Noooo, again?? you need one of those ugly rubber cases",
            "Rice!! give it at least a day before you turn it on",
            "Ugh technology, it always happens at the worst moment",
        ],
        [
            "it's fine. it's fine. everything is fine",
            "fingers crossed it survives",
            "yep, ordering a case right now",
        ],
    ],
    [
        [
            "went to the gym for the first time in a month and now I can't lift my arms",
            "tried a spin class with my coworker and I genuinely thought I was going to die",
        ],
        [
            "Proud of you though, the first one back is always brutal",
            "Haha what did you expect after a month off?",
            "That's how you know it worked, right?",
        ],
        ["never again (until next week)", "my legs are jelly, send soup", "fair, very fair"],
    ],
    [
        [
            "I can't sleep, it's almost 2am and my brain is replaying a conversation from 2015",
            "insomnia club, anyone? I've been staring at the ceiling for an hour",
        ],
        [
            "Put your phone down and try the boring podcast trick, it works for me",
            "Me neither, I've been reading random wikipedia articles",
            "Go to sleep!! you have work tomorrow",
        ],
        ["ok ok, putting it down now", "you first", "wikipedia is the worst for this honestly"],
    ],
    [
        [
            "think I'm coming down with something, my throat has been scratchy since this morning",
            "everyone at work is sick and I can feel it coming for me next",
        ],
        [
            "Noo, tea with honey and an early night, seriously",
            "Stay home tomorrow if you can, don't be a hero",
            "Ugh there's something going around, my whole office had it last week",
        ],
        ["yes mom", "will do, already in pyjamas", "too late, I'm already sneezing \U0001f912"],
    ],
    [
        [
            "this song has been stuck in my head all day and I only know half the words",
            "I've listened to the same album six times today, I think I have a problem",
        ],
        [
            "Which one? send it so I can suffer too",
            "Haha I love when that happens, it's the best kind of problem",
            "Ooh is it the one you sent me last month?",
        ],
        [
            "not telling, it's embarrassing",
            "sent! good luck getting it out of your head",
            "no, even worse lol",
        ],
    ],
    [
        [
            "I need a new show, I finished everything and now I'm just scrolling menus for an hour",
            "nothing good on tv lately, I've rewatched the same sitcom three times",
        ],
        [
            "Have you tried anything with a murder in it? that's my go-to",
            "Rewatch something cozy, there's no shame in it",
            "I'm on a documentary kick, I'll send you a list",
        ],
        ["ooh good idea, send it", "cozy it is", "I've seen everything, that's the problem"],
    ],
    [
        [
            "did you watch the game last night? I screamed at the tv so loud my neighbor knocked",
            "that game last night was so stressful, I had to walk around the block during overtime",
        ],
        [
            "Yes!! that ending was unreal, I couldn't sleep after",
            "No, I fell asleep at halftime like an old man",
            "Don't talk to me about it \U0001f62d I'm still upset",
        ],
        ["you missed a good one", "lol sorry, too soon", "we'll get them next time"],
    ],
    [
        [
            "it's SO hot today, I'm lying on the floor next to the fan like a dog",
            "it's like 35 degrees here and our air conditioning decided to break, of course",
        ],
        [
            "Stay inside and drink water!! I mean it",
            "Come over, we have AC and ice cream",
            "Ugh I'd die, I don't do well in heat at all",
        ],
    ],
    [
        [
            "it snowed last night!! everything outside is white and quiet, it's gorgeous",
            "woke up to like a foot of snow and now I have to dig out my car",
        ],
        ["So pretty, send me a picture", "Ugh I hate snow, stay warm", "Snowman time, obviously"],
        [
            "the kids next door already built one with a carrot nose",
            "it's beautiful until you have to drive in it",
            "sending it now",
        ],
    ],
    [
        [
            "I just bought something stupid online, a lamp shaped like a mushroom",
            "my online shopping cart is out of control, I keep adding things at midnight",
        ],
        [
            "Hahaha show me immediately",
            "We've all been there, the midnight cart is dangerous",
            "Honestly a mushroom lamp sounds amazing",
        ],
        ["no regrets, it's beautiful", "sending a pic, prepare yourself", "I'm deleting the app, I swear"],
    ],
    [
        [
            "dentist tomorrow \U0001f62c I've been flossing all week like that's going to fool her",
            "the dentist told me to floss more, again, like every single time",
        ],
        [
            "Haha the classic move, she always knows",
            "Good luck! it'll be over before you know it",
            "Floss tonight and pretend you always do it",
        ],
    ],
    [
        [
            "the construction next door starts at 7am every day, even on Saturdays",
            "someone in my building has been drilling all day and I'm losing my mind",
        ],
        [
            "Nightmare, get some good earplugs",
            "That would drive me insane, I'd have to work from a cafe",
            "Ugh, there was the same thing on my street last year, it lasted months",
        ],
        ["I'm already losing it", "good idea, the library it is", "please don't say months"],
    ],
    [
        [
            "the power's out in our whole street, I'm sitting here with candles like it's 1850",
            "our internet has been down all day and I've realized I have no hobbies",
        ],
        [
            "Candles and board games? could be cozy",
            "Call them and complain, it works sometimes",
            "Haha time to read a real book",
        ],
        [
            "on hold for forty minutes so far",
            "it's back!! civilization has returned",
            "it's kind of nice actually",
        ],
    ],
    [
        [
            "any podcast recs? I need something for my commute that isn't the news",
            "what are you listening to lately? I'm so bored of my playlists",
        ],
        [
            "I'm obsessed with a true crime one, I'll send it to you",
            "Audiobooks! game changer for the commute",
            "Mostly just old music lately, comfort listening",
        ],
        ["ooh yes send it", "good idea, I'll try one", "honestly same, nostalgia is undefeated"],
    ],
    [
        [
            "spilled coffee all over my keyboard this morning, some of the keys are sticky now",
            "I put salt in my coffee instead of sugar and drank half of it before noticing",
        ],
        [
            "Hahaha oh no, start the day over",
            "That's a sign to go back to bed",
            "Rough morning, I hope the rest of the day is kinder",
        ],
        ["it's one of those days", "back to bed it is", "yep, it can only get better"],
    ],
    [
        [
            "got a haircut! it's shorter than I asked for but I think I like it",
            "I cut my own bangs at midnight. mistake. big mistake",
        ],
        [
            "Pics!! I bet it looks great",
            "Oh no, the midnight bangs, we've all been there",
            "Hair grows back, that's what I always tell myself",
        ],
        ["later, it needs to grow a bit first", "they'll grow back, right??", "thank you \U0001f60c"],
    ],
    [
        [
            "my mom just discovered voice messages and sent me eleven of them in a row",
            "the family group chat is on fire today, someone brought up the holiday plans",
        ],
        [
            "Hahaha moms and technology, I love it",
            "Oh no, what's the drama this time?",
            "Mine does the same, every message starts with 'hello it's mom'",
        ],
        [
            "someone's bringing potato salad again and people are upset",
            "it's chaos, I muted it",
            "don't ask, I'm pretending it was free",
        ],
    ],
    [
        [
            "this meeting could have been an email, we've been talking about the same slide for an hour",
            "in a two hour meeting about meetings, please save me",
        ],
        [
            "Hahaha always, pretend your wifi is bad",
            "Hang in there, you're almost free",
            "Put yourself on mute and make a sandwich",
        ],
        ["genius, trying it now", "trying my best", "too late, my boss is looking at me"],
    ],
    [
        [
            "got a sixty dollar parking ticket \U0001f643 I was gone for literally ten minutes",
            "forgot to move the car for street cleaning, so that's a ticket, great start to the week",
        ],
        [
            "Noooo, that's so annoying",
            "Classic, I've paid so many of those",
            "Ugh, the parking people are so fast around here",
        ],
    ],
    [
        [
            "we should get lunch soon, I feel like I haven't seen you in person in forever",
            "when are we getting dinner?? I miss you in real life",
        ],
        [
            "Yes!! how about next week? you pick the place",
            "Yes please, I miss you too, let's find a day",
            "Let's do it, I know a new place we should try",
        ],
        ["deal, I'll text you some dates", "yay!! can't wait", "perfect, I'll book something"],
    ],
    [
        [
            "look at this sunset [photo] the sky is literally pink right now",
            "[photo] the view from my window this morning, I almost cried",
        ],
        ["Wow!! that's unreal", "Gorgeous, I'm jealous of that view", "Ok that's wallpaper material"],
    ],
    [
        [
            "doing my taxes and crying, I filled out the same form twice and I still think it's wrong",
            "taxes. I hate taxes. that's the whole message",
        ],
        [
            "Ugh adulting is the worst",
            "Same boat, I've been avoiding mine for weeks",
            "Just pay someone to do it, it's worth every penny",
        ],
        ["seriously considering it", "never again, next year I'm hiring someone", "lol we're doomed"],
    ],
    [
        [
            "happy Friday!! I'm leaving work early and nobody can stop me",
            "how is it only Tuesday? this week feels like it's a year long",
        ],
        [
            "Finallyyy, enjoy it",
            "Don't remind me, I'm counting the hours",
            "I know, the week is dragging so badly",
        ],
    ],
    [
        [
            "my houseplant is dying and I don't know why, I've been so nice to it",
            "killed another succulent, how? they're supposed to be unkillable",
        ],
        [
            "Too much water probably, that's always the answer",
            "Succulents are liars, don't trust them",
            "RIP, we'll hold a small ceremony",
        ],
        ["I'll try again, I'm stubborn", "rip little guy", "lol it's a curse, I swear"],
    ],
    [
        [
            "I started a 1000-piece puzzle and it's completely taken over the dining table",
            "doing a jigsaw puzzle like a retired person and honestly I love it",
        ],
        [
            "Haha cozy, puzzles are so calming",
            "How far are you? I always give up after the edges",
            "I love this era for you",
        ],
        ["the edges are done at least", "it's chaos but I'm committed", "halfway, and it's all sky"],
    ],
    [
        [
            "made soup from scratch tonight, I feel like a real adult",
            "meal prepped for the whole week, who even am I",
        ],
        ["Proud of you, that's very grown-up", "Send some over please", "Adulting! I'm impressed"],
    ],
    [
        [
            "I can't believe it's already {month}, where did the year go?",
            "how is it {month} already? it was just New Year",
        ],
        [
            "Right?? time is fake",
            "I know, it's kind of scary",
            "Don't say that, I haven't done anything on my list",
        ],
    ],
    [
        [
            "the kids next door are having a huge water balloon fight in the yard and it's the best thing I've seen all day",
            "watching the neighbors' kids build a fort out of cardboard boxes, very serious engineering",
        ],
        ["Cute, I miss being a kid", "Join them, you know you want to", "Honestly goals"],
        ["tempting", "lol maybe", "they'd never let me in"],
    ],
    [
        [
            "I think I'm going to start journaling, everyone says it helps",
            "new goal: read before bed instead of scrolling",
        ],
        [
            "Ooh good luck, let me know if it works",
            "Love that, I should do the same",
            "How long do you think it will last? be honest",
        ],
        ["a week, tops", "we'll see, I'm hopeful", "rude but fair"],
    ],
    [
        [
            "did you hear about {friend}? I ran into them at the supermarket yesterday",
            "{friend} texted me out of nowhere yesterday, we haven't talked in like two years",
        ],
        ["No what?? how are they doing?", "Oh wow, small world", "Haha what did they want?"],
        [
            "they're moving abroad apparently",
            "all good, still the same {friend}",
            "just to catch up, it was nice",
        ],
    ],
]
TOPIC_FILLERS = {
    "pets": [
        [
            [
                "the dog next door howled for an hour this morning, I think it was mad about the garbage truck",
                "saw the cutest puppy at the park today, it tripped over its own ears",
            ],
            [
                "Awww poor thing",
                "Did you pet it? tell me you pet it",
                "Dogs are the best thing about this city",
            ],
            ["obviously I did", "I wanted to steal it honestly", "agreed, 100%"],
        ],
        [
            [
                "my neighbor's cat keeps coming in through our kitchen window and sitting on the counter",
                "a stray cat has started following me home every night, I think it's chosen me",
            ]
        ],
        [
            [
                "thinking about getting a pet but I'm scared of the responsibility, do you think I'm ready?",
                "do you think dogs or cats are less work? asking for me, obviously",
            ],
            [
                "Cats, easy. they basically raise themselves",
                "Foster one first and see how it goes!",
                "A fish, honestly, start small",
            ],
            ["hmm fostering is a good idea", "lol a fish", "maybe, I'll think about it"],
        ],
        [
            [
                "a dog at the beach stole my sandwich right out of my hand today",
                "the dog park near me is absolute chaos on weekends, I love it",
            ],
            [
                "Hahaha that's a professional thief",
                "Classic dogs",
                "Worth it just to watch them run around though",
            ],
        ],
    ],
    "travel": [
        [
            [
                "flights are SO expensive right now, I keep looking at tickets I can't afford",
                "I need a vacation so badly, even a weekend somewhere with a beach would do",
            ],
            [
                "Same, maybe a road trip instead?",
                "Ugh I know, I keep getting price alerts that make me sad",
                "Let's plan something cheap together",
            ],
            ["a road trip could be fun", "someday, someday", "yes please, let's look at dates"],
        ],
        [
            [
                "my passport expires next month and I only just noticed",
                "do you know how long passport renewals take these days?",
            ],
            [
                "Months!! do it right now",
                "Oh no, renew it asap before you need it",
                "No idea, but I'd do it today",
            ],
        ],
        [
            [
                "airport food is such a scam, I paid fourteen dollars for a sad sandwich",
                "the airport wifi was the worst, I gave up and stared at planes for two hours",
            ],
            [
                "Classic airport experience",
                "Always bring snacks, that's my rule",
                "Haha at least the planes are nice",
            ],
        ],
    ],
    "music": [
        [
            [
                "my neighbor practices the trumpet at 7am every morning, same three notes",
                "someone on my street is learning the drums and they're getting worse, not better",
            ],
            [
                "Oh no, that's a rough alarm clock",
                "Hahaha at least they're dedicated",
                "Maybe they'll get better?",
            ],
            ["they will not", "debatable", "I'm buying earplugs"],
        ],
        [
            [
                "went to an open mic night and someone played the ukulele for twenty minutes straight",
                "karaoke night with work was a disaster, someone cried during a ballad",
            ],
            [
                "Haha amazing, did you sing?",
                "Iconic, I wish I'd been there",
                "That's what karaoke is for though",
            ],
            ["never", "obviously, and it was terrible", "lol true"],
        ],
    ],
    "work": [
        [
            [
                "my boss scheduled a meeting at 4:55 on a Friday, who does that",
                "work is so busy this week, I ate lunch at my desk every day",
            ],
            ["Criminal behavior honestly", "Ugh hang in there, the weekend is close", "That's so annoying"],
            ["seriously", "trying my best", "lol thank you"],
        ],
        [
            [
                "our office coffee machine broke and morale is at an all-time low",
                "a new coworker started today and she brought cookies, so I like her already",
            ],
            ["That's a real crisis", "Cookies on day one is a power move", "Ha, priorities"],
        ],
        [
            [
                "thinking about asking for a raise, I've been doing two people's jobs since spring",
                "I keep looking at job listings during lunch, is that a sign?",
            ],
            ["Do it!! you deserve it", "It's definitely a sign", "Ooh anything interesting out there?"],
            ["maybe, I need to practice what to say", "eh, we'll see", "a couple, I'll tell you if I apply"],
        ],
    ],
    "health": [
        [
            [
                "I started stretching every morning and my back is thanking me already",
                "trying to walk ten thousand steps a day, I'm at like six thousand on a good day",
            ],
            [
                "Good habit, I should do that too",
                "Love that, every bit counts",
                "Six thousand is still great!",
            ],
        ],
        [
            [
                "my back hurts from sitting at the laptop all day, I need a better chair",
                "neck pain from looking down at my laptop all week, I'm ninety years old",
            ],
            [
                "Get a laptop stand, it changed my life",
                "Stretch!! set an alarm",
                "Ugh same, we're falling apart",
            ],
        ],
        [
            [
                "got my flu shot today and now my arm is so sore",
                "got my blood test results back, all normal, phew",
            ],
            ["Good, that's a relief", "Rest up and drink water", "Nice, one less thing to worry about"],
        ],
    ],
    "food": [
        [
            [
                "what should I make for dinner? there's nothing in the fridge except eggs and a sad lemon",
                "I'm so hungry and I have zero energy to cook",
            ],
            ["Pasta, always pasta", "Order something, you deserve it", "Eggs and toast, classic"],
            ["pasta it is", "ordering now, no regrets", "eggs again, my life"],
        ],
        [
            [
                "the bakery by my place closed \U0001f62d where am I supposed to get croissants now",
                "tried the new coffee place near the station, it was fine, nothing special",
            ],
            ["Noo, that's so sad", "Fine is fine, at least it's close", "RIP to a real one"],
        ],
    ],
    "home": [
        [
            [
                "we're going to IKEA this weekend, pray for us",
                "building furniture is how relationships end, I swear",
            ],
            [
                "Good luck, bring snacks",
                "Hahaha true, count the screws first",
                "The meatballs make it worth it though",
            ],
        ],
        [
            [
                "I rearranged the whole living room at midnight and now I can't find anything",
                "deep cleaned the bathroom today and I feel like a new person",
            ],
            ["Midnight energy is powerful", "Productive!! come do mine", "Proud of you, that's a big job"],
        ],
    ],
    "family": [
        [
            [
                "my mom keeps asking when I'm visiting, I was there two weeks ago",
                "family dinner on Sunday and I'm already tired just thinking about it",
            ],
            ["Haha moms, it's never enough", "Go, it'll be nice, and there's free food", "Ugh I feel that"],
        ],
        [
            [
                "my {sib} borrowed my car and returned it with no gas, again",
                "my {sib} called me for advice and I gave such terrible advice",
            ],
            ["Siblings, never change", "Hahaha what did you tell them?", "Classic, mine does the same"],
        ],
        [
            [
                "my grandma learned to text and now she sends me weather reports every morning",
                "my dad sent me a meme, it was from 2012 and he thinks it's brand new",
            ],
            ["That's adorable", "Hahaha frame it", "Honestly the best kind of message"],
        ],
    ],
    "sport": [
        [
            [
                "went for a run this morning and it was horrible, everything hurt",
                "my running app says I'm slower than last year, rude",
            ],
            ["It still counts!", "Blame the weather", "At least you went, I stayed in bed"],
        ],
        [
            [
                "thinking of signing up for a race this autumn, talk me out of it",
                "my knees are not happy with me after the weekend",
            ],
            ["Do it!! I'll come cheer", "Ice them and rest", "Ugh knees are the worst"],
        ],
    ],
    "study": [
        [
            [
                "my brain is fried from studying, I read the same page four times",
                "I have an assignment due tomorrow and I haven't started it",
            ],
            [
                "Take a break and go for a walk",
                "You'll be fine, you always pull it off",
                "Coffee and panic, the classic method",
            ],
        ],
        [
            [
                "thinking of going back to school for something, no idea what though",
                "online classes are so hard to focus on, I keep opening other tabs",
            ],
            ["Do it, you'd love it", "So true, it's impossible", "What would you study?"],
            ["no idea, something creative", "exactly", "maybe design?"],
        ],
    ],
    "tv": [
        [
            [
                "watched a terrible movie last night, it was so bad it was almost good",
                "fell asleep during the movie again, I have no idea how it ended",
            ],
            ["Which one? I need to avoid it", "Classic, I do that every time", "Those are the best kind"],
            ["the one with the shark in the lake", "I'll never know", "right?"],
        ],
    ],
    "books": [
        [
            [
                "all my library holds came in at the same time, I have six books due in two weeks",
                "I bought three books this month and haven't finished a single one",
            ],
            ["Classic reader problem", "Same, my nightstand is a tower", "Haha book hoarder, I love it"],
        ],
    ],
    "art": [
        [
            [
                "I want to do something creative but I don't know what",
                "found my old sketchbook from high school, it's so cringe",
            ],
            [
                "Try painting, or pottery!",
                "Aww show me, I bet it's great",
                "Get a coloring book, no pressure",
            ],
        ],
    ],
    "car": [
        [
            [
                "my car is making a weird noise when I turn left, that's normal right?",
                "the check engine light is on again and I'm choosing to ignore it",
            ],
            ["Uh oh, get it checked!!", "Ignoring it is a bold strategy", "That doesn't sound normal"],
            ["tomorrow, I promise", "yeah yeah", "it's fine, probably"],
        ],
    ],
    "outdoors": [
        [
            [
                "I want to go hiking but it keeps raining every weekend",
                "found a really nice trail near my place, super quiet",
            ],
            ["Next weekend looks better!", "Send me the name, I want to go", "Ugh rain ruins everything"],
        ],
    ],
    "community": [
        [
            [
                "there's a street fair in my neighborhood this weekend",
                "our neighborhood is doing a cleanup day on Saturday",
            ],
            ["Fun! are you going?", "Nice, community spirit", "Oh I love that"],
        ],
    ],
    "social": [
        [
            [
                "I have three parties this weekend and I'm exhausted just thinking about it",
                "I'm so bad at parties lately, I just want to be home by ten",
            ],
            ["Pick one and skip the rest", "Same honestly, getting old", "Stay home, nobody will notice"],
        ],
    ],
    "hobby": [
        [
            [
                "I need a new hobby, all I do is work and watch TV",
                "I have too many hobbies and zero time for any of them",
            ],
            ["Knitting? it's very calming", "Same problem here", "Pottery is fun, try a class"],
        ],
    ],
    "misc": [],
}
FRIENDS = ["Jess", "Marco", "Tanya", "Ollie", "Becca", "Dom", "Kat", "Jules"]

RANTS = [
    [
        "Ok I need to vent.",
        "So this morning the train stopped between two stations for forty minutes and nobody said anything.",
        "Then I finally get to work and the elevator is broken, so five floors of stairs.",
        "I get to my desk and my laptop decides now is the time for a two hour update.",
        "And my boss walks by and asks why I'm not online yet?? I was literally staring at a progress bar.",
        "Then at lunch I spilled soup on my only clean shirt.",
        "Anyway I'm home now, in pyjamas, eating cereal, and I refuse to do anything else today.",
    ],
    [
        "Family dinner update because I need to tell someone.",
        "My aunt asked me three separate times when I'm going to 'settle down'.",
        "My uncle started a political argument before the appetizers.",
        "The kids spilled juice on the new tablecloth and my grandma pretended it was fine but it was NOT fine.",
        "Then someone brought up the inheritance thing again and the whole table went quiet.",
        "Honestly the food was amazing though, I took home three containers of leftovers.",
        "So overall a success?? I think??",
    ],
    [
        "Sorry for the essay but I have to tell someone about the apartment viewings today.",
        "The first one had a 'cozy' bedroom which meant the bed touches three walls.",
        "The second one was perfect until we noticed the smell, and the agent just kept talking like there was no smell.",
        "The third one was great but there were like fifteen other people there with their applications ready.",
        "I'm so tired of this, the prices are insane and everything goes in a day.",
        "Anyway we're seeing two more on Saturday, wish us luck.",
    ],
    [
        "Ok so remember how I said I'd do a 'quick' cleanup of the garage?",
        "Seven hours. Seven.",
        "I found a box of my old school reports, a bike I forgot I owned, and what I think was once a sandwich.",
        "Also three extension cords, none of which work.",
        "The donation pile is now bigger than my car.",
        "I'm exhausted but weirdly proud of myself.",
        "The garage echoes now. It's beautiful.",
    ],
    [
        "I have to tell you about the most chaotic birthday party I've been to.",
        "There was a bouncy castle, which was fine until the adults got in.",
        "Someone's kid ate a whole bowl of frosting and then ran laps around the garden screaming.",
        "The magician showed up an hour late and his rabbit escaped under the deck.",
        "We spent 40 minutes trying to get the rabbit out with carrots while the kids cheered.",
        "The rabbit won. It's probably still there.",
        "Honestly the best party of the year.",
    ],
    [
        "Long story but the customer service call I just had deserves a documentary.",
        "I was on hold for 52 minutes listening to the same 20 seconds of piano.",
        "Then I got transferred three times and each person asked me to spell my name again.",
        "The last guy said the problem was 'on my end' and when I asked what that meant he hung up.",
        "So I called back and got a super nice lady who fixed it in two minutes.",
        "I almost cried. I told her she's my hero. She laughed at me.",
    ],
    [
        "My weekend in one message because I don't have the energy for more.",
        "Saturday I helped a friend move, which somehow involved a piano and a third-floor walk-up.",
        "We ate pizza sitting on boxes and it was honestly the best pizza of my life.",
        "Sunday I meant to be productive but I slept until noon and then watched six episodes of something.",
        "Did groceries at 8pm, forgot the one thing I went for.",
        "So, a normal weekend I guess.",
    ],
    [
        "Ok the neighborhood group chat is out of control again.",
        "Someone posted a photo of a 'suspicious man' and it was the mailman.",
        "Then a whole thread about whose cat keeps getting into the recycling.",
        "Then someone's lost drone, then a debate about leaf blowers that got personal.",
        "I muted it but I keep unmuting it because it's the best entertainment I have.",
        "I'm not proud of this.",
    ],
]
SIB_CITY = [
    "my {sib} lives in {bcity} now, {sibhe} loves it there",
    "{sibname} just signed a lease in {bcity}, I'm so jealous of {sibhis} view",
    "my {sib} moved to {bcity} for work and keeps sending me photos",
]
SIB_VISIT = [
    "booked my flights to go see my {sib}!! a whole week with {sibname}",
    "going to visit my {sib} next month, can't wait",
    "finally taking time off to stay with {sibname} for a few days",
]
PET_MENTION = {
    "dog": [
        "{pet} ate a sock again, we're at the vet \U0001f643 my dog is an idiot",
        "took {pet} to the dog beach today, he's asleep for the next 3 days",
        "my dog {pet} learned to open the fridge. we're doomed",
    ],
    "cat": [
        "{pet} knocked my coffee off the desk again, cats are menaces",
        "my cat {pet} has decided she only drinks from the bathroom tap now",
        "{pet} brought me a 'gift' this morning. cats are disgusting",
    ],
}


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


FOLLOW_ACKS = [
    "Haha amazing. ",
    "Ok that's hilarious. ",
    "Love that. ",
    "Oh nice. ",
    "Ha, fair enough. ",
    "That makes sense. ",
    "Ok and ",
    "Wait, ",
    "Hahaha ok. ",
    "Good to know. ",
    "Oh wow. ",
]
NEG_TAILS = [
    "It's been a rough week, honestly.",
    "I'm trying to stay positive.",
    "The timing couldn't be worse.",
    "Anyway, it could be worse.",
    "I'm just so tired.",
    "Not the week I had planned.",
    "I'll be ok, just venting.",
    "One day at a time, I guess.",
    "Thanks for listening, seriously.",
]
O_SMALL_NEG = [
    "Thanks, it means a lot",
    "Yeah, it's been a lot",
    "Thank you, I'll keep you posted",
    "I know, ugh",
    "Thanks \U0001f64f",
]
CTX_AFTER_TAILS = [
    "Tell me more next time.",
    "Honestly that's so you.",
    "I'm so glad you told me.",
    "I was wondering about that.",
    "That's the update I needed.",
    "Ha, I knew it.",
    "Keep me posted on the rest.",
    "Makes sense.",
]
CTX_BACK = [
    "haha yeah",
    "right??",
    "I know lol",
    "yep",
    "tell me about it",
    "honestly",
    "\U0001f605",
    "haha thanks",
    "we'll see what happens next",
    "it's been a whole saga",
]
LONG_TAILS = [
    "anyway that's my news",
    "so yeah, big week",
    "anyway, how are YOU",
    "that's it, that's the update",
    "ok I'll stop now",
    "sorry, long message lol",
]
O_SMALL = [
    "Haha thanks! I'm pretty excited about it honestly",
    "Thank you!! it means a lot that you remember this stuff",
    "right?? I still can't believe it",
    "I know!! I keep telling everyone",
    "Haha thanks!",
    "Thank you!!",
    "right??",
    "I know!!",
    "\U0001f60a",
    "hehe",
    "it's been a lot",
    "haha yes",
    "I'll keep you posted",
    "\U0001f64f",
]
SETUP_REACT = {
    "pos": [
        "Good luck!!",
        "Ooh keep me posted",
        "You've got this",
        "Exciting!",
        "Tell me how it goes",
        "Fingers crossed!!",
        "Ooh ok, I want a full report afterwards",
        "You'll be fine, you always are",
        "Let me know as soon as you hear anything",
        "Sending good vibes your way",
    ],
    "neu": ["Ooh keep me posted", "Oh fun", "Tell me how it goes", "Ooh ok, I want a full report afterwards"],
    "neg": ["Ugh, good luck", "Oof", "Ugh, sorry, keep me posted", "Fingers crossed it's nothing serious"],
}
SETUP_TAILS = [
    "Fingers crossed.",
    "We'll see how it goes.",
    "I'll keep you posted.",
    "Wish me luck.",
    "I've been thinking about it all week.",
    "Trying not to stress about it.",
]
SETUP_REACT_TAILS = [
    "Let me know how it goes.",
    "I'm sure it'll work out.",
    "I want a full update after!",
    "You've totally got this.",
    "Text me as soon as you know.",
]
SETUP_BACK = [
    "Thanks!!",
    "Thank you, I'll need it",
    "haha thanks, I'll report back",
    "\U0001f64f",
    "Thanks, I'll let you know",
]
RANT_REACT = [
    "Oh my god",
    "Hahaha I'm crying",
    "That's SO much",
    "I'm sorry but this is hilarious",
    "Wow. what a day",
    "I need a nap just reading this",
    "Iconic honestly",
]
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
