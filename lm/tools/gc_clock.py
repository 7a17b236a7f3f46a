"""The seconds Python's garbage collector takes in a command, which cProfile does not see.

    python -m lm.tools.gc_clock OUT.json MODULE [ARGS ...]

Runs MODULE as `python -m MODULE ARGS` would, and as it ends writes to OUT.json the collector's seconds and
collections, per generation (gc.callbacks). `make bench` runs its profiled `make train` through it.
"""
import gc
import json
import runpy
import sys
import time


class Clock:
    """The collector's time and count, per generation (0, 1 and 2, the full collection)."""

    def __init__(self):
        self.seconds, self.collections, self._start = [0.0] * 3, [0] * 3, 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        self.seconds[info["generation"]] += time.perf_counter() - self._start
        self.collections[info["generation"]] += 1


def main(argv: list[str]) -> None:
    out, module, *args = argv
    clock = Clock()
    gc.callbacks.append(clock)
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        with open(out, "w") as f:
            json.dump({"seconds": clock.seconds, "collections": clock.collections}, f)


if __name__ == "__main__":
    main(sys.argv[1:])
