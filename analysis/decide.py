"""`make decide BUDGET=…`: what the claims table leaves undecided, decided within a stated budget of runs.

    python -m analysis.decide budget=30 | budget=60min [quick=true] [ablations=heads,nomask] [workers=2] [plan=true]

Each round reads the table as `make report` computes it (analysis.verdicts.table) and takes the claims still open:
within seed noise, or indicative (fewer seeds than a verdict needs). For each it plans the seeds that would give
80% power at the level its next look needs (the engine's plan, analysis.planning.undecided: the step-up's
threshold for one more firm verdict, at the share that look spends; the same level the table's "seeds needed" note
gives). A claim whose plan lies beyond the last look, or that the validation windows' own error keeps
open, gets nothing: more seeds would not decide it. Findings and deterministic checks are no claims to decide; the A/A
control is brought to each look a round brings a claim to. The others, cheapest first
while the budget lasts, get one more look: their variants, exactly those their checks read (and the runs an
exercise reads its models from), are brought to the next look's seeds (decision.LOOKS) through the suite,
with its workers, launchers, bar and resumption. It stops when nothing open can be decided, the budget is spent or
the looks run out. The level holds whichever claims it chose and whenever it stopped: each comparison's p is
sequential over its looks (analysis.verdicts.decision), which tests/analysis/test_calibration.py simulates. The report
marks every verdict read at a later look.

The budget: a number of runs (budget=30), or of CPU-minutes (budget=60min: the sum of the runs' own minutes, each
on one thread), estimated from the finished runs of each variant before a round and counted after it.
"""
import gc
import re
import sys
from dataclasses import dataclass, field

from lm import process
from lm.settings import options
from lm.settings.errors import ConfigError

BUDGET = re.compile(r"(?P<amount>\d+(\.\d+)?)\s*(?P<unit>runs?|min|cpu-?min)?", re.IGNORECASE)


@dataclass
class Budget:
    """What `make decide` may spend: runs, or CPU-minutes."""
    amount: float
    minutes: bool           # CPU-minutes, else runs
    spent: float = 0.0

    @classmethod
    def parse(cls, text: str) -> "Budget":
        m = BUDGET.fullmatch(text.strip())
        if not m or float(m["amount"]) <= 0:
            raise ConfigError(f"budget={text!r}: give a number of runs (budget=30) or of CPU-minutes (budget=60min)")
        return cls(float(m["amount"]), (m["unit"] or "runs").lower().rstrip("s") != "run")

    @property
    def left(self) -> float:
        return self.amount - self.spent

    def show(self, x: float) -> str:
        return f"{x:.0f} CPU-min" if self.minutes else f"{x:.0f} runs"


@dataclass
class Open:
    """A claim the table leaves open, and what its next look would take."""
    exercise: str
    claim: str
    verdict: str
    seeds: int                              # the fewest seeds of a variant it reads
    target: int | None = None               # the next look's seeds; None: no look left
    planned: int | None = None              # seeds for 80% power at the next look's level; None: unknown or never
    variants: set[tuple[str, str]] = field(default_factory=set)   # the (exercise, variant) pairs it reads
    sources: set[tuple[str, str]] = field(default_factory=set)    # the runs whose models they read (init_from)
    why: str = ""                           # why it gets no round, if it does not
    cost: float = 0.0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = options.parse(options.DecideOptions, argv)
        budget = Budget.parse(opts.budget)  # none given is as bad as a wrong one
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from analysis.options import check_store

    status = check_store(opts.tracking_uri)
    if status is not None:
        return status
    return decide(opts, budget)


def decide(opts: options.DecideOptions, budget: Budget) -> int:
    from analysis.verdicts import decision

    read_ = read(opts)
    table = judged(read_)
    first = {(r.exercise, r.claim.text): r.verdict.verdict for r in table.rows}
    for round_ in range(1, len(decision.LOOKS) + 2):
        opened = plan(read_.runs, table, budget)
        chosen = [o for o in opened if not o.why]
        print(f"\nround {round_}: {len(opened)} claim{'s' * (len(opened) != 1)} open, {len(chosen)} chosen; budget "
              f"{budget.show(budget.spent)} spent of {budget.show(budget.amount)}")
        for o in opened:
            planned = f" ({o.planned} for {decision.POWER:.0%} power)" if o.planned else ""
            what = o.why or f"{o.seeds} → {o.target} seeds{planned}, {budget.show(o.cost)}"
            print(f"  {o.exercise}: {o.claim[:70]} ({o.verdict}): {what}")
        if not chosen or opts.plan:
            break
        status, read_, spent = grow(opts, read_, chosen, budget)
        budget.spent += spent
        if status != 0:
            return status
        table = judged(read_)
        if not spent:  # nothing was trained (every run failed to start, say): another round would do the same
            break
    if not opts.plan:
        summary(first, table, budget)
    return 0


