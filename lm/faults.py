"""Faults on purpose, for the reliability tests: a kill or a Ctrl-C at a named point of a run. Test scaffolding
beside the layers of lm/ (any of them may mark a point), importing none of them.

    TINYGPT_FAULT=step:15             SIGKILL the suite (or `lm.commands.train`) and this process the 15th time a step ends
    TINYGPT_FAULT=checkpoint:2:group  SIGKILL the whole process group, workers and all, at the 2nd checkpoint
    TINYGPT_FAULT=logging:3:sigint    a Ctrl-C instead: SIGINT to the process group, as a terminal sends it
    TINYGPT_FAULT=step:5:suiteint     SIGINT to the suite alone, as `kill -INT <suite's pid>` sends it: its runs
                                      in progress hear of it only from the suite
    TINYGPT_FAULT=step:5:stall        this process waits there for a signal (a scheduler's SIGTERM, a Ctrl-C), so a
                                      test can cancel a job at a known step (tests/slurm)
    TINYGPT_FAULT=step:5:oom          SIGKILL this process alone, as the kernel's out-of-memory killer would: only
                                      the first of the suite's processes to get there (a worker), the others go on
    TINYGPT_FAULT=step:5:hog          this process takes more and more memory until something kills it (a SLURM job's
                                      memory limit, tests/slurm), the first to get there alone, as `oom`; past
                                      HOG_CEILING_MB more it gives up with an error: a limit that never struck

The points: `step` (a training step has ended), `validation` (a validation batch), `logging` (just before a write
of metrics to MLflow), `checkpoint` (a checkpoint is being written: the old one is still in place). Counts are per
process. A kill without `group` hits the process that started it all (the suite) and the first of its processes to
get there; the suite's other workers then die on their own, as they must when a suite is killed. With
TINYGPT_FAULT_LOG set, each fault appends a line there first, so a test can tell its own kill from a crash.

Unset, `point` costs a comparison: the variable is read once, when this module is imported.
"""
import os
import signal
import tempfile
import time

POINTS = ("step", "validation", "logging", "checkpoint")
MODES = ("", "group", "sigint", "suiteint", "stall", "oom", "hog")
HOG_CEILING_MB = 4096   # the most `hog` takes, beyond what the process held


def _parse(spec: str) -> tuple[str | None, int, str]:
    if not spec:
        return None, 0, "kill"
    name, _, rest = spec.partition(":")
    count, _, mode = rest.partition(":")
    if name not in POINTS or not count.isdigit() or int(count) < 1 or mode not in MODES:
        raise ValueError(f"TINYGPT_FAULT={spec!r}: expected POINT:N[:group|:sigint|:suiteint|:stall|:oom|:hog] with POINT one of "
                         f"{POINTS}")
    return name, int(count), mode or "kill"


_target, _at, _mode = _parse(os.environ.get("TINYGPT_FAULT", ""))
_reached = 0
if _target:  # the first process to import this is the root; the worker processes it starts inherit the variables
    os.environ.setdefault("TINYGPT_FAULT_ROOT", str(os.getpid()))
    # The root's own mark for _first's file, its pid and the time: pids come round and the files stay in /tmp, so an
    # earlier root's file under the same pid would keep a fault from firing.
    os.environ.setdefault("TINYGPT_FAULT_MARK", f"{os.getpid()}-{time.time_ns()}")


def point(name: str) -> None:
    """A place where a fault can be injected; does nothing unless TINYGPT_FAULT names it."""
    if name == _target:
        _count()


def _count() -> None:
    global _reached
    _reached += 1
    if _reached == _at:
        fire()


def fire() -> None:
    me, root = os.getpid(), int(os.environ.get("TINYGPT_FAULT_ROOT", os.getpid()))
    # the first worker there, alone: workers that start together (forked from one server) reach a step together
    if _mode in ("kill", "oom", "suiteint", "hog") and not _first(root):
        return
    log = os.environ.get("TINYGPT_FAULT_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{_target}:{_at}:{_mode} pid={me} root={root}\n")
    if _mode == "stall":
        signal.signal(signal.SIGCONT, signal.SIG_DFL)  # submitit's handler of it would end the wait (SLURM sends
        signal.pause()                                 # SIGCONT before SIGTERM); a handled signal ends it
        return
    own_group = os.getpgid(0) == root  # the root leads its own process group: signal all of it, never beyond
    if _mode == "sigint":
        if own_group:
            os.killpg(root, signal.SIGINT)
        else:
            for pid in {root, me}:
                os.kill(pid, signal.SIGINT)
        return
    if _mode == "suiteint":
        os.kill(root, signal.SIGINT)
        return
    if _mode == "oom":
        os.kill(me, signal.SIGKILL)
    if _mode == "hog":
        _hog()
    if _mode == "group" and own_group:
        os.killpg(root, signal.SIGKILL)
    if root != me:
        os.kill(root, signal.SIGKILL)
    os.kill(me, signal.SIGKILL)


def _hog() -> None:
    """64 MB more every tenth of a second, each page written so that it counts in the process's RSS (SLURM samples
    RSS every second here); an error past HOG_CEILING_MB."""
    held = []
    while len(held) * 64 < HOG_CEILING_MB:
        held.append(bytearray(64 << 20))
        held[-1][::4096] = b"\x01" * (len(held[-1]) // 4096)
        time.sleep(0.1)
    raise RuntimeError(f"TINYGPT_FAULT={_target}:{_at}:hog: {HOG_CEILING_MB} MB taken and nothing killed this process")


def _first(root: int) -> bool:
    """Whether this is the first process of the suite started by root to take the fault (a file made once)."""
    try:
        mark = os.environ.get("TINYGPT_FAULT_MARK", root)
        os.close(os.open(os.path.join(tempfile.gettempdir(), f"tinygpt-fault-{mark}-{_target}-{_at}"),
                         os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False
