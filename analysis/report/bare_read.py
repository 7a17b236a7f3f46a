"""A bare read of what `make report` reads, the floor `make bench` sets the report beside: the same options, store
and exercises (frame.open_runs: every run found by search_runs), and every history and artifact the report reads
(frame.reads) fetched, with nothing judged, drawn or written. Prints the runs it read and its seconds as JSON.

    python -m analysis.report.bare_read [quick=true] [ablations=...] [tracking_uri=...]
"""
import json
import sys
import time

from analysis.report import frame, sections


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    opened = frame.open_runs(argv)
    if isinstance(opened, int):
        return opened
    histories = artifacts = 0
    for er in opened.runs.values():
        h, a = frame.reads(er, sections.entries(er.exercise))
        er.reader.prefetch(h, a)
        histories, artifacts = histories + len(h), artifacts + len(a)
    print(json.dumps({"runs": sum(len(er.finished) for er in opened.runs.values()), "histories": histories,
                      "artifacts": artifacts, "seconds": round(time.perf_counter() - started, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
