"""Knowledge-update kinds: an old value in an earlier session, a new one later."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

from base import data, linked
from people import CITIES, COMPANIES, CONDITIONS, MONTHS, SIDE_F, SIDE_M
from stated import PLACES

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
UPDATES = linked(_UPDATES["UPDATES"], globals() | CONDITIONS)
