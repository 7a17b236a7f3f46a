"""The report's figures, drawn with seaborn from plain pandas tables (no MLflow here) and saved as PNG, in the
painter's worker processes (analysis/report/painter.py), which call these functions by name.

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

from analysis.verdicts.stats import summary  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")
# Characters a tick label would lose: a space and a newline.
VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥"}
CMAP = sns.color_palette("Blues", as_cmap=True)


def save(fig, path) -> None:
    # Every figure has laid itself out (tight_layout). bbox_inches="tight" measured it all again, and the layout
    # engine tight_layout leaves behind makes savefig draw the figure once more, unrendered, before drawing it: 12%
    # and 25% of the report's drawing and saving (2026-12-01). Without that engine the PNG is the same, to the byte.
    fig.set_layout_engine(None)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _heatmap(ax, weights, chars, title, cbar=False, xticks=True, yticks=True):
    """One head's weights; xticks, yticks: the characters along that axis, which a grid shows on its outer panels
    only (laying out tick labels was 40% of a grid's drawing and saving)."""
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
    none = ([], [])
    ax.set_xticks(*((range(len(w)), labels) if xticks else none), fontsize=8)
    ax.set_yticks(*((range(len(w)), labels) if yticks else none), fontsize=8)
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
            # The characters along the left edge and under the last panel of each column that reads them.
            below = rows[r + 1] if r + 1 < len(rows) else None
            last = below is None or c >= len(below[1]) or below[0] != chars
            _heatmap(ax, w, chars, f"{name}: block {b}, head {h}", xticks=last, yticks=c == 0)
            if c:
                ax.set_ylabel("")
            if not last:
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
    if fig is not None:
        fig.tight_layout()
    return fig or ax.figure


def curves(df: pd.DataFrame, hlines: dict[str, float], title: str):
    """Metrics against step; df has variant, metric, seed, step, value. A colour per variant (per metric when there
    is one variant), a line style per metric; a sparse series (validation) gets markers, a dense one a thin line."""
    fig, ax = plt.subplots(figsize=(9, 5))
    variants, metrics = list(dict.fromkeys(df["variant"])), list(dict.fromkeys(df["metric"]))
    palette = sns.color_palette(n_colors=max(len(variants), len(metrics)) + 1)
    for (v, m), g in df.groupby(["variant", "metric"], sort=False):
        sparse = g["step"].nunique() <= 40
        colour = palette[variants.index(v)] if len(variants) > 1 else palette[metrics.index(m)]
        name = m if len(variants) == 1 else v if len(metrics) == 1 else f"{v}: {m}"
        # The band's mean and deviation per step by pandas: seaborn's own errorbar took 2.5 s for one figure of
        # three variants × three seeds × 3,000 steps (0.07 s this way), the same lines and bands.
        band = g.groupby("step")["value"].agg(["mean", "std"])
        ax.plot(band.index, band["mean"], color=colour, label=name, marker="o" if sparse else None, mec="white",
                lw=2 if sparse else 0.7, ls=["-", "--", ":", "-."][metrics.index(m) % 4] if len(variants) > 1 else "-")
        if band["std"].notna().any():   # ± one standard deviation over seeds; none with one seed
            # With its edge, as seaborn draws it: a band of 3,000 steps is slivers, which the edge keeps visible.
            ax.fill_between(band.index, band["mean"] - band["std"], band["mean"] + band["std"], color=colour,
                            alpha=0.2)
    for (name, y), colour in zip(hlines.items(), ["gray", "tab:red", "tab:green", "tab:purple"]):
        ax.axhline(y, ls=":" if colour == "gray" else "--", color=colour, label=name)
    ax.set(title=title, xlabel="step", ylabel=metrics[0] if len(metrics) == 1 else "loss (nats per character)"
           if all("loss" in m for m in metrics) else "value")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    fig.tight_layout()
    return fig


def _interval_points(ax, g: pd.DataFrame, x: str, colour, name: str, line: bool = True):
    """The mean of value per x with its 95% t-interval over seeds (from the notebook API), and each seed; joined
    by a line where x is a quantity, not where it names categories."""
    s = pd.DataFrame([{x: k, **summary(v["value"])} for k, v in g.groupby(x, sort=True)])
    err = np.array([s["mean"] - s["low"], s["high"] - s["mean"]]).astype(float)
    ax.errorbar(s[x], s["mean"], yerr=np.nan_to_num(err), color=colour, marker="o", capsize=4, lw=1.5, label=name,
                ls="-" if line else "none")
    ax.scatter(g[x], g["value"], color="black", s=14, alpha=0.6, zorder=3)


def finals(df: pd.DataFrame, title: str):
    """Final values per variant, one panel per metric; df has variant, metric, seed, value."""
    metrics = list(dict.fromkeys(df["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(max(5, 1.2 * df["variant"].nunique() + 3) * len(metrics), 4.5),
                             squeeze=False)
    order = list(dict.fromkeys(df["variant"]))
    for ax, m in zip(axes[0], metrics):
        g = df[df["metric"] == m].assign(x=lambda d: d["variant"].map(order.index).astype(float))
        _interval_points(ax, g, "x", "tab:blue", "mean over seeds (95% interval)", line=False)
        ax.set_xticks(range(len(order)), order)
        ax.set_xlim(-0.5, len(order) - 0.5)
        ax.set(title=m, xlabel="variant", ylabel=m)
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def sweep(df: pd.DataFrame, swept: list[str], title: str, ylabel: str, percent: bool = False):
    """A final metric against each swept param, one panel per param; a line per metric and per value of the other
    params. df has metric, seed, value and a column per swept param."""
    fig, axes = plt.subplots(1, len(swept), figsize=(7 * len(swept), 4.5), squeeze=False)
    for ax, key in zip(axes[0], swept):
        others = [k for k in swept if k != key]
        hue = df[["metric", *others]].astype(str).agg(lambda r: ", ".join(
            [r["metric"]] * (df["metric"].nunique() > 1) + [f"{k}={r[k]}" for k in others]), axis=1)
        groups = list(dict.fromkeys(hue))
        palette = sns.color_palette(n_colors=len(groups))
        for h, colour in zip(groups, palette):
            _interval_points(ax, df[hue == h], key, colour, h or "mean over seeds (95% interval)")
        ax.set(title=f"against {key}", xlabel=key, ylabel=ylabel)
        if pd.api.types.is_numeric_dtype(df[key]):
            ax.set_xticks(sorted(df[key].unique()))
        if percent:
            ax.set_ylim(0, 1.02)
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.legend()
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def head_maps(maps: dict[str, pd.DataFrame], statistics: list[str], title: str):
    """Head statistics as heatmaps: a row per statistic, a column per variant, a cell per (block, head), each
    number written in its cell; maps holds one (block, head, statistics...) table per variant."""
    fig, axes = plt.subplots(len(statistics), len(maps), squeeze=False,
                             figsize=(max(2.6, 0.9 * max(t["head"].max() for t in maps.values()) + 1.2) * len(maps),
                                      2.2 * len(statistics) + 0.8))
    for r, stat in enumerate(statistics):
        values = pd.concat([t[stat] for t in maps.values() if stat in t]).dropna()
        low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        if 0 <= low and high <= 1:  # a share or a normalised score: its whole range, so noise looks like noise
            low, high = 0.0, 1.0
        for c, (variant, t) in enumerate(maps.items()):
            ax = axes[r, c]
            grid = t.pivot(index="block", columns="head", values=stat) if stat in t else pd.DataFrame()
            ax.imshow(grid.to_numpy(dtype=float), cmap=CMAP, vmin=low, vmax=high or 1, aspect="auto")
            for (i, j), x in np.ndenumerate(grid.to_numpy(dtype=float)):
                ax.text(j, i, "-" if np.isnan(x) else f"{x:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if x > low + 0.6 * (high - low) else "black")
            ax.set_xticks(range(grid.shape[1]), grid.columns)
            ax.set_yticks(range(grid.shape[0]), grid.index)
            ax.grid(False)
            ax.set_title(f"{variant}: {stat}" if r == 0 else stat, fontsize=9)
            ax.set_xlabel("head" if r == len(statistics) - 1 else "")
            ax.set_ylabel("block" if c == 0 else "")
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def against_time(curves: pd.DataFrame, budget: float | None, budget_name: str | None, title: str, ylabel: str):
    """A metric against training seconds and against steps; curves has variant, seed, step, time, value."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 5))
    mean = curves.groupby(["variant", "step"], sort=False, as_index=False)[["time", "value"]].mean()
    lines(mean, "time", "variant", "against training time (mean over seeds)", "training seconds (validation excluded)",
          ylabel, marker="o", ax=a, vline=(budget, f"budget: {budget_name}'s time, {budget:.1f} s") if budget else None)
    lines(curves, "step", "variant", "against steps", "step", ylabel, marker="o", ax=b)
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig


def knockout(tables: dict[str, pd.DataFrame], title: str):
    """One panel per variant: blocks as rows, each block's matched heads as columns (largest effect first),
    coloured by the mean increase in validation loss and labelled with the head's type (and how many seeds have a
    head of that type and rank, when not all do)."""
    n = len(tables)
    width = max(int((t["part"] == "head").groupby(t["block"]).sum().max()) for t in tables.values())
    rows = sum(t["block"].nunique() for t in tables.values())
    fig, axes = plt.subplots(n, 1, figsize=(max(6.0, 1.55 * width + 2), 0.8 + 0.5 * n + 0.9 * rows), squeeze=False,
                             gridspec_kw={"height_ratios": [t["block"].nunique() for t in tables.values()]})
    vmax = max(max(float(t.loc[t["part"] == "head", "_effect"].max()), 1e-3) for t in tables.values())
    for ax, (variant, t) in zip(axes[:, 0], tables.items()):
        heads = t[t["part"] == "head"]
        blocks = sorted(heads["block"].unique())
        grid = np.full((len(blocks), width), np.nan)
        for r, b in enumerate(blocks):
            row = heads[heads["block"] == b]
            for c, (slot, effect, n) in enumerate(zip(row["head (matched by type)"], row["_effect"], row["seeds"])):
                grid[r, c] = effect
                some = f"\n{n} of {t['seeds'].max()} seeds" if n < t["seeds"].max() else ""
                ax.text(c, r, f"{slot}\n{effect:+.3f}{some}", ha="center", va="center", fontsize=8,
                        color="white" if effect > 0.6 * vmax else "black")
        im = ax.imshow(np.ma.masked_invalid(grid), cmap="Reds", vmin=min(0.0, np.nanmin(grid)), vmax=vmax,
                       aspect="auto")
        ax.set_yticks(range(len(blocks)), [f"block {b}" for b in blocks])
        ax.set_xticks([])
        ax.set_xlabel("head types matched across seeds (not head indices)", fontsize=8)
        ax.set_title(variant, fontsize=11)
        ax.grid(False)
        fig.colorbar(im, ax=ax, label="loss increase", shrink=0.9)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig
