"""The runs of the exercises, read back through MLflow's client only, so a remote tracking server works too.

One search_runs per experiment gives every run's final metrics, params and tags; metric histories and
(small) artifacts are fetched only where a figure or a claim needs them, and kept for the session.
"""
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

from analysis.options import no_store
from lm.settings import measures
from lm.settings.errors import TrackingError
from lm.settings.exercises import Exercise, NotApplicable, NotMeasured, NotRun
from lm.tracking.store import every_experiment, every_run, pointed_at
from lm.tracking.naming import QUICK_PREFIX
from lm.tracking.store_check import check_server, redact, sqlite_file

os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
# Each window's value of a final metric, as the runs log it: the final validation's loss on every window of the
# held-out text, in order (lm/run/train.py's WINDOW_LOSSES). The engine pairs two runs window by window with it
# (analysis/verdicts/claims.py); a run without the file has none, and the table says so.
WINDOW_VALUES = {"val_loss": "val_window_losses.npy"}
# Each window's loss at each position (windows × positions), for the loss at one position: `val_loss_at_position[k]`
# reads column k, the windows too short to reach it (the held-out text's last) left out.
POSITION_VALUES = {"val_loss_at_position": "val_position_losses.npy"}
# The curves whose every step is pooled for the seeds' variance, in every variant that logs them, whether or not a
# claim reads that variant's curve: the losses scored at each validation.
CURVES = ("val_loss", "train_eval_loss")


def at_time(times, values, t: float) -> tuple[float, bool]:
    """values linearly interpolated at time t, and whether the series reached t (else its last value)."""
    times, values = np.asarray(times, float), np.asarray(values, float)
    order = np.argsort(times)
    times, values = times[order], values[order]
    if t > times[-1] * (1 + 1e-9):  # the budget variant's own mean time may differ in the last digit
        return float(values[-1]), False
    return float(np.interp(t, times, values)), True


class StoreError(RuntimeError):
    """A store that cannot be read, or holds nothing to report; the message is one line."""


class Reader:
    def __init__(self, uri: str):
        self.uri = uri
        if no_store(uri):
            raise StoreError(no_store(uri))
        try:  # a server: MLflow itself would retry for minutes
            check_server(uri)
        except TrackingError as e:
            raise StoreError(str(e)) from None
        self.client = MlflowClient(uri)
        self._tmp = tempfile.TemporaryDirectory(prefix="tinygpt-report-")
        self._histories: dict = {}
        self._artifacts: dict = {}
        self._artifact_uris: dict[str, str] = {}  # run id → its artifact location, from search_runs
        try:
            self.experiments = {e.name: e for e in every_experiment(self.client)}
        except Exception as e:  # a server that does not answer, a database that is not MLflow's
            raise StoreError(f"cannot read the MLflow store at {redact(uri)}: "
                             f"{redact(str(e).splitlines()[0][:200])}") from None

    def runs(self, experiment: str) -> pd.DataFrame:
        exp = self.experiments.get(experiment)
        if exp is None:
            return pd.DataFrame()
        # search_runs reads the process-wide URI: this store's for the call, and then what was there before.
        with pointed_at(self.uri):
            df = mlflow.search_runs(experiment_ids=[exp.experiment_id])
        if len(df):
            self._artifact_uris.update(zip(df["run_id"], df["artifact_uri"]))
        return df

    def history(self, run_id: str, key: str) -> pd.DataFrame:
        """(step, value) of one metric, one row per step (the last value logged at it)."""
        if (run_id, key) not in self._histories:
            points = self.client.get_metric_history(run_id, key)
            df = pd.DataFrame([(m.step, m.timestamp, m.value) for m in points], columns=["step", "t", "value"])
            self._histories[run_id, key] = (df.sort_values(["step", "t"]).drop_duplicates("step", keep="last")
                                            .drop(columns="t").reset_index(drop=True))
        return self._histories[run_id, key]

    def artifact(self, run_id: str, path: str) -> Path | None:
        """A run's artifact as a local file, or None if the run has no such file."""
        if (run_id, path) not in self._artifacts:
            dst = Path(self._tmp.name) / run_id
            dst.mkdir(exist_ok=True)
            # From the run's artifact location where search_runs gave it: by run id, MLflow looks the run up
            # again first, which makes each file several times slower to fetch.
            where = self._artifact_uris.get(run_id)
            try:
                if where:
                    local = mlflow.artifacts.download_artifacts(artifact_uri=f"{where.rstrip('/')}/{path}",
                                                                dst_path=str(dst), tracking_uri=self.uri)
                else:
                    local = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path, dst_path=str(dst),
                                                                tracking_uri=self.uri)
                self._artifacts[run_id, path] = Path(local)
            except Exception:  # MLflow raises several kinds for a file that is not there
                self._artifacts[run_id, path] = None
        return self._artifacts[run_id, path]

    def prefetch(self, histories=(), artifacts=()) -> None:
        """Fetches (run_id, key) histories and (run_id, path) artifacts side by side: against a remote server
        each is a round trip."""
        with ThreadPoolExecutor(8) as pool:
            jobs = [pool.submit(self.history, *h) for h in histories]
            jobs += [pool.submit(self.artifact, *a) for a in artifacts]
            for job in jobs:
                job.result()

    def exercise_files(self, quick: bool = False, skip=()) -> dict[str, str]:
        """{experiment: the text of exercise.yaml} for every experiment whose parent run (tag role=exercise)
        carries that artifact, among the quick suite's experiments (quick) or the full suite's; the experiments in
        `skip` are not looked at."""
        ids = [e.experiment_id for name, e in self.experiments.items() if name not in skip
               and name.startswith(QUICK_PREFIX) == quick]
        if not ids:
            return {}
        parents = every_run(self.client, ids, "tags.role = 'exercise'", order_by=["attributes.start_time DESC"])
        names = {e.experiment_id: name for name, e in self.experiments.items()}
        found = {}
        for run in parents:
            name = names[run.info.experiment_id]
            path = name not in found and self.artifact(run.info.run_id, "exercise.yaml")
            if path:
                found[name] = path.read_text(encoding="utf-8")
        return found

    def json(self, run_id: str, path: str):
        p = self.artifact(run_id, path)
        return json.loads(p.read_text(encoding="utf-8")) if p else None


