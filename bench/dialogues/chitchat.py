"""Chit-chat pools, and the padding of a line with one of them."""

# ruff: noqa: E501  (the templates are data: long chat lines read better unbroken)
from __future__ import annotations

from base import data

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
