"""The names the store gives a suite's work: each exercise's experiment, the quick suite's apart from the full one's.
Imports nothing, so a command names an experiment before its heavy imports."""

QUICK_PREFIX = "quick/"  # before each experiment of the quick suite: its toy-size runs never mix with the full ones


def experiment_name(name: str, quick: bool) -> str:
    """The experiment holding an exercise's runs (or the report's, name="report"): quick/<name> for the quick suite,
    <name> for the full one."""
    return f"{QUICK_PREFIX}{name}" if quick else name
