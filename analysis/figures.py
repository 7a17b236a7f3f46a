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
from matplotlib.ticker import MaxNLocator, PercentFormatter  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")
# Characters a tick label would lose: a space and a newline.
VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥"}
CMAP = sns.color_palette("Blues", as_cmap=True)


def save(fig, path) -> None:
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def _heatmap(ax, weights, chars, title, cbar=False):
    # imshow, not sns.heatmap: seaborn redraws the whole figure once per heatmap to check its tick labels.
    w = np.asarray(weights, dtype=float)
    labels = [VISIBLE.get(c, c) for c in chars[: len(w)]]
    above = np.triu(np.ones_like(w, dtype=bool), k=1)
    # The causal mask makes everything above the diagonal zero; a blank triangle says so plainly.
    shown = np.ma.masked_where(above, w) if np.allclose(w[above], 0) else w
    im = ax.imshow(shown, cmap=CMAP, vmin=0, vmax=1, interpolation="nearest")
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("key: the character read")
    ax.set_ylabel("query: the character predicting")
    ax.set_xticks(range(len(w)), labels, fontsize=8)
    ax.set_yticks(range(len(w)), labels, fontsize=8)
    ax.tick_params(length=0)
    ax.grid(False)
    if cbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.6, label="attention weight")


def attention_grid(models: list[tuple[str, dict]], title: str):
    """Every head of each model on one line: [(name, attention.json)]. A model whose heads fit one row gets
    one row; otherwise each block gets its own."""
    cols = max(len(block) for _, att in models for block in att["weights"])
    rows = []
    for name, att in models:
        maps = [(name, b, h, w) for b, block in enumerate(att["weights"], start=1) for h, w in enumerate(block, 1)]
        per_row = cols if len(maps) <= cols else len(att["weights"][0])
        rows += [(att["chars"], maps[k:k + per_row]) for k in range(0, len(maps), per_row)]
    fig, axes = plt.subplots(len(rows), cols, figsize=(3.6 * cols, 3.9 * len(rows)), squeeze=False)
    for r, (chars, maps) in enumerate(rows):
        for c in range(cols):
            ax = axes[r, c]
            if c >= len(maps):
                ax.axis("off")
                continue
            name, b, h, w = maps[c]
            _heatmap(ax, w, chars, f"{name}: block {b}, head {h}")
            if c:
                ax.set_ylabel("")
            if r < len(rows) - 1:
                ax.set_xlabel("")
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
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
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
          vline: tuple[float, str] | None = None, ax=None, style: str | None = None):
    """Mean over seeds (value) against x, one line per hue (and style); df has seed, x, hue, value."""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(9, 5))
    sns.lineplot(df, x=x, y="value", hue=hue, style=style, errorbar="sd", marker=marker, ax=ax)
    if vline is not None:
        ax.axvline(vline[0], ls="--", color="black", lw=1, label=vline[1])
        ax.legend()
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if x == "step":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
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
