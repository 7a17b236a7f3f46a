"""What every command's process shares: the garbage collector off around its heavy imports, its one-line errors,
--cfg's YAML, and its exit: lm's commands' and analysis's (make report, make decide). Below every layer of lm, it
imports nothing of the project's."""
import gc
import sys
from typing import Callable, NoReturn

from omegaconf import OmegaConf


def before_imports(front: Callable[[list[str]], int | None]) -> None:
    """Runs a command's front on the command line; exits with its status if it settled the command (an error,
    --cfg, a sweep), returns if the work can start, with the garbage collector off until after_imports."""
    code = front(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    # The imports that follow make half a million objects and almost no garbage, yet their allocations set off full
    # collections that walk all of them: 8 in a run's imports, 1.0 s (gc.callbacks, 2026-12-01).
    gc.disable()

def after_imports() -> None:
    """The collector back on after a command's heavy imports, with what they made frozen (gc.freeze): later full
    collections walk only what the work allocates (a 600-step run made one more, of 0.6 s, walking the imports)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()

def finish(code: int) -> NoReturn:
    """Exits with code, past the interpreter's last garbage collection, which walks every object the imports made
    (0.5 s at the end of a report, 2026-12-01) to free memory the process is about to hand back anyway. Exit handlers
    and finalizers still run."""
    gc.freeze()
    sys.exit(code)

def fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code

def to_yaml(d: dict) -> str:
    return OmegaConf.to_yaml(d).rstrip("\n")