class ExerciseRuns:
    """One exercise's child runs: the newest FINISHED run per (variant, seed), and every other run. Its `exercise`,
    `lookup` and `per_seed` are what the verdict engine reads (analysis.verdicts.ExerciseResults)."""

    def __init__(self, exercise: Exercise, experiment: str, reader: Reader):
        self.exercise, self.experiment, self.reader = exercise, experiment, reader
        df = reader.runs(experiment)
        if len(df) and "tags.variant" in df:
            df = df[df["tags.variant"].notna()].copy()
        else:
            df = pd.DataFrame(columns=["run_id", "status", "start_time", "tags.variant", "tags.seed"])
        df["variant"] = df["tags.variant"]
        seeds = df["tags.seed"] if "tags.seed" in df else pd.Series(np.nan, index=df.index)
        df["seed"] = pd.to_numeric(seeds, errors="coerce").astype("Int64")
        df = df.sort_values("start_time", ascending=False)
        done = df[df["status"] == "FINISHED"].drop_duplicates(["variant", "seed"])
        order = {v: k for k, v in enumerate(exercise.variants)}
        self.finished = done.assign(_o=done["variant"].map(order).fillna(len(order))) \
            .sort_values(["_o", "seed"]).drop(columns="_o").reset_index(drop=True)
        rest = df[df["status"] != "FINISHED"].copy()
        pairs = set(zip(self.finished["variant"], self.finished["seed"]))
        rest["superseded"] = [(v, s) in pairs for v, s in zip(rest["variant"], rest["seed"])]
        self.others = rest.reset_index(drop=True)
        self._by_variant = dict(tuple(self.finished.groupby("variant", sort=False)))
        self._histories: dict[tuple[str, str], pd.DataFrame] = {}  # the claims and the figures read the same ones
        self._budget = None

    @property
    def variants(self) -> list[str]:
        """The variants with a finished run, in the exercise's order."""
        return list(dict.fromkeys(self.finished["variant"]))

    def rows(self, variant: str) -> pd.DataFrame:
        rows = self._by_variant.get(variant)
        # Not .get(variant, default): the empty default's slicing cost 1.5 ms a call, 1,281 calls a report.
        return rows if rows is not None else self.finished.iloc[:0]

    def values(self, variant: str, key: str) -> list[float]:
        """A metric's final value, one per seed that logged it."""
        col = f"metrics.{key}"
        if col not in self.finished:
            return []
        return self.rows(variant)[col].dropna().astype(float).tolist()

    def param(self, variant: str, key: str):
        col = f"params.{key}"
        rows = self.rows(variant)
        return rows[col].dropna().iloc[0] if col in rows and rows[col].notna().any() else None

    def first(self, variant: str) -> pd.Series | None:
        """The run of the lowest seed: the one whose pictures and samples are shown."""
        rows = self.rows(variant)
        return rows.iloc[0] if len(rows) else None

    def history(self, variant: str, key: str) -> pd.DataFrame:
        """(seed, step, value) of one metric over every seed of a variant; the same frame each time, not to change."""
        if (variant, key) not in self._histories:
            runs = self.rows(variant)[["run_id", "seed"]]
            parts = [self.reader.history(r.run_id, key).assign(seed=r.seed) for r in runs.itertuples()]
            parts = [p for p in parts if len(p)]
            self._histories[variant, key] = (pd.concat(parts, ignore_index=True) if parts
                                             else pd.DataFrame(columns=["step", "value", "seed"]))
        return self._histories[variant, key]

    def lookup(self, variant: str, key: str, step: int | None = None):
        """The claims' lookup: a mean over seeds, or a tag's most common value; NotRun when missing."""
        if variant not in self.variants:
            raise NotRun(f"{variant} was not run")
        self.applicable(variant, key)
        if key == "val_loss_at_budget":
            table = self.budget()
            if table is None or variant not in table.index:
                raise NotRun(f"{variant}.{key}: no budget")
            return float(table.loc[variant, "val_loss_at_budget"])
        if step is not None:
            h = self.history(variant, key)
            at = h.loc[h["step"] == step, "value"]
            if at.empty:
                raise NotRun(f"{variant}.{key}[{step}] was not logged")
            return float(at.mean())
        values = self.values(variant, key)
        if values:
            return float(np.mean(values))
        col = f"tags.{key}"
        if col in self.finished and self.rows(variant)[col].notna().any():
            return self.rows(variant)[col].dropna().mode().iloc[0]
        raise NotRun(f"{variant}.{key} was not logged")

    def per_seed(self, variant: str, key: str, step: int | None = None) -> dict[int, float | str] | None:
        """The claims' per-seed lookup: {seed: value} of a final metric, of the value logged at `step`, of each
        seed's loss at the time budget, or of a tag; None for what was not logged."""
        if variant not in self.variants:
            return None
        if key == "val_loss_at_budget":
            return self.budget_per_seed(variant)
        if step is not None:
            h = self.history(variant, key)
            at = h[h["step"] == step].dropna(subset=["value"])
            return {int(s): float(v) for s, v in zip(at["seed"], at["value"])} or None
        col = f"metrics.{key}"
        if col not in self.finished:
            tag = f"tags.{key}"
            if tag not in self.finished:
                return None
            rows = self.rows(variant)[["seed", tag]].dropna()
            return {int(s): str(v) for s, v in zip(rows["seed"], rows[tag])} or None
        rows = self.rows(variant)[["seed", col]].dropna()
        return {int(s): float(v) for s, v in zip(rows["seed"], rows[col])} or None

    def windows(self, variant: str, key: str, step: int | None = None) -> dict[int, np.ndarray] | None:
        """The engine's per-window lookup: {seed: each window's value} of a final metric whose runs logged them
        (WINDOW_VALUES), at the end of the run (step None, or the run's last step), or of the loss at one position
        of the window (POSITION_VALUES: `step` is the position; the windows too short to reach it left out); None
        where there are none."""
        artifact = WINDOW_VALUES.get(key) or POSITION_VALUES.get(key)
        if artifact is None or variant not in self.variants:
            return None
        rows = self.rows(variant)
        positional = key in POSITION_VALUES
        if step is not None and not positional and "params.train.steps" in rows:
            rows = rows[pd.to_numeric(rows["params.train.steps"], errors="coerce") == step]
        if positional and step is None:
            return None
        found = {}
        for r in rows[["run_id", "seed"]].itertuples():
            path = self.reader.artifact(r.run_id, artifact)
            if path is None:
                continue
            values = np.load(path)
            if positional:
                if step >= values.shape[1]:
                    continue
                column = values[:, step]
                values = column[np.isfinite(column)]
            found[int(r.seed)] = values
        return found or None

    def groups(self):
        """Every final metric per seed of every variant, every point of its CURVES and every other curve point read
        so far: what the seeds' variance of each metric is pooled from (analysis/verdicts/variance.py)."""
        columns = [c for c in self.finished.columns if c.startswith("metrics.")]
        curves = [key for key in CURVES if f"metrics.{key}" in columns]
        self.reader.prefetch(histories=[(r, key) for r in self.finished["run_id"] for key in curves])
        for variant in self.variants:
            for key in curves:
                self.history(variant, key)   # the curve: its start, untrained, is pooled apart
        for variant in self.variants:
            rows = self.rows(variant)
            for col in columns:
                got = rows[["seed", col]].dropna()
                if len(got) >= 2:
                    yield variant, col[len("metrics."):], None, dict(zip(got["seed"].astype(int), got[col].astype(float)))
        for (variant, key), h in list(self._histories.items()):
            for step, at in h.dropna(subset=["value"]).groupby("step"):
                if len(at) >= 2:
                    yield variant, key, int(step), {int(s): float(v) for s, v in zip(at["seed"], at["value"])}

    def budget_per_seed(self, variant: str) -> dict[int, float] | None:
        """Each seed's validation loss at the budget (the budget variant's mean training time), interpolated on
        that seed's own curve of loss against time; its last value where it never reached the budget."""
        table = self.budget()
        if table is None or variant not in table.index:
            return None
        budget = float(table["budget_s"].iloc[0])
        loss = self.history(variant, "val_loss").rename(columns={"value": "val_loss"})
        time = self.history(variant, "train_time_s").rename(columns={"value": "time"})
        start = loss[loss["step"] == 0][["seed", "step"]].assign(time=0.0)
        both = loss.merge(pd.concat([start, time], ignore_index=True), on=["seed", "step"]).sort_values("step")
        return {int(seed): at_time(g["time"], g["val_loss"], budget)[0]
                for seed, g in both.groupby("seed")} or None

    def applicable(self, variant: str, key: str) -> None:
        """Raises NotApplicable when the variant's runs read another corpus than the exercise's claims are about,
        or could not measure `key` on theirs (the run's not_applicable tag says why), and NotMeasured when they
        were told not to measure it (the not_measured tag names the switch). Runs without the tags, from before
        they were logged, read the lessons' corpus and measured everything."""
        rows = self.rows(variant)
        ran_on = set(rows["tags.corpus"].dropna()) if "tags.corpus" in rows else set()
        if self.exercise.corpus and ran_on - {self.exercise.corpus}:
            files = set(rows["tags.corpus.file"].dropna()) if "tags.corpus.file" in rows else set()
            read = ", ".join(sorted(ran_on)) + (f" ({', '.join(sorted(files))})" if files else "")
            raise NotApplicable(f"not applicable to this corpus: {variant} read {read}; "
                                f"the lessons' figures are for {self.exercise.corpus}")
        for tag in rows["tags.not_applicable"].dropna() if "tags.not_applicable" in rows else ():
            why = json.loads(tag).get(key)
            if why:
                raise NotApplicable(f"not applicable to this corpus: {why}")
        for tag in rows[f"tags.{measures.TAG}"].dropna() if f"tags.{measures.TAG}" in rows else ():
            switch = measures.why_not_measured(tag, key)
            if switch:
                raise NotMeasured(f"not measured: {variant}'s runs were made with {switch}")

    def budget(self) -> pd.DataFrame | None:
        """Each variant's validation loss at the budget variant's training time (the mean of its seeds' total
        train_time_s), interpolated linearly on the variant's mean-over-seeds curve of loss against time."""
        if self._budget is not None or not self.exercise.budget:
            return self._budget
        times = self.values(self.exercise.budget, "train_time_s")
        if not times:
            return None
        budget = float(np.mean(times))
        rows = {}
        for v in self.variants:
            curve = self.time_curve(v)
            if curve.empty:
                continue
            loss, reached = at_time(curve["time"], curve["val_loss"], budget)
            step, _ = at_time(curve["time"], curve["step"], budget)
            rows[v] = {"budget_s": budget, "val_loss_at_budget": loss, "step_at_budget": step, "reached": reached,
                       "last_time": curve["time"].iloc[-1], "last_step": int(curve["step"].iloc[-1])}
        self._budget = pd.DataFrame.from_dict(rows, orient="index")
        return self._budget

    def time_curve(self, variant: str) -> pd.DataFrame:
        """Mean over seeds, per validation step, of val_loss and training seconds so far (0 at step 0)."""
        loss = self.history(variant, "val_loss").rename(columns={"value": "val_loss"})
        time = self.history(variant, "train_time_s").rename(columns={"value": "time"})
        if loss.empty or time.empty:
            return pd.DataFrame(columns=["step", "time", "val_loss"])
        start = loss[loss["step"] == 0][["seed", "step"]].assign(time=0.0)
        both = loss.merge(pd.concat([start, time], ignore_index=True), on=["seed", "step"])
        return both.groupby("step", as_index=False)[["time", "val_loss"]].mean().sort_values("step")
