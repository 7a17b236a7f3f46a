"""The verdict table: every claim of every exercise judged once per report, its families' p adjusted.

Everything that shows a verdict reads this table: the report's claims table and its counts, the knock-out
section, the tags on each exercise's parent run (analysis.report.parent_runs), `make report`'s summary line,
`make decide` and, for a notebook, `runs.verdicts()`. It reads numbers only, each exercise's through the lookups of
ExerciseResults (results.py): the store's runs (analysis.store_reading) or plain numbers (Numbers); each claim is
judged as its kind's entry says (claim_kinds.py). A claim may read another exercise's variant
(`baseline:base.knockout_prev_head_b1`): its lookups go to that exercise's results, which `runs` must hold whether
or not that exercise's own claims are judged (`judged`). The family is counted from the exercise files (`family`),
not from what is judged, so that a claim's adjusted p is the same whichever exercises a report shows.
"""
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from analysis.verdicts import claim_kinds, claims, decision, variance
from analysis.verdicts.results import ExerciseResults
from lm.settings.claims import Claim
from lm.settings.exercises import Exercise, NotRun, terms, tree


@dataclass
class Row:
    """One claim of one exercise and its verdict."""
    exercise: str
    index: int          # the claim's place in its exercise's list, from 1
    claim: Claim
    verdict: claims.Verdict

    @property
    def numbers(self) -> list[tuple[str, str, int | None]]:
        """The (variant, key, step) numbers its verdict rests on, as the claim's kind says (a check's, a value
        claim's number)."""
        return claim_kinds.numbers_read(self.claim)

    def reads(self, prefix: str) -> bool:
        """Whether its verdict rests on a metric whose name starts with prefix."""
        return any(key.startswith(prefix) for _, key, _ in self.numbers)

    @property
    def counted(self) -> bool:
        """Whether the counts count it: a claim with a verdict, not the A/A control (which checks the engine)."""
        return bool(self.verdict.verdict) and not self.verdict.control


def read_from(exercise: Exercise) -> set[str]:
    """The other exercises whose runs the exercise's claims read (`baseline:base.…`): a table of this exercise's
    claims needs their results too, whether or not their own claims are judged."""
    named = set()
    for c in exercise.claims:
        for expr in filter(None, (c.check, c.ours)):
            named |= {v.split(":", 1)[0] for v, _, _ in terms(tree(expr).body) if ":" in v}
    return named - {exercise.name}


def family_of(exercises: Mapping[str, Exercise]) -> decision.Family:
    """The families' comparisons per exercise, counted from the exercises' claims alone (claim_kinds.slots)."""
    slots: dict[str, dict[str, int]] = {}
    for name, ex in exercises.items():
        for c in ex.claims:
            fam, m = claim_kinds.slots(c)
            if fam and m:
                slots.setdefault(fam, {})[name] = slots.get(fam, {}).get(name, 0) + m
    return decision.Family(slots)


class Table:
    """Every claim's verdict, and the families whose comparisons' p were adjusted together."""

    def __init__(self, rows: list[Row], family: decision.Family):
        self.rows = rows
        self.counted = family
        self.family = [c for r in rows for c in r.verdict.comparisons if c.family == claim_kinds.TABLE]

    def of(self, exercise: str) -> list[Row]:
        return [r for r in self.rows if r.exercise == exercise]

    def counts(self, exercise: str | None = None) -> dict[str, int]:
        """Claims per verdict, in claims.VERDICTS' order (those with none left out): the table's, or one
        exercise's. The A/A control is not a claim: not counted."""
        rows = self.rows if exercise is None else self.of(exercise)
        count = Counter(r.verdict.verdict for r in rows if r.counted)
        return {str(k): count[k] for k in claims.VERDICTS if count[k]}


def lookups(runs: Mapping[str, ExerciseResults], name: str):
    """The mean, per-seed and per-window lookups of exercise `name`, a qualified variant ("baseline:base") sent to
    its own exercise's runs."""
    def route(variant: str):
        if ":" not in variant:
            return runs[name], variant
        exercise, own = variant.split(":", 1)
        if exercise not in runs:
            raise NotRun(f"{variant}: the exercise {exercise} is not in this report")
        return runs[exercise], own

    def lookup(variant, key, step=None):
        er, v = route(variant)
        return er.lookup(v, key, step)

    def per_seed(variant, key, step=None):
        try:
            er, v = route(variant)
        except NotRun:
            return None
        return er.per_seed(v, key, step)

    def windows(variant, key, step=None):
        try:
            er, v = route(variant)
        except NotRun:
            return None
        read = getattr(er, "windows", None)
        return read(v, key, step) if read else None

    return lookup, per_seed, windows


def first_seeds(per_seed, n: int):
    """The per-seed (or per-window) lookup cut to each variant's first n seeds (its lowest seed numbers): what one
    look sees."""
    def cut(variant, key, step=None):
        per = per_seed(variant, key, step)
        return None if per is None else {s: per[s] for s in sorted(per)[:n]}
    return cut


