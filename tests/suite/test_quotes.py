"""Every claim's `lesson:` is the lessons' own words: a verbatim passage of one lesson (parts joined by "…"),
allowing only for whitespace and typographic quotes. The lessons are read from the shared folder beside the corpora
(tests/conftest.py SEEDS); without it the check is skipped, saying where it looked."""
import pytest

from analysis.report import docs_pages
from lm.settings import exercises, quotes
from tests.conftest import SEEDS


@pytest.fixture(scope="module")
def lessons() -> dict[str, str]:
    found = {p.name.split("_")[0]: p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("0*.txt"))}
    if not found:
        pytest.skip(f"the lessons are not in {SEEDS} (the shared folder's seeds/, beside the corpora): "
                    f"nothing to check the quotes against")
    return found


def every_quote():
    """Every claim's `lesson:`, and the words of every sentence docs/lesson-claims.md lists as not checkable here."""
    return [*(pytest.param(c.lesson, id=f"{name}: {c.text[:50]}")
              for name, ex in exercises.load_all().items() for c in ex.claims if c.lesson is not None),
            *(pytest.param(words, id=f"not checkable, {lesson}: {words[:40]}")
              for lesson, words, _ in docs_pages.NOT_CHECKABLE)]


@pytest.mark.parametrize("lesson, words", [(lesson, words) for lesson, words, _ in docs_pages.NOT_CHECKABLE])
def test_a_sentence_not_checkable_here_is_quoted_from_the_lesson_it_names(lesson, words, lessons):
    assert quotes.locate(words, lessons) == lesson


@pytest.mark.parametrize("quote", every_quote())
def test_every_claims_lesson_field_is_a_verbatim_quote_of_one_lesson(quote, lessons):
    assert quotes.locate(quote, lessons), f"not in any lesson, word for word: {quote!r}"


def test_a_quote_allows_whitespace_typographic_quotes_and_left_out_words_only():
    lesson = "Where does the final “e” look most? (Answer: the “l”, 43%.)\nThen type   your own name."
    assert quotes.found_in('Where does the final "e" look most?', lesson)
    assert quotes.found_in("43%.) Then type your own name", lesson)           # a line break is a space
    assert quotes.found_in("Where does … the “l”, 43%", lesson)               # words left out, in order
    assert not quotes.found_in("the “l”, 43% … Where does", lesson)           # out of order
    assert not quotes.found_in("the 'l', 43%", lesson)                        # a paraphrase: the comma moved
    assert not quotes.found_in("where does the final", lesson)                # case is the lesson's
    assert not quotes.found_in("…", lesson)                                   # nothing quoted
    assert quotes.locate("type your own name", {"000": "other text", "001": lesson}) == "001"
