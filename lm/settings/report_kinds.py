"""The options of every kind a `report:` entry can name, as the exercise file's schema reads them: the report's own
kinds (analysis/report/kinds.py, a dataclass each) and its section modules (analysis/report/sections/, a render()
each). The spec never imports the report (lm never imports analysis), so the table lives here;
tests/config/test_exercise_schema.py holds it to the report's own, name for name and type for type.
"""

KINDS: dict[str, dict[str, object]] = {
    "curves": {"metrics": list[str] | None, "metric": str | None, "baselines": list[str],
               "labels": dict[str, str], "title": str | None},
    "final": {"metrics": list[str] | None, "metric": str | None},
    "heads": {"statistics": list[str]},
    "attention": {"variants": list[str] | None},
    "by_position": {"metric": str},
    "samples": {"variants": list[str] | None, "heading": str, "limit": int | None, "join": bool},
    "against_time": {"metric": str, "time": str},
    "sweep": {"metrics": list[str] | None, "metric": str | None, "percent": bool, "ylabel": str | None},
    # the section modules of analysis/report/sections/, for what only one exercise needs
    "aa": {"metric": str},
    "baseline": {},
    "scaling": {},
}
# The options that name metrics, each checked against what the runs log (lm/settings/metrics.py), and those that name
# variants of the file.
METRIC_OPTIONS = ("metric", "metrics", "baselines", "time")
VARIANT_OPTIONS = ("variants",)
