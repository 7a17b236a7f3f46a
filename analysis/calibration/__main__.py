"""`make calibrate`: the claims table's error rate, measured through the table the report builds.

    python -m analysis.calibration [tables=10000] [power=1000] [seed=0] [workers=1] [record=true]

Every claim of the exercise files on its boundary, `tables` simulated stores through analysis.verdicts.table at the
first look and through `make decide`'s looks (simulate.py): the share of tables with any false firm verdict, by the
test it rests on, the A/A control's, a lesson's single numbers at their true value, and the power at a few true
effects (`power` tables each). Prints what docs/claims.md and the README quote; with record=true keeps them in
analysis/calibration/measured.json, which the report's A/A line quotes. About 0.06 s a table on one core.
"""
import gc
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date

from analysis.calibration import MEASURED, boundary, spreads
from analysis.calibration.boundary import Stress
from analysis.calibration.simulate import Tally, rate, run
from analysis.verdicts import claim_kinds, decision
from analysis.verdicts.claim_kinds import Placement
from lm.settings.exercises import load_all

EFFECTS = (1.0, 2.0, 4.0)   # true effects for the power, in standard deviations of each comparison's margin
MIXED = 0.5                 # the false discovery rate's case: half the claims true (4 sd), half on their boundary


def _part(job: tuple) -> Tally:
    studies, seed, effect, at_value, stress, mixed = job
    gc.freeze()   # what the imports made: the collector need not scan it again on every collection
    return run(load_all(), studies, seed, effect, at_value, stress=stress, mixed=mixed)[0]


