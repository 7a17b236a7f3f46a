"""The sample scores the temperature and no-mask claims rest on, against the real training text."""
import pytest

from lm.model.data import load_corpus
from lm.model.sample import Words, real_word_share, training_words, word_validity
from lm.settings import config


@pytest.fixture(scope="module")
def words():
    train = load_corpus(config.load([]).data).train_text
    return {how: training_words(train, how) for how in Words}


def test_word_validity_splits_on_spaces_as_lesson_000_says(words):
    """Lesson 000: "what fraction of the generated words (split on spaces) appear somewhere in the training text?":
    a line break does not cut a word, so 'lord,\nAnd' is one word, found only if the text has it so."""
    spaced = words[Words.SPACES]
    assert {"lord,", "the"} <= spaced and "" not in spaced
    assert word_validity("the lord, qzxv", spaced) == pytest.approx(2 / 3)
    assert word_validity("the (lord qzxv", spaced) == pytest.approx(1 / 3)      # '(lord' is not a training word
    assert word_validity("the  lord, ", spaced) == 1.0                          # runs of spaces make no empty word
    assert "qzxv\nthe" not in spaced and word_validity("the qzxv\nthe", spaced) == pytest.approx(1 / 2)
    assert word_validity("the qzxv\nthe", words[Words.WHITESPACE], Words.WHITESPACE) == pytest.approx(2 / 3)
    assert word_validity("the (lord qzxv", words[Words.STRIPPED], Words.STRIPPED) == pytest.approx(2 / 3)
    assert word_validity("   ", spaced) == 0.0


def test_real_word_share_stays_low_for_garbage_that_word_validity_rates_high(words):
    plain = words[Words.WHITESPACE]
    garbage = "O\n\n\n\n\n\n\n\nO\n\n\n\n\n\n\n\n\n\n\n\n"   # what an unmasked model wrote: newlines, a stray 'O'
    assert word_validity(garbage, plain, Words.WHITESPACE) == 1.0
    assert real_word_share(garbage, plain) == pytest.approx(2 / len(garbage))
    text = "the king is dead"
    assert real_word_share(text, plain) == pytest.approx(13 / 16)          # letters of real words over all characters
    assert real_word_share("LLLLLLLLLLLL", plain) == 0.0 and real_word_share("", plain) == 0.0