def pooled_priors(runs: Mapping[str, ExerciseResults]):
    """Each number's prior for the seeds' variance (variance.py), pooled over every variant of every exercise in
    `runs` that measures its metric in the same phase: a lookup (variant, key, step) -> Prior."""
    groups: dict[tuple[str, str], list] = {}
    for name, er in runs.items():
        read = getattr(er, "groups", None)
        for variant, key, step, per in read() if read else ():
            values = [float(x) for x in per.values() if not isinstance(x, str)]
            if len(values) == len(per) and len(values) >= 2:
                groups.setdefault((key, variance.phase(key, step)), []).append(((name, variant), values))
    fitted = variance.priors(groups)

    def prior(variant, key, step=None):
        return fitted.get((key, variance.phase(key, step)))
    return prior


def at_looks(claim: Claim, lookup, variants: list[str], per_seed, windows=None, priors=None) -> claims.Verdict:
    """One claim judged at every look it reached (decision.LOOKS): its verdict is the last look's, and each of its
    comparisons carries its raw p at every look (`looks`), from which its sequential p is read."""
    counts = []

    def counting(variant, key, step=None):
        per = per_seed(variant, key, step)
        if per:
            counts.append(len(per))
        return per

    whole = claim_kinds.judge(claim, lookup, variants, counting, windows, priors)
    last = decision.look(min(counts)) if counts else None
    if last is None or not whole.comparisons:
        return whole
    seen = [whole if n == max(counts) else  # every variant at this look already: judged so above
            claim_kinds.judge(claim, lookup, variants, first_seeds(per_seed, n), first_seeds(windows, n) if windows
                              else None, priors)
            for n in decision.LOOKS if n <= last]
    v = seen[-1]
    for k, c in enumerate(v.comparisons):
        c.looks = {n: earlier.comparisons[k].raw_p for n, earlier in zip(decision.LOOKS, seen)
                   if len(earlier.comparisons) == len(v.comparisons) and earlier.comparisons[k].n == n
                   and earlier.comparisons[k].raw_p is not None} or None
    v.looked = (last, max(counts))
    claims.settle(v)
    return v


def table(runs: Mapping[str, ExerciseResults], family: Mapping[str, Exercise] | None = None,
          judged: Iterable[str] | None = None, pool: Mapping[str, ExerciseResults] | None = None) -> Table:
    """Every claim of the `judged` exercises (default: all of `runs`) judged at every look it reached, each family's
    sequential p adjusted (decision.Family, counted from the `family` exercises, default those of `runs`, and the
    judged ones), every claim settled again. `runs` holds every exercise whose numbers a judged claim reads; `pool`
    (default `runs`) every exercise whose variants the seeds' variance is pooled over: the whole store's, so that a
    report of a few exercises judges them with the priors of the full one."""
    names = list(runs) if judged is None else list(judged)
    counted = family_of({**(family or {er.exercise.name: er.exercise for er in runs.values()}),
                         **{name: runs[name].exercise for name in names}})
    rows = []
    priors = pooled_priors({**runs, **(pool or {})})
    for name in names:
        er = runs[name]
        lookup, per_seed, windows = lookups(runs, name)
        for i, c in enumerate(er.exercise.claims, 1):
            v = at_looks(c, lookup, list(er.exercise.variants), per_seed, windows, priors)
            fam, _ = claim_kinds.slots(c)
            for comparison in v.comparisons if fam else ():
                comparison.family = fam
            rows.append(Row(name, i, c, v))
    t = Table(rows, counted)
    for fam in counted.slots:
        members = [c for r in rows for c in r.verdict.comparisons if c.family == fam]
        if members:
            _adjust(counted, fam, members)
    for r in rows:
        if r.verdict.verdict not in (claims.NOT_RUN, claims.NOT_APPLICABLE, claims.NOT_MEASURED, ""):
            claims.settle(r.verdict)
    return t


def _adjust(counted: decision.Family, fam: str, members: list[claims.Comparison]) -> None:
    """A family's comparisons adjusted together; each one's level: where it is firm, the raw level its last look's
    interval must clear for that verdict, else the best its next look could need."""
    p = [c.p for c in members]
    q = counted.adjust(fam, p)
    decided = sum(x < decision.ALPHA for x in q)
    for c, x in zip(members, q):
        last = decision.look(c.n or 0)
        if last is None or c.p is None:   # not judged: a p of 1 in the exercise's adjustment, none shown
            continue
        c.p_adjusted = float(x)
        spent = decision.SPEND[decision.LOOKS.index(last)]
        if x < decision.ALPHA:
            c.level = decision.ALPHA * spent * c.p / x if x > 0 else spent * decision.ALPHA
        else:
            c.level = counted.plan_level(fam, last, decided)
        nxt = decision.next_look(last)
        c.plan = counted.plan_level(fam, nxt, decided) if nxt else None
    return None

