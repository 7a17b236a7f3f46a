"""`make bench`'s whole-process rows at toy size: the start-up rows time real commands, a whole `make train` process
is set against a plain loop's, with where its seconds go read from a real profile, and the report row times the
report on the store a user has."""
import re

from lm.tools import bench_process


class Rows:
    def __init__(self):
        self.rows, self.values, self.sections = {}, {}, []

    def add(self, what, value, note=""):
        number = re.match(r"[\d.]+", value)
        self.rows[what] = (float(number[0]) if number else value, note)
        self.values[what] = [float(x) for x in re.findall(r"[\d.]+", value)]

    def section(self, title):
        self.sections.append(title)


def test_start_up_rows_time_each_command_once_with_its_target(tmp_path):
    table = Rows()
    bench_process.startup(table, str(tmp_path), 1, [c for c in bench_process.STARTUP if "--cfg" in c[0]
                                                    or "model.n_head=0" in c[0]])
    assert set(table.rows) == {"python -m lm.commands.train model.n_head=0 (a bad value)", "python -m lm.commands.train --cfg"}
    assert all(s > 0 for s, _ in table.rows.values())
    assert table.rows["python -m lm.commands.train --cfg"][1] == "target ≤ 2.0 s"


def test_a_whole_train_process_is_set_against_a_plain_loop_with_its_breakdown(tmp_path):
    table = Rows()
    # one pair: its ratio's median and spread are spread()'s own test below; each more pair costs four processes
    bench_process.whole_run(table, str(tmp_path), steps=20, pairs=1, extra=["eval.every=10"])
    harness = table.rows["make train, default options (python -m lm.commands.train)"]
    plain = table.rows["plain loop (python -m lm.tools.plain_loop)"]
    assert plain[0] > 0 and re.fullmatch(r"in fit [\d.]+ ms/step", plain[1]) and re.fullmatch(r"in fit [\d.]+ ms/step", harness[1])
    in_fit, note = table.rows["ratio of in-fit steps, pair by pair"]
    low, high = (float(x) for x in re.search(r"pairs ([\d.]+)–([\d.]+)", note).groups())
    assert "target ≤ 1.05" in note and low <= in_fit <= high
    ratio, note = table.rows["ratio of whole processes, pair by pair"]
    low, high = (float(x) for x in re.search(r"pairs ([\d.]+)–([\d.]+)", note).groups())
    assert low <= ratio <= high
    extra, split = table.rows["  the harness's extra seconds, of which"]
    in_steps, outside = (float(x) for x in re.findall(r"-?[\d.]+(?= s)", split))
    assert abs(in_steps + outside - extra) < 0.15   # the two parts add up to the whole, to the rounding
    plain_exit, train_exit = table.values["  of which the exit, after the last line: plain; make train"]
    assert 0 < plain_exit < table.rows["plain loop (python -m lm.tools.plain_loop)"][0] and 0 < train_exit < harness[0]
    end = "end-of-run measurements (the final validation too), of which:"
    for what in ("imports (every import, at start-up and later)", "store opened, its database created",
                 "training (Lightning's fit), of which:", "  checkpoint writes", end, "  head statistics",
                 "  samples", "  artifact uploads", "  every head, attention and MLP knocked out (12 targets × 2 ablations)",
                 "  the MLflow model (torch.export, its warm-up included)"):
        assert table.rows[what][0] > 0, what
    assert table.rows[end][0] > table.rows["  head statistics"][0]
    collector = table.rows["the garbage collector (gc.callbacks: cProfile does not see it)"]
    assert collector[0] > 0 and re.fullmatch(r"\d+ full collections, [\d.]+ s of it", collector[1])
    lightning, both, everything = (table.rows[f"  {what} imports, beyond the plain loop's"]
                                   for what, _ in bench_process.IMPORTS[1:])
    # each a timed process of its own, one of each here, so their order is noise's (4.9 against 4.9 s in a CI run)
    assert 0 < lightning[0] and 0 < both[0] and 0 < everything[0]
    assert lightning[1].endswith("% of the plain loop")
    share, note = table.rows["  of the harness's extra seconds, its imports'"]
    allowed, imports = (float(x) for x in re.findall(r"([\d.]+) s", note))
    assert abs(allowed - 0.15 * plain[0]) < 0.06 and abs(imports - everything[0]) < 0.06
    assert note.endswith(": they alone forbid the target") == (imports > allowed)


def test_a_ratio_s_pairs_are_printed_at_its_own_precision_so_the_median_lies_within_them():
    ratios = [2.4626, 2.4634]   # the median, 2.463, once printed beside pairs 2.46–2.46
    low, high = (float(x) for x in re.search(r"pairs ([\d.]+)–([\d.]+)", bench_process.spread(ratios)).groups())
    assert low <= float(f"{sum(ratios) / 2:.3f}") <= high
    assert bench_process.spread([3.0, 1.0, 2.5, 1.5, 2.0]) == "pairs 1.000–3.000, middle half 1.500–2.500"
