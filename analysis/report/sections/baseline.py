"""The base model's own parts: the next characters after lesson 000's probe, the lesson's two heads, and its list
of what every head does, each beside the lesson's own numbers."""
import pandas as pd

from analysis.report.kinds import Context, first_seed_note
from analysis.report.painter import plot
from lm.heads.summary import strongest

ARTIFACTS = ["probe.json", "attention.json"]


def render(ctx: Context):
    er, doc = ctx.er, ctx.doc
    v = er.variants[0]
    run = er.first(v)
    probe = er.reader.json(run.run_id, "probe.json")
    if probe:
        top = ",  ".join(f"{c!r} {p:.0%}" for c, p in probe["top"])
        doc.p(f"After {probe['prompt']!r} ({first_seed_note(er, v)}) the likeliest next characters are: {top}. "
              f"The lesson: 'e' 65%, 'r' 8%, 'l' 8%.")
    att, table = er.reader.json(run.run_id, "attention.json"), ctx.heads.get(run.run_id)
    if att and table is not None and table[["prev_token_score", "word_start_score"]].notna().any().all():
        prev, word = strongest(table, "prev_token_score"), strongest(table, "word_start_score")
        ctx.figure("two_heads", plot("two_heads", att, [
            (*prev, f"previous character (score {_value(table, prev, 'prev_token_score'):.2f})"),
            (*word, f"start of the word (score {_value(table, word, 'word_start_score'):.2f})")],
            "Lesson 000's two views: the strongest previous-token head and the strongest word-start head"),
            "The head with the highest previous-token score and the head with the highest word-start score "
            "(the mean weight on the space before the current word), chosen from the run's heads.csv.")
    if table is not None:
        doc.p(f"The base model's heads ({first_seed_note(er, v)}), as lesson 000 lists them (the most common "
              f"distance back to the heaviest key, and the share of positions where it is that distance):")
        doc.items(table.sort_values(["block", "head"])["label"].tolist())
        doc.p("The lesson: block 1, head 3: 1 back at 100% of positions; block 1, head 1: 2 back at 94%; "
              "block 2 reads the start of the word.")


def _value(table: pd.DataFrame, bh: tuple[int, int], column: str) -> float:
    return float(table.loc[(table["block"] == bh[0]) & (table["head"] == bh[1]), column].iloc[0])
