"""The exercise files: each parses, names real variants, and expands to the runs it promises. The tests read the
exercises from the exercise folder (experiments/, or $TINYGPT_EXPERIMENTS), so a new one is its YAML file alone."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lm.settings import config, exercises
from lm.settings.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {  # the lessons' exercises and their variants, as the lessons set them; an exercise of one's own joins them
    "baseline": ["base"], "bigram": ["ctx1"], "temperature": ["t05", "t10", "t15"], "nomask": ["masked", "nomask"],
    "nopos": ["pos", "nopos"], "scaling": ["base", "depth4", "width128", "context128"],
    "microgpt": ["microgpt", "bigger"], "sqrtd": ["scaled", "unscaled", "scaled_d64", "unscaled_d64", "unscaled_d128"],
    # lesson 002's, on its own model and recipe (profile=cpu); where lesson 000 asks the same, the name says 002
    "recipe002": ["cpu"], "nomask002": ["masked", "nomask"], "nopos002": ["pos", "nopos"],
    "scaling002": ["base", "double"], "context": ["ctx16", "ctx64", "ctx128"], "heads": ["h1", "h2", "h4", "h8"],
}
LESSON_002 = ("recipe002", "nomask002", "nopos002", "scaling002", "context", "heads")


def test_every_lesson_exercise_is_there_with_its_variants():
    found = {k: list(v.variants) for k, v in exercises.load_all().items()}
    assert {k: found.get(k) for k in EXPECTED} == EXPECTED


@pytest.mark.parametrize("name", exercises.load_all())
def test_each_run_composes_into_a_valid_config(name):
    ex = exercises.load_all()[name]
    runs = ex.runs(seeds=3)
    assert len(runs) == 3 * len(ex.variants)
    assert [r.name for r in runs[:3]] == [f"{list(ex.variants)[0]}/seed{s}" for s in (1, 2, 3)]
    hashes = {config.load_run(r.shared, r.seed).config_hash for r in runs}
    assert len(hashes) == len(runs)            # every (variant, seed) is a distinct run
    # every claim checks something or shows ours beside the lesson's (a time on another machine: shown, not judged)
    assert ex.claims and all(c.check or c.answer or c.prediction or c.control or c.value is not None or c.ours
                             for c in ex.claims)


def test_the_aa_twins_train_on_disjoint_seeds_so_no_twin_copy_merges_them():
    runs = exercises.load_all()["aa"].runs(seeds=1)    # its own 3 seeds, at quick size too
    seeds = {v: {r.seed for r in runs if r.variant == v} for v in ("a", "b")}
    assert seeds == {"a": {1, 2, 3}, "b": {1001, 1002, 1003}}
    assert len({config.load_run(r.shared, r.seed).config_hash for r in runs}) == 6
    more = exercises.load_all()["aa"].runs(seeds=6)     # seeds added later (make decide) extend each block
    assert {r.seed for r in more if r.variant == "b"} == {1001, 1002, 1003, 1004, 1005, 1006}


def test_lesson_002s_exercises_run_on_its_own_model_and_recipe_and_its_base_trains_once():
    """Lesson 002's exercises are about its notebook's model: 3 blocks of 64, GELU, AdamW at 2e-3, PyTorch's own
    initialisation, 2,500 steps; its "Remove the mask … train for 300 steps"; its "Double n_embd and n_layer",
    6 × 128.
    Lesson 000's stay on lesson 000's. The base model they share has one config, so the suite trains it once."""
    ex = exercises.load_all()
    load = lambda name: {r.variant: config.load_run(r.shared, r.seed) for r in ex[name].runs(1)}  # noqa: E731
    base = load("recipe002")["cpu"]
    assert (base.model.n_layer, base.model.n_embd, base.model.activation, base.model.init, base.train.optimizer,
            base.train.lr, base.train.steps) == (3, 64, "gelu", "pytorch", "adamw", 0.002, 2500)
    shared = {load(name)[v].config_hash for name, v in [("recipe002", "cpu"), ("context", "ctx64"), ("heads", "h4"),
                                                          ("nopos002", "pos"), ("scaling002", "base")]}
    assert shared == {base.config_hash}
    double = load("scaling002")["double"]
    assert (double.model.n_layer, double.model.n_embd, double.model.init, double.train.steps) == \
        (6, 128, "pytorch", 2500)
    mask = load("nomask002")
    assert mask["nomask"].train.steps == mask["masked"].train.steps == 300 and not mask["nomask"].model.mask
    assert mask["nomask"].model.init == "pytorch" and mask["nomask"].model.n_layer == 3
    for name in LESSON_002:
        assert all(c.model.init == "pytorch" and c.model.n_layer in (3, 6) for c in load(name).values()), name
        assert "(lesson 002)" in ex[name].title
    for name in ("baseline", "bigram", "nomask", "nopos", "scaling", "sqrtd", "temperature"):
        assert all(c.model.init == "lesson000" for c in load(name).values()) and "(lesson 000)" in ex[name].title
    assert load("nomask")["nomask"].train.steps == 500 and load("scaling")["context128"].model.n_layer == 2
    ctx1 = load("bigram")["ctx1"]   # lesson 000's recipe, seeing one character: 2,048 predictions a step
    assert (ctx1.model.block_size, ctx1.train.batch_size, ctx1.train.steps) == (1, 2048, 3000)


def test_the_variants_change_what_they_say():
    load = {r.name: config.load_run(r.shared, r.seed) for r in exercises.load_all()["scaling"].runs(1)}
    assert load["depth4/seed1"].model.n_layer == 4 and load["width128/seed1"].model.n_embd == 128
    assert load["context128/seed1"].model.block_size == 128
    assert load["base/seed1"].train.steps == 1000 and load["base/seed1"].eval.every == 100
    first = exercises.load_all()["microgpt"].runs(1)[0]
    micro = config.load_run(first.shared, first.seed)
    assert micro.data.corpus == "names" and micro.model.n_embd == 16
    nomask = {r.variant: config.load_run(r.shared, r.seed) for r in exercises.load_all()["nomask"].runs(1)}
    assert not nomask["nomask"].model.mask and nomask["masked"].model.mask and nomask["nomask"].eval.honest
    sqrtd = {r.variant: config.load_run(r.shared, r.seed) for r in exercises.load_all()["sqrtd"].runs(1)}
    wide = sqrtd["unscaled_d128"]   # one head of 128 numbers, read at initialisation: one step
    assert wide.model.n_embd // wide.model.n_head == 128 and not wide.model.scale_attn and wide.train.steps == 1
    assert sqrtd["scaled"].train.steps == 1000 and sqrtd["scaled_d64"].model.scale_attn
    bigger = {r.variant: config.load_run(r.shared, r.seed) for r in exercises.load_all()["microgpt"].runs(1)}["bigger"]
    assert bigger.data.corpus == "names" and (bigger.model.n_embd, bigger.model.n_layer) == (64, 2)


def test_selection():
    assert [e.name for e in exercises.select("nomask,heads")] == ["nomask", "heads"]
    assert [e.name for e in exercises.select("all")] == list(exercises.load_all())
    with pytest.raises(ConfigError, match="unknown ablation 'nomsk'; the exercises are aa, baseline, bigram"):
        exercises.select(["nomsk"])


def test_checks_are_a_safe_little_language():
    lookup = {("a", "x", None): 1.0, ("b", "x", None): 2.0, ("a", "x", 500): 3.0, ("a", "top", None): "e"}.__getitem__
    ev = lambda e: exercises.evaluate(e, lambda v, k, s: lookup((v, k, s)))
    assert ev("a.x < b.x and abs(a.x[500] - 3) < 1e-9 and a.top == 'e'")
    assert ev("b.x > a.x > 0") and not ev("a.x > b.x > 0")
    assert ev("max(a.x, b.x) == 2")
    for bad in ("__import__('os').system('true')", "a.x.__class__", "open('f')", "[x for x in ()]"):
        with pytest.raises(ValueError, match="not allowed"):
            ev(bad)


def test_a_new_exercise_file_needs_no_other_file_touched(tmp_path):
    """experiments/ with one more file, of the figure kinds there are: this file's tests and the report's read it."""
    folder = tmp_path / "experiments"
    shutil.copytree(exercises.EXPERIMENTS, folder)
    (folder / "deeper.yaml").write_text("title: Deeper models\nlesson: \"my own question\"\nmeasures: val_loss\n"
                                        "steps: 200\nvariants:\n  base: []\n  deep4: [model.n_layer=4]\n"
                                        "claims:\n  - text: Deeper ends lower\n    check: deep4.val_loss < base.val_loss\n"
                                        "report: [{kind: curves, metrics: [val_loss]}, {kind: final, metric: val_loss}]\n")
    env = {**os.environ, exercises.FOLDER_VARIABLE: str(folder)}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                        "deeper or every_lesson or selection"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:]
    assert "test_each_run_composes_into_a_valid_config[deeper]" in subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", __file__], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=300).stdout


def test_a_claim_of_ours_says_why_and_an_unknown_source_is_one_line():
    ours = {c.text for ex in exercises.load_all().values() for c in ex.claims if c.source == exercises.Source.OURS}
    assert "Knocking out block 1's previous-character head costs more than knocking out any other block-1 head" in ours
    assert all(c.why for ex in exercises.load_all().values() for c in ex.claims if c.source == exercises.Source.OURS)
    claim = "claims:\n  - text: Deeper ends lower\n    check: deep.val_loss < base.val_loss\n"
    head = "title: t\nlesson: l\nmeasures: m\nvariants:\n  base: []\n  deep: [model.n_layer=4]\n"
    ours_yaml = head + claim + "    source: ours\n    why: no lesson says it\n"
    assert exercises.parse("x", ours_yaml, "x.yaml").claims[0].source == exercises.Source.OURS
    for extra, message in [("    source: mine\n",
                            "x.yaml:10: claim 'Deeper ends lower'… has source 'mine': it is lesson or ours"),
                           ("    source: ours\n", "x.yaml:8: claim 'Deeper ends lower'… is ours: say why in `why:`"),
                           ("    why: because\n",
                            "x.yaml:8: claim 'Deeper ends lower'… has a `why:`, which only a claim of ours (source: ours) "
                            "gives")]:
        with pytest.raises(ConfigError) as e:
            exercises.parse("x", head + claim + extra, "x.yaml")
        assert str(e.value) == message and "\n" not in str(e.value)
