"""The report's half of `make bench`'s scale rows (lm/tools/bench_scale.py), in a process of its own: lm never
imports analysis. Times `make report`'s report (not logged) and `runs.table()` in this process, the imports left
out, on a store of the scale exercise, and prints the seconds as JSON.

    python -m analysis.scale_timing URI RUNS OUT
"""
import contextlib
import io
import json
import sys
import time

from analysis import report
from analysis import runs as runs_table
from lm.tools import scale_store


def main(argv: list[str]) -> int:
    uri, runs, out = argv[0], int(argv[1]), argv[2]
    seconds, found = {}, {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        t = time.perf_counter()
        found["report"] = report.main([f"tracking_uri={uri}", f"ablations={scale_store.NAME}", f"out={out}",
                                       "log=false"])
        seconds["report"] = time.perf_counter() - t
        t = time.perf_counter()
        found["table"] = len(runs_table.table(ablations=scale_store.NAME, tracking_uri=uri))
        seconds["table"] = time.perf_counter() - t
    if found != {"report": 0, "table": runs}:
        print(f"the report's scale rows at {runs} runs did not hold: {found}", file=sys.stderr)
        return 1
    print(json.dumps(seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
