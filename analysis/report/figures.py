"""The report's figures, drawn with seaborn from plain pandas tables (no MLflow here) and saved as PNG (with
`make report ARGS="svg=true"` an SVG beside each, for a paper), in the painter's worker processes
(analysis/report/painter.py), which call these functions by name.

Every function returns a matplotlib Figure; `save` writes and closes it. Bands are ± one standard deviation
over seeds (none with one seed). A comparison shows every seed as a dot beside the mean and its 95% interval, and
what the claims say the number should be (analysis/report/marks.py) in red: the lesson's single number as a bar, a
band a check asks for as a shaded bar. No figure is wider than MAX_WIDTH: panels wrap into rows (`panels`), and
`save` refuses a figure wider than the page.
"""
from pathlib import Path

import matplotlib
from PIL import Image

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import MaxNLocator, PercentFormatter  # noqa: E402

from analysis.verdicts.stats import summary  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")
# The widest figure, in inches at the saved 100 dpi: the report's page shows it at its own size (document.WIDTH).
MAX_WIDTH = 14.5
LESSON = "#c0262d"   # what the claims ask, on every figure
# Characters a tick label would lose: a space and a newline.
VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥"}
CMAP = sns.color_palette("Blues", as_cmap=True)


def save(fig, path, svg: bool = False) -> None:
    """The figure as a PNG of at most 256 colours, at 100 dpi, and with svg as an SVG beside it (the same name, for a
    paper). A figure's few flat colours and the heatmaps' ramps lose nothing a reader sees, and the files are a third
    of matplotlib's full-colour PNGs (the figures are the page's largest part), for about 0.1 s a figure in the
    painter's workers."""
    width = fig.get_size_inches()[0]
    if width > MAX_WIDTH + 1e-6:
        raise ValueError(f"{path}: a figure {width:.1f} inches wide, wider than the page's {MAX_WIDTH}")
    # Every figure has laid itself out (tight_layout). The layout engine tight_layout leaves behind would lay it out
    # again on every draw, a good part of the report's drawing and saving.
    fig.set_layout_engine(None)
    fig.set_dpi(100)
    if svg:
        fig.savefig(Path(path).with_suffix(".svg"), format="svg")
    fig.canvas.draw()
    rgb = Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba()).convert("RGB")
    rgb.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(path, "PNG")
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
    cols = min(max(len(block) for _, att in models for block in att["weights"]), int(MAX_WIDTH // 3.6))
    rows = []
    for name, att in models:
        maps = [(name, b, h, w) for b, block in enumerate(att["weights"], start=1) for h, w in enumerate(block, 1)]
        per_row = cols if len(maps) <= cols else min(cols, len(att["weights"][0]))
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


def panels(n: int, width: float, height: float):
    """A figure of n panels, each width × height inches, wrapped into as many rows as MAX_WIDTH needs, with room
    above them for a title and a legend (`finish`); returns it and its n axes (any left over hidden)."""
    cols = max(1, min(n, int(MAX_WIDTH // width)))
    rows = -(-n // cols)
    width = min(max(width, 5.5 / cols), MAX_WIDTH / cols)   # a one-panel figure still holds its title
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows + TOP), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


TOP = 0.65  # inches above a figure's panels: its title, and one legend for all of them


def finish(fig, title: str, merge: bool = True):
    """The title and, with merge, one legend for every panel (each entry once) above the panels, then the layout;
    without, each panel keeps its own (panels whose lines mean different things)."""
    seen = {}
    for ax in fig.axes if merge else ():
        handles, labels = ax.get_legend_handles_labels()
        seen.update({label: handle for label, handle in zip(labels, handles) if label not in seen})
        if ax.get_legend():
            ax.get_legend().remove()
    height = fig.get_size_inches()[1]
    fig.suptitle(title, fontsize=13, y=1 - 0.08 / height, va="top")
    if seen:
        fig.legend(seen.values(), seen.keys(), loc="upper center", bbox_to_anchor=(0.5, 1 - 0.34 / height),
                   ncol=min(len(seen), 6), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - TOP / height))
    return fig


def wrapped(name: str, width: int = 26) -> str:
    """A metric's name as a panel title, broken at its underscores into lines of about `width` characters."""
    lines, line = [], ""
    for part in name.split("_"):
        piece = part if not line else f"{line}_{part}"
        if len(piece) > width and line:
            lines.append(line + "_")
            line = part
        else:
            line = piece
    return "\n".join([*lines, line])


def _mark_at(ax, x: float, half: float, m: dict):
    """One mark behind the seeds at x, half wide each side in x's units: the lesson's number as a red line, a band a
    check asks for shaded, a one-sided one (≥ 0.5) shaded from its edge to the panel's edge, the panel widened to
    show the edge."""
    low, high = m["low"], m["high"]
    span = [x - half, x + half]
    if low is not None and high is not None and low == high:
        ax.plot(span, [low, low], color=LESSON, lw=2.5, zorder=2, label="the lesson's number")
        ax.annotate(f"{low:g}", (x + half, low), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8,
                    color=LESSON)
        return
    bottom, top = ax.get_ylim()
    edges = [e for e in (low, high) if e is not None]
    bottom, top = min(bottom, *edges), max(top, *edges)
    pad = 0.05 * (top - bottom or 1)
    bottom, top = bottom - pad, top + pad
    ax.fill_between(span, low if low is not None else bottom, high if high is not None else top, color=LESSON,
                    alpha=0.13, lw=0, zorder=1, label="what the claim asks")
    for edge in edges:
        ax.plot(span, [edge, edge], color=LESSON, lw=1, ls="--", zorder=2)
    ax.set_ylim(bottom, top)


def curves(df: pd.DataFrame, hlines: dict[str, float], title: str, marks: list[dict] = ()):
    """Metrics against step; df has variant, metric, seed, step, value. A colour per variant (per metric when there
    is one variant), a line style per metric; a sparse series (validation) gets markers, a dense one a thin line.
    marks: the claims' numbers on the drawn curves (marks.py, `metric` its label), a lesson's number at a step as a
    red cross, a final value's band across the plot."""
    fig, ax = plt.subplots(figsize=(10, 5))
    variants, metrics = list(dict.fromkeys(df["variant"])), list(dict.fromkeys(df["metric"]))
    palette = sns.color_palette(n_colors=max(len(variants), len(metrics)) + 1)
    for (v, m), g in df.groupby(["variant", "metric"], sort=False):
        sparse = g["step"].nunique() <= 40
        colour = palette[variants.index(v)] if len(variants) > 1 else palette[metrics.index(m)]
        name = m if len(variants) == 1 else v if len(metrics) == 1 else f"{v}: {m}"
        # The band's mean and deviation per step by pandas: the same lines and bands as seaborn's own errorbar, in a
        # thirtieth of its time on a figure of several variants × seeds × thousands of steps.
        band = g.groupby("step")["value"].agg(["mean", "std"])
        ax.plot(band.index, band["mean"], color=colour, label=name, marker="o" if sparse else None, mec="white",
                lw=2 if sparse else 0.7, ls=["-", "--", ":", "-."][metrics.index(m) % 4] if len(variants) > 1 else "-")
        if band["std"].notna().any():   # ± one standard deviation over seeds; none with one seed
            # With its edge, as seaborn draws it: a band of 3,000 steps is slivers, which the edge keeps visible.
            ax.fill_between(band.index, band["mean"] - band["std"], band["mean"] + band["std"], color=colour,
                            alpha=0.2)
    for (name, y), colour in zip(hlines.items(), ["gray", "tab:green", "tab:purple", "tab:brown"]):
        ax.axhline(y, ls=":" if colour == "gray" else "--", color=colour, label=name)
    at_steps = [m for m in marks if m["step"] is not None and m["low"] == m["high"]]
    if at_steps:
        ax.scatter([m["step"] for m in at_steps], [m["low"] for m in at_steps], marker="X", s=70, color=LESSON,
                   zorder=5, label="the lesson's numbers")
    for m in marks:
        if m["step"] is None and m["low"] is not None and m["high"] is not None:
            ax.axhspan(m["low"], m["high"], color=LESSON, alpha=0.12, label=f"{m['variant']}: {m['text']}")
    ax.set(title=title, xlabel="step", ylabel=metrics[0] if len(metrics) == 1 else "loss (nats per character)"
           if all("loss" in m for m in metrics) else "value")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def _interval_points(ax, g: pd.DataFrame, x: str, colour, name: str, line: bool = True, dodge: float = 0.0):
    """The mean of value per x with its 95% t-interval over seeds (from the notebook API) beside each seed's dot;
    joined by a line where x is a quantity, not where it names categories. dodge: how far right of x the mean
    sits, in x's units, so that the seeds' dots stay visible."""
    s = pd.DataFrame([{x: k, **summary(v["value"])} for k, v in g.groupby(x, sort=True)])
    err = np.array([s["mean"] - s["low"], s["high"] - s["mean"]]).astype(float)
    ax.errorbar(s[x] + dodge, s["mean"], yerr=np.nan_to_num(err), color=colour, marker="D", ms=6, capsize=4, lw=1.5,
                label=name, ls="-" if line else "none", zorder=3)
    ax.scatter(g[x], g["value"], facecolor="white", edgecolor=colour, linewidths=1.3, s=26, zorder=4,
               label="each seed")


def finals(df: pd.DataFrame, title: str, marks: list[dict] = ()):
    """Final values per variant, one panel per metric, the panels wrapped; df has variant, metric, seed, value;
    marks (marks.py) carry the metric they belong to in `metric`."""
    metrics = list(dict.fromkeys(df["metric"]))
    order = list(dict.fromkeys(df["variant"]))
    fig, axes = panels(len(metrics), max(2.8, 0.9 * len(order) + 1.6), 3.4)
    for ax, m in zip(axes, metrics):
        g = df[df["metric"] == m].assign(x=lambda d: d["variant"].map(order.index).astype(float))
        _interval_points(ax, g, "x", "tab:blue", "mean (95% interval)", line=False, dodge=0.15)
        for mark in marks:
            if mark["metric"] == m and mark["variant"] in order:
                _mark_at(ax, order.index(mark["variant"]), 0.35, mark)
        ax.set_xticks(range(len(order)), order, rotation=20 if len(order) > 3 else 0)
        ax.set_xlim(-0.6, len(order) - 0.4)
        ax.set_title(wrapped(m), fontsize=10)
    return finish(fig, title)


def sweep(df: pd.DataFrame, swept: list[str], title: str, ylabel: str, percent: bool = False,
          marks: list[dict] = ()):
    """A final metric against each swept param, one panel per param (wrapped); a line per metric and per value of
    the other params; each seed a dot. df has variant, metric, seed, value and a column per swept param."""
    fig, axes = panels(len(swept), 7, 4.4)
    for ax, key in zip(axes, swept):
        others = [k for k in swept if k != key]
        hue = df[["metric", *others]].astype(str).agg(lambda r: ", ".join(
            [r["metric"]] * (df["metric"].nunique() > 1) + [f"{k}={r[k]}" for k in others]), axis=1)
        groups = list(dict.fromkeys(hue))
        palette = sns.color_palette(n_colors=len(groups))
        for h, colour in zip(groups, palette):
            _interval_points(ax, df[hue == h], key, colour, h or "mean (95% interval)")
        if marks:   # each mark at its variant's value of the param
            at = df.drop_duplicates("variant").set_index("variant")[key]
            xs = np.sort(pd.to_numeric(at, errors="coerce").dropna().unique())
            half = 0.3 * (np.diff(xs).min() if len(xs) > 1 else 1.0)
            for mark in marks:
                if mark["variant"] in at.index and pd.api.types.is_number(at[mark["variant"]]):
                    _mark_at(ax, at[mark["variant"]], half, mark)
        ax.set(title=f"against {key}", xlabel=key, ylabel=ylabel)
        if pd.api.types.is_numeric_dtype(df[key]):
            ax.set_xticks(sorted(df[key].unique()))
        if percent:
            ax.set_ylim(0, 1.02)
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        handles, labels = ax.get_legend_handles_labels()
        once = dict(zip(labels, handles))
        ax.legend(once.values(), once.keys(), fontsize=8)
    return finish(fig, title, merge=len(swept) == 1)


def by_position(df: pd.DataFrame, points: pd.DataFrame, title: str, xlabel: str, ylabel: str):
    """A metric at each position of the window, one line per variant (the mean over seeds, ± 1 std), and at the
    positions the claims compare, each seed as a dot with the mean's 95% interval. df and points have variant, seed,
    step (the position) and value."""
    fig, ax = plt.subplots(figsize=(10, 5))
    variants = list(dict.fromkeys(df["variant"]))
    palette = dict(zip(variants, sns.color_palette(n_colors=len(variants))))
    for v, g in df.groupby("variant", sort=False):
        band = g.groupby("step")["value"].agg(["mean", "std"])
        ax.plot(band.index, band["mean"], color=palette[v], lw=1.5, label=v)
        if band["std"].notna().any():
            ax.fill_between(band.index, band["mean"] - band["std"], band["mean"] + band["std"], color=palette[v],
                            alpha=0.15)
    for v, g in points.groupby("variant", sort=False):
        _interval_points(ax, g, "step", palette.get(v, "black"), "mean at a compared position (95% interval)",
                         line=False)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    handles, labels = ax.get_legend_handles_labels()
    once = dict(zip(labels, handles))
    ax.legend(once.values(), once.keys(), fontsize=9)
    fig.tight_layout()
    return fig


def head_maps(maps: dict[str, pd.DataFrame], statistics: list[str], title: str):
    """Head statistics as heatmaps: a row per statistic, a column per variant (as wide as it has heads), a cell per
    (block, head), each number written in its cell; maps holds one (block, head, statistics...) table per variant."""
    heads = [int(t["head"].max()) for t in maps.values()]
    cell = min(0.62, (MAX_WIDTH - 0.9 * len(maps)) / sum(heads))   # inches a head
    fig, axes = plt.subplots(len(statistics), len(maps), squeeze=False,
                             figsize=(min(MAX_WIDTH, sum(max(1.6, cell * h + 0.9) for h in heads)),
                                      1.9 * len(statistics) + 0.8),
                             gridspec_kw={"width_ratios": [max(1.6, cell * h + 0.9) for h in heads]})
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
                ax.text(j, i, "-" if np.isnan(x) else f"{x:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if x > low + 0.6 * (high - low) else "black")
            ax.set_xticks(range(grid.shape[1]), grid.columns)
            ax.set_yticks(range(grid.shape[0]), grid.index)
            ax.grid(False)
            ax.set_title(f"{variant}: {stat}" if r == 0 else stat, fontsize=8)
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
    fig, axes = plt.subplots(n, 1, figsize=(min(MAX_WIDTH, max(6.0, 1.55 * width + 2)), 0.8 + 0.5 * n + 0.9 * rows),
                             squeeze=False,
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
