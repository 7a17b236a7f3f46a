"""What every command's process shares: the garbage collector off around its heavy imports, and nothing loaded
there that only torchmetrics would use; its one-line errors, --cfg's YAML, and its exit: lm's commands' and
analysis's (make report, make decide). Below every layer of lm, it imports nothing of the project's."""
import gc
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, NoReturn

from omegaconf import OmegaConf

# What torchmetrics, which Lightning imports, loads with itself for what no command here uses: its audio metrics'
# scipy.signal and its plots' matplotlib: about a fifth of a run's imports, more of a suite worker's, whose collector
# stays on (docs/notebook.md). torchmetrics asks lightning_utilities whether each is installed; through a command's imports (hide_unused
# to show_unused) the answer is no. A later import of either is untouched (the report's figures, the verdicts'
# scipy.stats), and so is a later question.
UNUSED = ("scipy", "matplotlib")
_asked: tuple | None = None   # lightning_utilities' own two checks, while UNUSED is hidden


def before_imports(first: Callable[[list[str]], int | None]) -> None:
    """Runs what a command does first (its input checked) on the command line; exits with its status if it settled the command (an error,
    --cfg, a sweep), returns if the work can start, with the garbage collector off until after_imports."""
    code = first(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    hide_unused()
    # The imports that follow make half a million objects and almost no garbage, yet their allocations set off full
    # collections that walk all of them, about a second of a run's imports.
    gc.disable()

def after_imports() -> None:
    """The collector back on after a command's heavy imports, with what they made frozen (gc.freeze): later full
    collections walk only what the work allocates (a 600-step run made one more, of 0.6 s, walking the imports);
    and the UNUSED packages no longer hidden."""
    show_unused()
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


@contextmanager
def heavy_imports() -> Iterator[None]:
    """The collector off through a block of heavy imports outside a command's own (a suite's imports after its plan,
    its workers' fork server), and what they made frozen after it, as before_imports and after_imports do for a
    command: the collector's full walks of what the imports made cost a second or more."""
    if not gc.isenabled():   # inside a command's own block already
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()

def hide_unused() -> None:
    """The UNUSED packages missing to lightning_utilities' checks, package_available and RequirementCache, until
    show_unused: for the imports between the two."""
    global _asked
    if _asked is not None:
        return
    from lightning_utilities.core import imports

    _asked = available, check = imports.package_available, imports.RequirementCache._check_requirement

    def package_available(name: str) -> bool:   # torchmetrics keeps this one: it answers truly once shown
        return not (_asked and name in UNUSED) and available(name)

    def check_requirement(cache) -> None:
        if _asked and cache.requirement in UNUSED:
            cache.available = False
            cache.message = f"{cache.requirement} hidden through a command's imports (lm.process)"
        else:
            check(cache)

    imports.package_available, imports.RequirementCache._check_requirement = package_available, check_requirement

def show_unused() -> None:
    """lightning_utilities' checks as they were."""
    global _asked
    if _asked is None:
        return
    from lightning_utilities.core import imports

    imports.package_available, imports.RequirementCache._check_requirement = _asked
    _asked = None

def finish(code: int) -> NoReturn:
    """Exits with code, past the interpreter's last garbage collection, which walks every object the imports made
    (half a second at the end of a report) to free memory the process is about to hand back anyway. Exit handlers
    and finalizers still run."""
    gc.freeze()
    sys.exit(code)

def fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code

def to_yaml(d: dict) -> str:
    return OmegaConf.to_yaml(d).rstrip("\n")
