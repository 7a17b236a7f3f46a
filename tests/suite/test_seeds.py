"""A suite's seeds go where they buy verdicts (lm/suite/planning.py undecided): a variant that no claim with a verdict
reads (findings, questions, exact checks and charts alone) trains `finding_seeds`, the others `seeds`; an exercise
without claims, and the A/A control's own seeds, keep every seed asked for."""
import collections

import pytest

from lm.settings import exercises
from lm.settings.config import ConfigError
from lm.suite import load_suite_config, plan


def seeds_of(words: list[str]) -> dict[str, int]:
    jobs = plan(load_suite_config(words)).jobs
    return collections.Counter(f"{j.spec.exercise}/{j.spec.variant}" for j in jobs)


@pytest.fixture(scope="module")
def full():
    return seeds_of([])


def test_variants_only_findings_exact_checks_and_charts_read_train_two_seeds(full):
    fewer = {name for name, n in full.items() if n == 2}
    # scaling002: a count and a finding; heads: a finding and its charts; context's ctx16: findings only
    assert fewer == {"scaling002/base", "scaling002/double", "heads/h1", "heads/h2", "heads/h4", "heads/h8",
                     "context/ctx16"}
    assert all(n == 3 for name, n in full.items() if name not in fewer)


def test_a_variant_another_exercises_verdict_reads_keeps_its_seeds(full):
    # ctx64 feeds findings of its own exercise and context's checks; recipe002's cpu (its twin) a value claim
    assert full["context/ctx64"] == 3 and full["recipe002/cpu"] == 3


def test_finding_seeds_null_gives_every_variant_the_seeds_asked_for():
    assert set(seeds_of(["finding_seeds=null", "ablations=[heads,scaling002]"]).values()) == {3}
    assert set(seeds_of(["seeds=5", "finding_seeds=null", "ablations=[heads]"]).values()) == {5}


def test_more_seeds_asked_leave_the_undecided_variants_at_finding_seeds():
    found = seeds_of(["seeds=6", "ablations=[context]"])
    assert found == {"context/ctx16": 2, "context/ctx64": 6, "context/ctx128": 6}


def test_an_exercise_without_claims_keeps_every_seed(tmp_path, monkeypatch):
    (tmp_path / "plain.yaml").write_text("title: plain\nlesson: none\nmeasures: the loss\nvariants: {v: []}\n")
    monkeypatch.setenv(exercises.FOLDER_VARIABLE, str(tmp_path))
    assert seeds_of(["ablations=[plain]"]) == {"plain/v": 3}


def test_finding_seeds_below_one_is_refused_before_any_run():
    with pytest.raises(ConfigError, match="finding_seeds=0 must be positive"):
        load_suite_config(["finding_seeds=0"])
