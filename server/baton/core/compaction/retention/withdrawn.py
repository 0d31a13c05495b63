"""Standing instructions the user took back or replaced later: a sentence that withdraws the
rules just given ("Forget that.", "Scratch that, ..."), or the rules about a topic ("Ignore
what I said about the migrations.", "Disregard my instruction to never touch the
migrations."), and a later language request that replaces an earlier one ("From now on,
answer in English." after "Always answer in German."). A summary quotes the rules that
still hold, so it must not carry a withdrawn or replaced one round after round."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_LEAD = r"(?:(?:ok(?:ay)?|actually|wait|sorry|no|please|and|also|but|so|just),?\s+)*"
_VERB = r"(?:forget|ignore|disregard|scratch|cancel|drop|withdraw|never\s+mind)"
_RULE = r"(?:rule|instruction|request)s?"
_END = r"(?=\s*(?:[.,;:!]|$|\s-\s))"
_WITHDRAW = re.compile(
    rf"^\s*{_LEAD}{_VERB}\s+(?:"
    rf"(?:about\s+)?(?:that|this|it|those|these|what i (?:just )?said"
    rf"|(?:my|the|that) (?:last|previous|earlier) {_RULE}){_END}"
    rf"|(?:what i said|(?:my|the|that|this|those|these)(?: (?:last|previous|earlier))? {_RULE})"
    rf"\s+(?:about|on|regarding|for|to|that)\s+(?P<topic>[^.,;:!?]+))",
    re.IGNORECASE,
)
LANGUAGES = (
    "english|german|french|spanish|italian|portuguese|dutch|polish|russian|ukrainian|czech|"
    "swedish|norwegian|danish|finnish|turkish|greek|hebrew|arabic|hindi|chinese|japanese|"
    "korean|vietnamese|indonesian|deutsch|français|español"
)
_LANGUAGE = re.compile(
    r"\b(?:answer|respond|reply|talk|speak)\b(?:\s+(?:to me|me))?\s+(?:only\s+)?in\s+"
    rf"(?P<language>{LANGUAGES})\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9_]+")
# words that name no topic ("the rule to never touch the migrations": "touch", "migration")
_FILLER = re.compile(
    r"the|an?|to|of|about|on|in|my|your|th(?:at|is|ose|ese)|never|always|don'?t|do|not|and|or"
    r"|you|it|with|for|any(?:thing)?|from|now|ever|again"
)


@dataclass(frozen=True)
class Withdrawal:
    """What one sentence takes back: the rules just given (`topic` None), or those about
    `topic`."""

    topic: str | None

    def taken(self, rules: Iterable[str], just_given: Iterable[str]) -> list[str]:
        """Which of `rules` go: those of `just_given` (the previous prompt's and the
        sentence's own prompt's), or every one that names each word of the topic."""
        if self.topic is None:
            return list(just_given)
        words = [w.rstrip("s") for w in _WORD.findall(self.topic.casefold())]
        words = [w for w in words if len(w) > 2 and not _FILLER.fullmatch(w)]
        if not words:
            return []
        return [rule for rule in rules if all(w in rule.casefold() for w in words)]


def withdrawal(sentence: str) -> Withdrawal | None:
    """The withdrawal `sentence` makes, if it makes one."""
    match = _WITHDRAW.search(sentence)
    if match is None:
        return None
    return Withdrawal(match.group("topic"))


def language(rule: str) -> str | None:
    """The language a rule asks the replies to be in ("german"), if it asks for one."""
    match = _LANGUAGE.search(rule)
    return match.group("language").casefold() if match else None
