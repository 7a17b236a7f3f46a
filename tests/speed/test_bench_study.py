"""`make bench`'s study rows at quick size: a real `make ablations` process against the same runs by the plain loop,
its ratio and each run's cost outside its steps read back from the store, each beside its goal."""
import re

from lm.tools import bench_study
from tests.speed.test_bench_process import Rows


def test_a_small_study_is_set_against_its_plain_loops_with_its_cost_outside_the_steps(tmp_path):
    table = Rows()
    bench_study.study(table, str(tmp_path), quick=True)
    suite, _ = table.rows["the suite, a whole process"]
    plain, note = table.rows["the plain loop: its runs' seconds ÷ the workers"]
    assert 0 < plain < suite and note.startswith("on 2 workers, longest first: ")
    ratio, goal = table.rows["the suite against the plain loop ÷ the workers"]
    # one block: its own ratio, to the precision the two times are printed at (0.1 s each, on a plain loop of ~3 s)
    assert goal == "target ≤ 1.15" and abs(ratio - suite / plain) <= ratio * (0.05 / plain + 0.05 / suite) + 5e-4
    once, share = table.rows["  of which once a suite (start-up before its first run, the means after its last)"]
    assert 0 < once < suite and share.split("%")[0].isdigit()
    median, note = table.rows["a trained run's cost outside its steps, median"]
    low, high = (float(x) for x in re.search(r"([\d.]+) to ([\d.]+) s over", note).groups())
    # the range at 0.1 s, the median at 0.01 s: within the range to the range's rounding
    assert note.startswith("the recipe's validations included; mean ") and 0 < low and low - 0.05 <= median <= high + 0.05
    # nopos' 2 and scaling's 4 variants at 1 seed; at the quick size scaling's base is nopos' pos, copied
    assert re.search(r"over 5 runs$", note)
    beyond, note = table.rows["  beyond the plain loop's own (its model built, the recipe's validations), median"]
    assert note.startswith("target ≤ 3 s; mean ") and re.search(r"over 5 runs$", note)
    # each run less its plain loop's validations, which take time: below the whole, run by run and so in the median
    assert beyond < median
    assert "(6 runs, 5 trained, 20 steps, 2 workers × 1 thread)" in table.sections[0]
    predicted, goal = table.rows["these exercises, predicted"]
    assert goal == "goal ≤ 60 min on 2 cores for the whole study" and 0 < predicted
    against, note = table.rows["  against the same runs by the plain loop ÷ the workers, predicted"]
    plain_minutes = float(re.match(r"their plain loop ([\d.]+) min; target ≤ 1.15", note).group(1))
    # the suite's prediction is the plain loop's with each run's cost beyond it and the suite's start-up added
    assert against > 1 and plain_minutes < predicted and abs(against - predicted / plain_minutes) < 0.05 * against
    shares = {what.strip(): table.rows[what] for what in table.rows if what.strip() in bench_study.EXERCISES}
    assert set(shares) == {"nopos", "scaling"} and all(0 < m <= predicted for m, _ in shares.values())
    assert "`make ablations ablations=[nopos,scaling]` at 3 seeds, predicted: 18 runs, 18 trained, 5 shapes" \
        in table.sections[1]


def test_the_plain_loops_pool_ends_with_the_bench_however_the_bench_ends():
    """A SIGTERM'd bench (a scheduler's limit, a `kill`) had left its spawned plain-loop workers alive, waiting for
    work; each now ends when the bench's process has gone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    program = ("import multiprocessing as mp, time\n"
               "from concurrent.futures import ProcessPoolExecutor\n"
               "from lm.tools import bench_study\n"
               "if __name__ == '__main__':\n"
               "    pool = ProcessPoolExecutor(2, mp_context=mp.get_context('spawn'), initializer=bench_study._one_thread)\n"
               "    print(*[f.result() for f in [pool.submit(bench_study._warm) for _ in range(2)]], flush=True)\n"
               "    time.sleep(120)\n")
    bench = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    workers = [int(pid) for pid in bench.stdout.readline().split()]
    assert len(set(workers)) == 2
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(10) == -signal.SIGTERM
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in workers if _running(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive


def _running(pid: int) -> bool:
    """Whether the process is alive (a zombie, dead but not yet reaped by init, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_study_s_plain_loop_trains_every_trained_run_and_leaves_out_what_trains_nothing(tmp_path):
    """The rows of only=whole, on two exercises at quick size: the temperature exercise's runs read the base model's
    and train nothing, so neither side trains them and no cost row counts them. (only=whole at quick size is this on
    every exercise: 99 s in CI; these two took 15 s, against 60 s for all of them, on an idle machine.)"""
    from lm.suite import load_suite_config, plan

    words = ["quick=true", "ablations=[baseline,temperature]", "seeds=1"]
    jobs = plan(load_suite_config(words)).jobs
    trained = {j.config_hash for j in jobs if not j.spec.init_from}
    assert any(j.spec.init_from for j in jobs) and len(trained) < len(jobs)
    table = Rows()
    bench_study._section(table, str(tmp_path), "whole", words, blocks=1)
    assert table.sections[0].startswith(f"a study: `make ablations {' '.join(words)}` ({len(jobs)} runs, "
                                        f"{len(trained)} trained, 20 steps, 2 workers × 1 thread)")
    suite, _ = table.rows["the suite, a whole process"]
    plain, _ = table.rows["the plain loop: its runs' seconds ÷ the workers"]
    assert 0 < plain < suite
    _, note = table.rows["  beyond the plain loop's own (its model built, the recipe's validations), median"]
    assert note.endswith(f"over {len(trained)} runs")
