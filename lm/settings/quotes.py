"""A claim's quote found in the lessons: its words verbatim, allowing only for whitespace and typographic quotes.

A quote may leave words out where it says so: its parts, joined by "…", stand in one lesson in that order. The
lessons themselves are text files (the project's `../shared/seeds/`), read by the caller.
"""
import re

ELLIPSIS = "…"
# Typographic quotes read as the plain ones: a lesson's ’ and a YAML file's ' are the same mark.
PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def normalise(text: str) -> str:
    """Text with its quotes plain and every run of whitespace one space, trimmed."""
    return re.sub(r"\s+", " ", text.translate(PLAIN)).strip()


def parts(quote: str) -> list[str]:
    """The quote's verbatim parts: split at each "…", each normalised, empty ones dropped."""
    return [p for p in (normalise(s) for s in quote.split(ELLIPSIS)) if p]


def found_in(quote: str, lesson: str) -> bool:
    """Whether every part of the quote stands in the lesson, in the quote's order and without overlapping."""
    text, start = normalise(lesson), 0
    for part in parts(quote):
        at = text.find(part, start)
        if at < 0:
            return False
        start = at + len(part)
    return bool(parts(quote))


def locate(quote: str, lessons: dict[str, str]) -> str | None:
    """The name of the first lesson the quote stands in, or None: `lessons` maps a name to a lesson's text."""
    return next((name for name, text in lessons.items() if found_in(quote, text)), None)
