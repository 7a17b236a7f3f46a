"""The metric names a check, an answer or a report entry may read: what every run logs (CORE: lm/run/train.py, its
callbacks and lm/measures/probes.py's checks at step 0), what the claims table works out from them (DERIVED) and
what the end-of-run measurements log (the `provides` patterns of lm/settings/measures.py's table). A name none of them
gives is a typo, refused before anything trains with the closest known name. A new metric a run logs is a name in
CORE, or a pattern of its measurement."""
import difflib
import fnmatch

from lm.settings.measures import TABLE

CORE = (
    # the loss: its curve, its end, and the untrained model's at step 0
    "val_loss", "val_loss_se", "val_perplexity", "honest_val_loss", "train_loss", "loss_at_init",
    # the run's size and cost
    "n_params", "predicted_params", "predicted_score_array_size", "flops_per_step", "train_time_s", "ms_per_step",
    "tokens_per_s",
    # the corpus's own baselines
    "uniform_loss", "bigram_loss",
    # the untrained model's attention, and the code checked as the lessons check theirs
    "init_qk_std", "init_score_std", "init_max_weight", "init_entropy", "init_score_gap8_share", "init_onehot_share",
    "attention_gradcheck", "worked_weight_1", "worked_weight_2", "worked_weight_3", "worked_blend_1", "worked_blend_2",
)
# Read from the runs, not logged: each variant's loss at the budget variant's training time (an exercise's `budget:`),
# which analysis/store_reading/reader.py works out from the curves.
DERIVED = ("val_loss_at_budget",)
ARTIFACT = (".json", ".csv", ".txt", ".npy")


def patterns() -> list[str]:
    """Every name and fnmatch pattern of a metric or tag a run logs (artifacts, the model and datasets left out)."""
    provided = [p for m in TABLE for p in m.provides
                if not p.endswith(ARTIFACT) and p != "model" and not p.startswith("dataset:")]
    return [*CORE, *DERIVED, *provided]


def known(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns())


def closest(name: str) -> str | None:
    """The known name nearest to a typo (difflib's), a pattern's stem standing for its names; None when none is."""
    names = [p.rstrip("*_") if "*" in p else p for p in patterns()]
    found = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return found[0] if found else None