@dataclass
class Runs:
    """What the table is built from, as `make report` builds it (analysis.runs.claims_runs): the runs of the chosen
    exercises and of those their claims read, every exercise the family is counted over, the chosen ones."""
    runs: dict
    family: dict
    chosen: list[str]


def read(opts) -> Runs:
    """The exercises' runs, as `make report` reads them."""
    from analysis import runs as notebook

    _, runs, family, chosen = notebook.claims_runs(opts.quick, opts.ablations.strip("[]") or "all", opts.tracking_uri)
    return Runs(runs, family, chosen)


def judged(read_: Runs):
    """The verdict table, as `make report` computes it."""
    from analysis import verdicts

    table = verdicts.table(read_.runs, read_.family, read_.chosen)
    gc.freeze()  # what the imports and the reading made, left out of every later collection
    return table


def plan(runs, table, budget: Budget) -> list[Open]:
    """Every open claim, with its next look and its cost; those that fit the budget, cheapest first, are chosen
    (why is empty)."""
    from analysis import planning
    from analysis.report.verdict_text import label
    from analysis.verdicts import decision
    from analysis.verdicts.claims import INDICATIVE, WITHIN_NOISE

    opened = []
    for row in table.rows:
        v = row.verdict
        if v.finding or v.control or v.deterministic or v.verdict not in (WITHIN_NOISE, INDICATIVE):
            continue
        read_ = variants_read(row, runs)
        seeds = min((len(runs[e].rows(variant)) for e, variant in read_), default=0)
        o = Open(row.exercise, v.text, label(v), seeds, variants=read_)
        o.target = decision.next_look(decision.look(seeds) or 0)
        opened.append(o)
        if o.target is None:
            o.why = f"at the last look ({seeds} seeds): undecided"
            continue
        o.planned, o.why = planning.undecided(v)
        if o.why:
            continue
        for exercise in {e for e, _ in read_}:  # an exercise that reads another's models needs them trained
            source = runs[exercise].exercise.init_from
            if source in runs:
                o.sources = {(source, s) for s in runs[source].exercise.variants}
        o.cost = cost(runs, dict.fromkeys([*o.sources, *o.variants], o.target), budget)
    growing: dict[tuple[str, str], int] = {}
    for o in sorted((o for o in opened if not o.why), key=lambda o: o.cost):
        more = {**growing, **{k: max(growing.get(k, 0), o.target) for k in [*o.sources, *o.variants]}}
        if cost(runs, more, budget) > budget.left:
            o.why = f"over the budget ({budget.show(o.cost)} for {o.seeds} → {o.target} seeds)"
            continue
        growing = more
    reached = max(growing.values(), default=0)
    for row in table.rows if reached else ():   # the A/A control, brought to each look the round brings a claim to
        if not row.verdict.control:
            continue
        read_ = variants_read(row, runs)
        seeds = min((len(runs[e].rows(variant)) for e, variant in read_), default=0)
        o = Open(row.exercise, row.verdict.text, label(row.verdict), seeds, variants=read_, target=reached)
        opened.append(o)
        if seeds >= reached:
            o.why = "the A/A control: already at the round's look"
            continue
        o.cost = cost(runs, dict.fromkeys(o.variants, reached), budget)
        more = {**growing, **{k: max(growing.get(k, 0), reached) for k in o.variants}}
        if cost(runs, more, budget) > budget.left:
            o.why = f"over the budget ({budget.show(o.cost)} for {o.seeds} → {o.target} seeds)"
            continue
        growing = more
    return opened


def variants_read(row, runs) -> set[tuple[str, str]]:
    """The (exercise, variant) pairs a claim's verdict rests on (its check, a value claim's number)."""
    found = set()
    for variant, _, _ in row.numbers:
        exercise, own = variant.split(":", 1) if ":" in variant else (row.exercise, variant)
        if exercise in runs:
            found.add((exercise, own))
    return found


