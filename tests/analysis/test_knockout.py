"""Head knock-out (lm/knockout/measure.py): what it changes, on models whose heads are known by construction."""
import math

import pandas as pd
import pytest
import torch
from torch.nn import functional as F

from lm.commands import heads
from lm.knockout import measure as knockout
from lm.knockout.summary import head_types, headline
from lm.knockout.table import Mode, Part, Target
from lm.model.model import GPT, GPTConfig

V, T = 6, 8


def random_model(seed=0, **kw) -> GPT:
    torch.manual_seed(seed)
    return GPT(GPTConfig(**{"vocab_size": V, "block_size": T, "n_layer": 2, "n_head": 2, "n_embd": 16, **kw})).eval()


def batches(n=3, seed=0, pad=False):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x = torch.randint(V, (16, T), generator=g)
        y = torch.randint(V, (16, T), generator=g)
        if pad:  # a document's end: the last positions carry no loss
            y[:, -3:] = -1
        out.append((x, y))
    return out


def increase(table: pd.DataFrame, key: str, mode: Mode = Mode.MEAN) -> float:
    return float(table.loc[(table["metric"] == knockout.metric(Target(Part.HEAD, *map(int, key[1:].split("h"))),
                                                              mode)), "increase"].iloc[0])


def test_a_head_whose_output_projection_is_zero_changes_nothing_when_knocked_out():
    model = random_model()
    with torch.no_grad():
        model.h[0].attn.c_proj.weight[:, 8:16] = 0   # block 1, head 2 writes nothing to the residual stream
    table = knockout.knockout(model, batches())
    for mode in Mode:
        assert increase(table, "b1h2", mode) == pytest.approx(0, abs=1e-6)
        assert abs(increase(table, "b1h1", mode)) > 1e-4   # its neighbour does matter
    assert table.attrs["base_loss"] == pytest.approx(knockout.loss(model, batches()))
    assert len(table) == 2 * 2 * (2 + 2)   # modes × blocks × (heads + attention + MLP)


def test_every_knock_out_run_from_its_blocks_cached_stream_equals_the_whole_forward_pass_to_the_bit():
    model, data = random_model(seed=5, n_layer=3), batches(pad=True)
    table = knockout.knockout(model, data)
    assert table.attrs["base_loss"] == knockout.loss(model, data)
    streams, means = [model.embed(x) for x, _ in data], {}
    for b in (1, 2, 3):
        inside = knockout.through(model, b, streams, data)
        streams = inside.streams
        means.update(inside.means)
    for row in table.itertuples():
        t = Target(Part(row.part), row.block, None if pd.isna(row.head) else row.head)
        value = means[t] if row.mode == Mode.MEAN.value else torch.zeros_like(means[t])
        with knockout.knocked_out(model, t, value):
            assert row.loss == knockout.loss(model, data), row.metric   # exact: the same sums in the same order
    assert len(table) == 2 * 3 * (2 + 2)


def copy_model() -> GPT:
    """One block whose head 1 reads exactly the previous character and writes it where the output layer reads
    it; head 2 and the MLP do nothing. Residual dims: 0-5 the character, 6-13 the position, 16-21 the copy."""
    c = GPTConfig(vocab_size=V, block_size=T, n_layer=1, n_head=2, n_embd=32, norm="rms", norm_affine=False,
                  final_norm=False, bias=False)
    model = GPT(c)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.wte.weight[:, :V] = torch.eye(V)
        model.wpe.weight[:, V:V + T] = torch.eye(T)
        W = model.h[0].attn.c_attn.weight         # rows: q (32), k (32), v (32); head 1 is the first 16 of each
        for p in range(T):
            W[p, V + p] = 10.0                    # query at position p: its own position
            if p + 1 < 16:
                W[32 + p + 1, V + p] = 10.0       # key at position p: looks like the query of position p + 1
        for i in range(V):
            W[64 + i, i] = 1.0                    # value: the character
            model.h[0].attn.c_proj.weight[16 + i, i] = 1.0
            model.lm_head.weight[i, 16 + i] = 10.0
    return model.eval()


