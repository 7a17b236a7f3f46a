"""The report's figures, drawn with seaborn from plain pandas tables (no MLflow here) and saved as PNG.

Every function returns a matplotlib Figure; `save` writes and closes it. Bands are ± one standard deviation
over seeds (none with one seed).
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")
# Characters a tick label would lose: a space and a newline.
VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥"}


def save(fig, path) -> None:
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def _heatmap(ax, weights, chars, title, cbar=False):
    w = np.asarray(weights, dtype=float)
    labels = [VISIBLE.get(c, c) for c in chars[: len(w)]]
    above = np.triu(np.ones_like(w, dtype=bool), k=1)
    # The causal mask makes everything above the diagonal zero; a blank triangle says so plainly.
    sns.heatmap(w, mask=above if np.allclose(w[above], 0) else None, ax=ax, cmap="Blues", vmin=0, vmax=1,
                square=True, cbar=cbar, xticklabels=labels, yticklabels=labels,
                cbar_kws={"label": "attention weight", "shrink": 0.6} if cbar else None)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("key: the character read")
    ax.set_ylabel("query: the character predicting")
    ax.tick_params(length=0, labelsize=8)
    ax.set_xticklabels(ax.get_xticklabels(), rotation=0)
    ax.set_yticklabels(ax.get_yticklabels(), rotation=0)


def attention_grid(models: list[tuple[str, dict]], title: str):
    """Every head of each model on one line, one row per (model, block): [(name, attention.json)]."""
    rows = [(name, b, block) for name, att in models for b, block in enumerate(att["weights"], start=1)]
    cols = max(len(block) for _, _, block in rows)
    fig, axes = plt.subplots(len(rows), cols, figsize=(3.6 * cols, 3.7 * len(rows)), squeeze=False)
    for r, (name, b, block) in enumerate(rows):
        chars = dict(models)[name]["chars"]
        for h in range(cols):
            ax = axes[r, h]
            if h < len(block):
                _heatmap(ax, block[h], chars, f"{name}: block {b}, head {h + 1}")
                if h:
                    ax.set_ylabel("")
                if r < len(rows) - 1:
                    ax.set_xlabel("")
            else:
                ax.axis("off")
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def two_heads(att: dict, picks: list[tuple[int, int, str]], title: str):
    """Lesson 000's figure: two heads side by side, larger. picks: [(block, head, what it does)]."""
    fig, axes = plt.subplots(1, len(picks), figsize=(6.5 * len(picks), 6.2), squeeze=False)
    for ax, (b, h, what) in zip(axes[0], picks):
        _heatmap(ax, att["weights"][b - 1][h - 1], att["chars"], f"block {b}, head {h}: {what}", cbar=True)
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def learning_curves(train: pd.DataFrame, val: pd.DataFrame, uniform: float | None, bigram: float | None,
                    title: str):
    """Training and validation loss against step; train/val are (seed, step, value)."""
    fig, ax = plt.subplots(figsize=(9, 5))
    if len(train):
        sns.lineplot(train, x="step", y="value", errorbar="sd", ax=ax, lw=0.7, alpha=0.8,
                     label="training loss (each step's batch)")
    if len(val):
        sns.lineplot(val, x="step", y="value", errorbar="sd", ax=ax, marker="o", lw=2, label="validation loss")
    if uniform is not None:
        ax.axhline(uniform, ls=":", color="gray", label=f"uniform guess, {uniform:.3f}")
    if bigram is not None:
        ax.axhline(bigram, ls="--", color="tab:red", label=f"bigram table, {bigram:.3f}")
    ax.set(title=title, xlabel="step", ylabel="loss (nats per character)")
    ax.legend()
    return fig


def temperature(df: pd.DataFrame, title: str):
    """Word validity against sampling temperature; df has temperature, seed, word_validity(_stripped)."""
    long = df.melt(id_vars=["temperature", "seed"], value_vars=["word_validity", "word_validity_stripped"],
                   var_name="measure", value_name="share").dropna()
    long["measure"] = long["measure"].map({"word_validity": "words as split on whitespace",
                                           "word_validity_stripped": "punctuation stripped"})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    sns.lineplot(long, x="temperature", y="share", hue="measure", errorbar="sd", marker="o", ax=ax)
    ax.set(title=title, xlabel="sampling temperature", ylabel="share of words found in the training text",
           ylim=(0, 1.02))
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xticks(sorted(long["temperature"].unique()))
    return fig


def lines(df: pd.DataFrame, x: str, hue: str, title: str, xlabel: str, ylabel: str, marker=None,
          vline: tuple[float, str] | None = None, ax=None):
    """Mean over seeds (value) against x, one line per hue; df has seed, x, hue, value."""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(9, 5))
    sns.lineplot(df, x=x, y="value", hue=hue, errorbar="sd", marker=marker, ax=ax)
    if vline is not None:
        ax.axvline(vline[0], ls="--", color="black", lw=1, label=vline[1])
        ax.legend()
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return fig or ax.figure


def scaling(curves: pd.DataFrame, budget: float | None, title: str):
    """Validation loss against training seconds and against steps; curves has variant, seed, step, time, value."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 5))
    mean = curves.groupby(["variant", "step"], sort=False, as_index=False)[["time", "value"]].mean()
    lines(mean, "time", "variant", "against training time (mean over seeds)", "training seconds (validation excluded)",
          "validation loss", marker="o", ax=a,
          vline=(budget, f"budget: base's time, {budget:.1f} s") if budget else None)
    lines(curves, "step", "variant", "against steps", "step", "validation loss", marker="o", ax=b)
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def loss_per_head_count(df: pd.DataFrame, title: str, xlabel: str):
    """Final validation loss per head count; df has n_head, seed, value."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    order = sorted(df["n_head"].unique())
    sns.pointplot(df, x="n_head", y="value", order=order, errorbar="sd", ax=ax, color="tab:blue",
                  capsize=0.1, label="mean over seeds")
    sns.stripplot(df, x="n_head", y="value", order=order, ax=ax, color="black", size=5, alpha=0.6,
                  label="one seed", legend=False)
    handles, labels = ax.get_legend_handles_labels()
    keep = dict(zip(labels, handles))
    ax.legend(keep.values(), keep.keys())
    ax.set(title=title, xlabel=xlabel, ylabel="validation loss")
    return fig
