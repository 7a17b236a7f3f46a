"""The report's view of where the runs ran: one row per environment (software, machine, code, corpus), and a flag
on every exercise whose compared runs ran in more than one."""
import pandas as pd

from analysis.report.document import Doc
from analysis.store_reading.reader import ExerciseRuns
from lm.tracking.environment import COMPARED

# Besides the environment proper, the text itself: runs of one comparison must read the same corpus.
KEYS = (*COMPARED, "corpus", "corpus.sha256")


def table(runs: dict[str, ExerciseRuns]) -> pd.DataFrame:
    """One row per finished run: exercise, variant, seed and the KEYS it was tagged with (None if it was not)."""
    rows = []
    tags = {f"tags.{k}": k for k in (*KEYS, "corpus.file")}
    for name, er in runs.items():
        # Only the tags read: a run's record holds every metric too, and converting all of them costs time for nothing.
        df = er.finished[["variant", "seed", *(c for c in tags if c in er.finished)]].rename(columns=tags)
        for r in df.to_dict("records"):
            rows.append({"exercise": name, "variant": r["variant"], "seed": r["seed"],
                         **{k: r.get(k) for k in KEYS}, "file": r.get("corpus.file")})
    return pd.DataFrame(rows, columns=["exercise", "variant", "seed", *KEYS, "file"])


def differences(env: pd.DataFrame) -> dict[str, dict[str, list[str]]]:
    """exercise → {key: its values} for every key whose known values differ between the exercise's runs."""
    out = {}
    for name, group in env.groupby("exercise", sort=False):
        diff = {k: sorted(group[k].dropna().astype(str).unique()) for k in KEYS}
        diff = {k: v for k, v in diff.items() if len(v) > 1}
        if diff:
            out[name] = diff
    return out


def section(doc: Doc, runs: dict[str, ExerciseRuns]) -> None:
    env = table(runs)
    known = env.dropna(subset=["env.torch"])
    if known.empty:
        doc.p("Environment: not recorded (these runs predate the env.* tags).")
        return
    # Your own text by its file's name beside the corpus; the hash tells two versions of one file apart.
    named = known["corpus"].where(known["file"].isna(), known["corpus"] + " (" + known["file"].astype(str) + ")")
    short = known.assign(**{"env.git_commit": known["env.git_commit"].str[:10], "corpus": named,
                            "corpus.sha256": known["corpus.sha256"].str[:12]})
    shown = [k for k in KEYS if k != "env.git_dirty"]
    rows = (short.assign(dirty=short["env.git_dirty"].eq("true"))
            .groupby(shown, dropna=False, sort=False)
            .agg(runs=("seed", "size"), exercises=("exercise", lambda s: ", ".join(dict.fromkeys(s))),
                 uncommitted=("dirty", lambda s: "yes" if s.any() else "no"))
            .reset_index())
    rows.columns = [c.removeprefix("env.") for c in rows.columns]
    doc.p(f"Environments (the env.* and corpus tags of the {len(known)} finished runs that carry them; "
          f"'uncommitted': trained with changes to tracked files not yet committed):")
    doc.table(rows)
    diff = differences(env)
    if diff:
        doc.items([f"⚠ {name}: its runs differ in " + "; ".join(f"{k.removeprefix('env.')} ({', '.join(v)})"
                                                                for k, v in d.items())
                   + ", so their comparison mixes environments" for name, d in diff.items()])
    else:
        doc.p("Within each exercise every run ran in the same environment, on the same corpus.")
