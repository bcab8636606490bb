"""Context-dependent kinds: the other person asks, the owner answers briefly."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

from base import data, linked
from people import COMPANIES, CONDITIONS, MONTHS, PRON, REL_G, SIDE_F
from stated import PLACES, RACES

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


CTX = linked(_CONTEXT["CTX"], globals() | CONDITIONS)


def ctx_replies(k, sl):
    if k["key"] == "c_vet":
        return PET_ISSUES[sl["petissue"]]
    if k["key"] == "c_doctor":
        base = DOCTOR[sl["symptom"]]
        return [base, ("Stress apparently \U0001f644 sleep more, drink water, the usual", "stress")]
    return k["replies"]
