"""The report's half of `make bench`'s scale rows (lm/tools/bench_scale.py), in a process of its own: lm never
imports analysis, and analysis imports no tool. Times `make report`'s report (not logged) and `runs.table()` in this
process, the imports left out, on a store of one exercise (the scale store's, which the bench names), and prints the
seconds as JSON.

    python -m analysis.scale_timing URI EXERCISE RUNS OUT
"""
import contextlib
import io
import json
import sys
import time

from analysis import runs as runs_table
from analysis.report import frame


def main(argv: list[str]) -> int:
    uri, exercise, runs, out = argv[0], argv[1], int(argv[2]), argv[3]
    seconds, found = {}, {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        t = time.perf_counter()
        found["report"] = frame.main([f"tracking_uri={uri}", f"ablations={exercise}", f"out={out}",
                                       "log=false"])
        seconds["report"] = time.perf_counter() - t
        t = time.perf_counter()
        found["table"] = len(runs_table.table(ablations=exercise, tracking_uri=uri))
        seconds["table"] = time.perf_counter() - t
    if found != {"report": 0, "table": runs}:
        print(f"the report's scale rows at {runs} runs did not hold: {found}", file=sys.stderr)
        return 1
    print(json.dumps(seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