def copy_batches(n=4, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x = torch.randint(V, (32, T), generator=g)
        y = torch.cat([torch.full((32, 1), -1), x[:, :-1]], 1)   # the answer is the previous character
        out.append((x, y))
    return out


def test_knocking_out_a_hand_built_previous_character_head_on_a_copy_task_raises_the_loss():
    model = copy_model()
    table = knockout.knockout(model, copy_batches())
    assert table.attrs["base_loss"] < 0.01                     # the head solves the task
    for mode in Mode:
        assert increase(table, "b1h1", mode) > math.log(V) - 0.2   # without it: no better than a guess
        assert increase(table, "b1h2", mode) == pytest.approx(0, abs=1e-6)
    attn = table[(table["part"] == "attn") & (table["mode"] == "mean")]["increase"].item()
    assert attn == pytest.approx(increase(table, "b1h1"), abs=1e-4)


def manual_loss_with_head_replaced(model: GPT, data, block: int, head: int) -> float:
    """The forward pass written out by hand, with one head's output replaced by its mean over every scored
    position of the data, computed in a first pass of its own."""
    hs = model.config.n_embd // model.config.n_head
    cols = slice((head - 1) * hs, head * hs)

    def run(x, replace=None):
        h = model.wte(x) + model.wpe(torch.arange(x.size(1)))
        outs = []
        for b, blk in enumerate(model.h, start=1):
            a = blk.ln_1(h)
            q, k, v = blk.attn.c_attn(a).split(model.config.n_embd, 2)
            heads = []
            for j in range(model.config.n_head):
                s = slice(j * hs, (j + 1) * hs)
                scores = q[..., s] @ k[..., s].transpose(1, 2) / math.sqrt(hs)
                scores = scores.masked_fill(~torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril(), -math.inf)
                heads.append(scores.softmax(-1) @ v[..., s])
            y = torch.cat(heads, -1)
            if b == block:
                outs.append(y[..., cols])
                if replace is not None:
                    y = y.clone()
                    y[..., cols] = replace
            h = h + blk.attn.c_proj(y)
            h = h + blk.mlp(blk.ln_2(h))
        return model.lm_head(model.ln_f(h)), outs[0]

    with torch.no_grad():
        parts = [run(x)[1][y >= 0] for x, y in data]
        mean = torch.cat(parts).mean(0)
        total = n = 0
        for x, y in data:
            logits, _ = run(x, mean)
            total += F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-1, reduction="sum").item()
            n += int((y >= 0).sum())
    return total / n


@pytest.mark.parametrize("block,head", [(1, 1), (2, 2)])
def test_mean_ablation_equals_replacing_the_heads_output_by_its_mean(block, head):
    model = random_model(seed=3)
    data = batches(seed=5, pad=True)
    table = knockout.knockout(model, data, modes=(Mode.MEAN,))
    row = table[(table["block"] == block) & (table["head"] == head)]
    assert row["loss"].item() == pytest.approx(manual_loss_with_head_replaced(model, data, block, head), rel=1e-5)


def test_the_run_metrics_name_block_ones_previous_character_head_and_the_sharpest_head():
    model = random_model()
    table = knockout.knockout(model, batches())
    heads = pd.DataFrame({"block": [1, 1, 2, 2], "head": [1, 2, 1, 2], "prev_token_score": [0.2, 0.9, 0.95, 0.1],
                          "m2": [0.5, 0.0, 0.0, 0.0], "max_weight": [0.4, 0.7, 0.3, 0.99]})
    m = headline(table, heads)
    assert m["knockout_prev_head_b1"] == increase(table, "b1h2")    # block 1's best, not block 2's
    assert m["knockout_other_b1_max"] == increase(table, "b1h1")
    assert m["knockout_sharpest_head"] == increase(table, "b2h2")
    assert m["knockout_head_max"] == max(increase(table, k) for k in ("b1h1", "b1h2", "b2h1", "b2h2"))
    assert {"knockout_b1_attn", "knockout_zero_b2_mlp", "knockout_seconds"} <= m.keys()
    typed = head_types(heads)
    assert typed["type"].tolist() == ["two back", "previous", "previous", "previous"]


def test_make_heads_for_a_whole_exercise_logs_every_finished_run(quick_store, capsys):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{quick_store}/mlflow.db"
    assert heads.main(["exercise=microgpt", "quick=true", "force=true", f"tracking_uri={uri}"]) == 0
    out = capsys.readouterr()
    assert "quick/microgpt microgpt/seed1: largest head block 1, head " in out.out
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("quick/microgpt")
    run = client.search_runs([exp.experiment_id], "tags.variant = 'microgpt'")[0]
    steps = {m.step for m in client.get_metric_history(run.info.run_id, "knockout_b1h1")}
    assert steps == {int(run.data.params["train.steps"])}
    assert heads.main(["exercise=microgpt", "quick=true", f"tracking_uri={uri}"]) == 0
    assert "(logged before)" in capsys.readouterr().out
    assert heads.main(["exercise=nosuch", f"tracking_uri={uri}"]) == 2
    assert "unknown ablation 'nosuch'" in capsys.readouterr().err