def cost(runs, targets: dict[tuple[str, str], int], budget: Budget) -> float:
    """What bringing each (exercise, variant) to its target seeds would take: runs, or their CPU-minutes (the mean
    length of the variant's finished runs)."""
    total = 0.0
    for (exercise, variant), to in targets.items():
        more = max(0, to - len(runs[exercise].rows(variant)))
        total += more * (minutes(runs[exercise], variant) if budget.minutes else 1)
    return total


def lengths(rows):
    """Each run's length in minutes, from MLflow's start and end times."""
    if not len(rows) or "end_time" not in rows:
        return rows.iloc[:0, 0]
    return (rows["end_time"] - rows["start_time"]).dt.total_seconds().dropna() / 60


def minutes(er, variant: str) -> float:
    """A run's mean length in minutes: of the variant's finished runs, else of its exercise's, else one."""
    for rows in (er.rows(variant), er.finished):
        length = lengths(rows)
        if len(length):
            return float(length.mean())
    return 1.0


def grow(opts, read_: Runs, chosen: list[Open], budget: Budget) -> tuple[int, Runs, float]:
    """One round: the chosen claims' variants brought to their next look through the suite, one suite per target;
    its exit status, the runs read afterwards, and what it spent (runs, or CPU-minutes), counted from them."""
    from lm.settings.errors import USER_ERRORS
    from lm.suite import ExitStatus, SuiteSpec, run

    before = {name: set(er.finished["run_id"]) | set(er.others["run_id"]) for name, er in read_.runs.items()}
    targets: dict[tuple[str, str], int] = {}
    for o in chosen:  # the sources' runs the suite plans itself, at the seeds of the runs that read them
        for key in o.variants:
            targets[key] = max(targets.get(key, 0), o.target)
    status = 0
    for n in sorted(set(targets.values())):
        named = sorted(f"{e}/{v}" for (e, v), t in targets.items() if t == n)
        spec = SuiteSpec(ablations=sorted({x.split("/")[0] for x in named}), seeds=n, variants=named,
                         quick=opts.quick, workers=opts.workers, tracking_uri=opts.tracking_uri)
        print(f"\nthe suite: {', '.join(named)} to {n} seeds", flush=True)
        try:
            status = run(spec).status
        except USER_ERRORS as e:  # one line, as `make ablations` says it
            print(f"error: {e}", file=sys.stderr)
            status = ExitStatus.BAD_INPUT
        if status != 0:
            break
    after = read(opts)
    new = [er.finished[~er.finished["run_id"].isin(before.get(name, set()))] for name, er in after.runs.items()]
    spent = sum(float(lengths(rows).sum()) if budget.minutes else len(rows) for rows in new)
    return status, after, spent


def summary(first: dict, table, budget: Budget) -> None:
    """What the rounds decided: each claim that was open, its verdict before and now, and what is still open."""
    from analysis.report.verdict_text import label, seeds, summary as said
    from analysis.verdicts.decision import FIRM, Outcome

    open_ = (Outcome.WITHIN_NOISE, Outcome.INDICATIVE)
    lines, decided = [], 0
    for r in table.rows:
        before = first.get((r.exercise, r.claim.text))
        if r.verdict.finding or r.verdict.control or before not in open_:
            continue
        decided += r.verdict.verdict in FIRM
        if r.verdict.verdict != before:
            lines.append(f"  {r.exercise}: {r.claim.text[:70]}: {before} → {label(r.verdict)} (seeds: "
                         f"{seeds(r.verdict)})")
    print(f"\ndecided {decided} claim{'s' * (decided != 1)} with {budget.show(budget.spent)} of "
          f"{budget.show(budget.amount)}; the table now: {said(table)}")
    print("\n".join(lines) if lines else "  no verdict changed")
    still = [f"  {r.exercise}: {r.claim.text[:70]} ({label(r.verdict)}; seeds: {seeds(r.verdict)})" for r in table.rows
             if not (r.verdict.finding or r.verdict.control) and r.verdict.verdict in open_]
    if still:
        print("still undecided:\n" + "\n".join(still))


if __name__ == "__main__":
    process.finish(main())