def simulate(studies: int, seed: int, workers: int, effect: float = 0.0, at_value: bool = False,
             stress: Stress = Stress.NONE, mixed: float = 0.0) -> Tally:
    """`studies` studies in `workers` processes, each its share with its own seed."""
    shares = [studies // workers + (i < studies % workers) for i in range(workers)]
    jobs = [(n, seed * 1000 + i, effect, at_value, stress, mixed) for i, n in enumerate(shares) if n]
    if workers == 1:
        return _part(jobs[0])
    total = Tally()
    with ProcessPoolExecutor(workers) as pool:
        for part in pool.map(_part, jobs):
            total.add(part)
    return total


def main(argv: list[str] | None = None) -> int:
    from lm.settings import options
    from lm.settings.errors import ConfigError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = options.parse(options.CalibrateOptions, argv)
        if opts.tables < 1 or opts.workers < 1 or opts.power < 0:
            raise ConfigError("tables and workers are at least 1, power at least 0")
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    exercises = load_all()
    ws, problems = boundary.worlds(exercises)
    started = time.time()
    null = simulate(opts.tables, opts.seed, opts.workers)
    n = null.studies
    counted = [w for w in ws if w.counted]
    print(f"make calibrate: {n:,} simulated stores of the {len(ws)} claims of the exercise files, each claim on its "
          f"boundary ({len(counted)} in the table's family), through analysis.verdicts.table; level "
          f"{decision.ALPHA:.0%}")
    print(f"  first look ({decision.LOOKS[0]} seeds): false discovery rate {null.fdp_first / n:.2%} (the false share "
          f"of a table's firm verdicts, averaged); a false firm verdict in {rate(null.any_first, n)} of tables")
    print(f"  through make decide's looks ({', '.join(map(str, decision.LOOKS))} seeds): false discovery rate "
          f"{null.fdp_looks / n:.2%}; a false firm verdict in {rate(null.any_looks, n)} of tables; claims judged at "
          f"each look: " + ", ".join(f"{k} seeds {v / n:.1f}" for k, v in sorted(null.looks.items())))
    for when in ("first", "looks"):
        paths = getattr(null, f"paths_{when}")
        print(f"  by the tests a false firm claim rests on ({'first look' if when == 'first' else 'with the looks'}): "
              + (", ".join(f"{p} {rate(k, n)}" for p, k in paths.most_common()) or "none"))
    worst = sorted(((null.claims_looks[w.exercise, w.index], w) for w in counted), key=lambda x: -x[0])[:5]
    print("  the claims most often falsely firm with the looks: " + "; ".join(
        f"{w.exercise} {w.index} {rate(k, n)}" for k, w in worst if k))
    print(f"  the A/A control's own family: a firm comparison in {rate(null.control_first, n)} of stores at the first "
          f"look, {rate(null.control_looks, n)} with the looks")
    figures = {"tables": n, "date": date.today().isoformat(), "fdr_first": null.fdp_first / n,
               "fdr_looks": null.fdp_looks / n, "first": null.any_first / n,
               "looks": null.any_looks / n, "control_first": null.control_first / n,
               "control_looks": null.control_looks / n}
    if opts.power:
        for stress in (Stress.UNEQUAL, Stress.HEAVY):
            got = simulate(opts.power, opts.seed + 10 + list(Stress).index(stress), opts.workers, stress=stress)
            print(f"  {stress} ({got.studies:,} tables): false discovery rate {got.fdp_first / got.studies:.2%} at "
                  f"the first look, {got.fdp_looks / got.studies:.2%} with the looks; a false firm verdict in "
                  f"{rate(got.any_first, got.studies)} of tables at the first look")
            figures[str(stress).replace(" ", "_")] = [got.fdp_first / got.studies, got.fdp_looks / got.studies]
        got = simulate(opts.power, opts.seed + 20, opts.workers, mixed=MIXED)
        print(f"  half the claims true (4 sd), half on their boundary ({got.studies:,} tables): false discovery rate "
              f"{got.fdp_first / got.studies:.2%} at the first look, {got.fdp_looks / got.studies:.2%} with the looks")
        figures["fdr_mixed"] = [got.fdp_first / got.studies, got.fdp_looks / got.studies]
        values = [w for w in ws if w.single]
        at = simulate(opts.power, opts.seed + 1, opts.workers, at_value=True)
        k = at.studies * len(values)

        def share(counts) -> str:
            return rate(sum(counts[w.exercise, w.index] for w in values), k)

        worst_value = max((at.not_reproduced_looks[w.exercise, w.index] for w in values), default=0)
        print(f"  a lesson's single number at its true value ({len(values)} value claims, {at.studies:,} tables): "
              f"'not reproduced' in {share(at.not_reproduced_first)} of claims at the first look, "
              f"{share(at.not_reproduced_looks)} with the looks (the most for one claim "
              f"{rate(worst_value, at.studies)}); 'reproduced' in {share(at.reproduced_looks)}")
        figures["value_not_reproduced_worst"] = worst_value / at.studies
        worst_reproduced = max((null.reproduced_looks[w.exercise, w.index] for w in values), default=0)
        print(f"  a lesson's single number delta from ours ({len(values)} value claims, {n:,} tables): 'reproduced' "
              f"in {rate(sum(null.reproduced_first[w.exercise, w.index] for w in values), n * len(values))} of "
              f"claims at the first look, {rate(sum(null.reproduced_looks[w.exercise, w.index] for w in values), n * len(values))} "
              f"with the looks (the most for one claim {rate(worst_reproduced, n)})")
        figures["value_reproduced_worst"] = worst_reproduced / n
        for effect in EFFECTS:
            got = simulate(opts.power, opts.seed + 2 + int(effect), opts.workers, effect=effect)
            k = len(counted) * got.studies
            print(f"  power, every comparison {effect:g} sd of its margin on its true side ({got.studies:,} tables): "
                  f"reproduced {rate(sum(got.reproduced_first.values()), k)} of claims at the first look, "
                  f"{rate(sum(got.reproduced_looks.values()), k)} with the looks")
            figures[f"power_{effect:g}"] = [sum(got.reproduced_first.values()) / k,
                                           sum(got.reproduced_looks.values()) / k]
    print(f"claims that cannot be set on their boundary: {'; '.join(problems) or 'none'}")
    print("deterministic checks, no error to control: " + "; ".join(
        f"{w.exercise} {w.index}" for w in ws if claim_kinds.of(w.original).placement == Placement.CONSTANTS))
    assumed = sorted({f"{n.exercise}.{n.key}" for w in ws for n in w.numbers.values()
                      if n.spread.source.startswith("assumed")})
    print(f"numbers whose spread no store here measured ({spreads.TABLE.name}: assumed): {', '.join(assumed)}")
    print(f"{time.time() - started:.0f} s")
    if opts.record:
        MEASURED.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        print(f"kept in {MEASURED}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
