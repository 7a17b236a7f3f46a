"""The plain loop `make bench` holds the harness against: the run's recipe, its validations included."""
import subprocess
import sys

import pytest

from lm.settings import config
from lm.tools import plain_loop


def test_the_plain_loop_validates_before_training_every_eval_every_steps_and_after_its_last_step():
    cfg = config.load(["eval.every=10", "eval.val_batches=2", "eval.val_batch_size=8"])
    done = plain_loop.train(cfg, 25, 1)
    assert done.validations == 4   # before step 1, after steps 10 and 20, and after the last, 25
    assert done.validation_s > 0 and 2.0 < done.val_loss < 5.0
    # the steps' milliseconds leave the validations out, which the seconds hold with the model's building
    assert 25 * done.ms_per_step / 1000 + done.validations * done.validation_s <= done.seconds


def test_a_last_step_on_the_schedule_is_validated_once():
    cfg = config.load(["eval.every=10", "eval.val_batches=1", "eval.val_batch_size=4"])
    assert plain_loop.train(cfg, 20, 1).validations == 3


@pytest.mark.parametrize("argv,message", [(["5", "model.n_head=0"], "error: model.n_head=0 must be positive"),
                                          (["x"], "error: STEPS must be a whole number, not 'x'")])
def test_a_bad_step_count_or_override_is_one_line_before_any_training(argv, message):
    p = subprocess.run([sys.executable, "-m", "lm.tools.plain_loop", *argv], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.strip().startswith(message) and len(p.stderr.strip().splitlines()) == 1
    assert p.stdout == ""
