"""Statement kinds: one person states a fact."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

from base import data, linked
from people import CAT_NAMES, COMPANIES, CONDITIONS, DOG_NAMES, PRON, REL_G, SIDE_F, WD

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


KINDS = linked(_STATEMENTS["KINDS"], globals() | CONDITIONS)
KIND = {k["key"]: k for k in KINDS}
