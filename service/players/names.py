"""What a name may hold: nothing invisible or that turns the text's direction, and no look-alike of
a reserved name.

Two names that look the same compare equal by their Unicode TR39 *skeleton*: each character is
mapped to its prototype in Unicode's confusables table ("d\u0435leted" with a Cyrillic e, "deleted"
in fullwidth letters, "de1eted" all become "deleted"), case is folded and whitespace runs are one space.
The table comes from disarm (``skeleton_key`` with TR39's digit classes: 1 and l, 0 and O are one);
docs/security.md says why that library.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from disarm import skeleton_key

from ..errors import NameRefused
from ..store.players import DELETED_NAME

RESERVED_NAMES = (DELETED_NAME,)
"""Names no player may register, nor anything that looks like them."""

INVISIBLE_LETTERS = frozenset(
    "\u034f"  # COMBINING GRAPHEME JOINER
    "\u115f\u1160\u3164\uffa0"  # the Hangul fillers: letters that draw nothing
    "\u17b4\u17b5"  # KHMER VOWEL INHERENT AQ / AA
    "\u180b\u180c\u180d\u180f"  # Mongolian free variation selectors
    "\u2800"  # BRAILLE PATTERN BLANK
    + "".join(chr(code) for code in range(0xFE00, 0xFE10))  # variation selectors
    + "".join(chr(code) for code in range(0xE0100, 0xE01F0))  # variation selectors supplement
)
"""Characters that draw nothing yet are not format characters (Unicode's Default_Ignorable_Code_Point
outside category Cf, and the blank Braille pattern): allowed, they would make two names that look
the same different, or a name that looks empty."""


def skeleton(name: str) -> str:
    """The name's TR39 skeleton: equal for names a reader cannot tell apart."""
    return skeleton_key(name, digit_policy="tr39")


_RESERVED_SKELETONS = {skeleton(name): name for name in RESERVED_NAMES}


def hidden_characters(text: str) -> list[str]:
    """The invisible and direction-changing characters of ``text`` as ``U+XXXX name`` (in lower case), in order:
    the format characters (category Cf: zero-width spaces and joiners, bidirectional embeddings,
    overrides and isolates, the byte-order mark...) and ``INVISIBLE_LETTERS``."""
    return [
        f"U+{ord(char):04X} {unicodedata.name(char, 'a format character').lower()}"
        for char in text
        if unicodedata.category(char) == "Cf" or char in INVISIBLE_LETTERS
    ]


def check_visible(text: str, what: str) -> None:
    """Refuse ``text`` (named ``what``: "a player name") if it holds a character that draws
    nothing or turns the direction of the text around it."""
    hidden = hidden_characters(text)
    if hidden:
        more = f" (and {len(hidden) - 1} more)" if len(hidden) > 1 else ""
        raise NameRefused(
            f"{what} may not hold invisible or text-direction characters, which make a name look like "
            f"another: it holds {hidden[0]}{more}",
            "name_invisible_characters",
        )


def check_not_reserved(name: str, reserved: Iterable[str] = RESERVED_NAMES) -> None:
    """Refuse a player name that is, or looks like, a reserved one (compared by skeleton)."""
    reserved_skeletons = _RESERVED_SKELETONS if reserved is RESERVED_NAMES else {skeleton(r): r for r in reserved}
    taken = reserved_skeletons.get(skeleton(name))
    if taken is not None:
        same = name.casefold() == taken.casefold()
        how = "is" if same else "looks like"
        raise NameRefused(
            f"this name {how} {taken!r}, the name deleted accounts keep; choose another", "name_reserved"
        )
