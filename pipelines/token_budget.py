"""The one rule that counts tokens, wherever Loom bounds what it puts in an agent's context (the
tapestry, suggestions; the plugins' hooks count with the same rule): a token is about four
characters, ``ceil(len(text) / 4)``, the rule of thumb Anthropic's and OpenAI's documentation give
for English. No tokenizer: the count must be the same in Python and in a hook's JavaScript, and a
budget is a bound on context, not a bill."""

import math

CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class Budget:
    """What is left of a number of tokens, taken by one text at a time."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, text: str) -> bool:
        """Take ``text`` if it fits what is left (and say whether it did)."""
        cost = tokens(text)
        if cost > self.left:
            return False
        self.left -= cost
        return True
