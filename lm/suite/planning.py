"""A suite's plan: every run it asks for, composed and checked before any is touched, in a job each."""
import time
from dataclasses import dataclass

from lm.settings import config, exercises, needs
from lm.settings.config import ConfigError
from lm.settings.errors import DataError
from lm.settings.exercises import Exercise
from lm.suite import launchers, measuring
from lm.suite.jobs import Job
from lm.suite.settings import QUICK_OVERRIDES, SuiteSpec
from lm.tracking.naming import experiment_name


@dataclass
class Plan:
    """A suite's runs before any is touched: its exercises (those asked for, after the ones whose models they read)
    and a job per run, each run's config composed and checked."""
    spec: SuiteSpec
    exercises: list[Exercise]
    jobs: list[Job]
    seconds: float              # what planning took: the launcher's check and every run's config

    def experiment(self, exercise: str) -> str:
        """The experiment holding an exercise's runs: quick/<exercise> for the quick suite."""
        return experiment_name(exercise, self.spec.quick)

    @property
    def runs(self) -> list[str]:
        """Each run as experiment/variant/seed (quick/nopos/pos/seed1), in the plan's order."""
        return [f"{j.experiment}/{j.spec.name}" for j in self.jobs]


def plan(s: SuiteSpec) -> Plan:
    """Every run the suite asks for, composed and checked, after its launcher: a mistake is a ConfigError of one line
    before any run is touched. An exercise that reads another's models brings it in."""
    started = time.time()
    launchers.find(s.launcher.name).check(s.launcher)
    chosen = list(s.exercises) if s.exercises else exercises.select(s.ablations)
    known = exercises.load_all()
    for ex in list(chosen):
        if ex.init_from and known[ex.init_from] not in chosen:
            chosen.insert(0, known[ex.init_from])
    # An override of the seed for every run (seed=3 on the command line) wins over each run's own.
    seeds_given = any(o.lstrip("+~").split("=")[0] == "seed" for o in s.overrides)
    every = list({**known, **{ex.name: ex for ex in chosen}}.values())   # whose claims may name the chosen's variants
    fewer = undecided(chosen, every, s.finding_seeds)
    jobs = []
    for ex in chosen:
        experiment = experiment_name(ex.name, s.quick)
        for spec in ex.runs(s.per_variant, fewer.get(ex.name)):
            extra = [*(QUICK_OVERRIDES if s.quick else []), *s.overrides,
                     f"tracking.experiment={config.quoted(experiment)}"]
            if s.tracking_uri:
                extra.append(f"tracking.uri={s.tracking_uri}")
            if ex.init_from:  # the same training as the source, so the same checkpoint fits
                extra.append(f"init_from={ex.init_from}")
            try:  # composed once per variant: its seeds are copies (config.load_run)
                cfg = config.load_run([*spec.shared, *extra], None if seeds_given else spec.seed, spec.name)
            except (ConfigError, DataError) as e:  # DataError: a file of your own that cannot be a corpus
                raise ConfigError(f"{ex.name}/{spec.name}: {e}") from None
            jobs.append(Job(spec, cfg, experiment, cfg.config_hash))
    jobs = select_variants(jobs, s.variants) if s.variants else jobs
    # What each run measures: what any exercise reads of it, another's claims on its variants included.
    measuring.choose(jobs, every, s.overrides)
    return Plan(s, chosen, jobs, time.time() - started)


def undecided(chosen: list[Exercise], every: list[Exercise], seeds: int | None) -> dict[str, dict[str, int]]:
    """Per exercise, its variants that no claim with a verdict reads (every exercise's claims, lm/settings/needs.py
    decided), each at `seeds`: a finding's interval, a question's answer, an exact check and a chart buy no verdict
    with more seeds. An exercise without claims (a sweep's grid) keeps every seed asked for; None: none fewer."""
    if seeds is None:
        return {}
    judged = needs.decided(every)
    return {ex.name: {v: seeds for v in ex.variants if (ex.name, v) not in judged} for ex in chosen if ex.claims}


def select_variants(jobs: list[Job], variants: list[str]) -> list[Job]:
    """The jobs of the named exercise/variant pairs, and the runs of an exercise they read (init_from) at their
    seeds; a name that is not among the jobs is a ConfigError."""
    named = {f"{j.spec.exercise}/{j.spec.variant}" for j in jobs}
    unknown = sorted(set(variants) - named)
    if unknown:
        raise ConfigError(f"variants={unknown}: no such exercise/variant among the exercises chosen "
                          f"(for example {min(named)})")
    keep = [j for j in jobs if f"{j.spec.exercise}/{j.spec.variant}" in variants]
    sources = {(j.spec.init_from, j.spec.seed) for j in keep if j.spec.init_from}
    return [j for j in jobs if j in keep or (j.spec.exercise, j.spec.seed) in sources]
