"""The sample scores the temperature and no-mask claims rest on, against the real training text."""
import pytest

from lm.model.data import load_corpus
from lm.model.sample import real_word_share, training_words, word_validity
from lm.spec import config


@pytest.fixture(scope="module")
def words():
    train = load_corpus(config.load([]).data).train_text
    return training_words(train), training_words(train, strip=True)


def test_word_validity_splits_on_whitespace_and_optionally_strips_punctuation(words):
    plain, stripped = words
    assert {"lord,", "the", "ROMEO:"} <= plain and "lord" in stripped and "" not in stripped
    assert word_validity("the lord, qzxv", plain) == pytest.approx(2 / 3)
    assert word_validity("the (lord qzxv", plain) == pytest.approx(1 / 3)      # '(lord' is not a training word
    assert word_validity("the (lord qzxv", stripped, strip=True) == pytest.approx(2 / 3)
    assert word_validity("   \n", plain) == 0.0


def test_real_word_share_stays_low_for_garbage_that_word_validity_rates_high(words):
    plain, _ = words
    garbage = "O\n\n\n\n\n\n\n\nO\n\n\n\n\n\n\n\n\n\n\n\n"   # what an unmasked model wrote: newlines, a stray 'O'
    assert word_validity(garbage, plain) == 1.0
    assert real_word_share(garbage, plain) == pytest.approx(2 / len(garbage))
    text = "the king is dead"
    assert real_word_share(text, plain) == pytest.approx(13 / 16)          # letters of real words over all characters
    assert real_word_share("LLLLLLLLLLLL", plain) == 0.0 and real_word_share("", plain) == 0.0
