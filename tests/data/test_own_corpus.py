"""Your own corpus, `data=text data.path=FILE`: any UTF-8 text trains, samples, reports and resumes, with its
vocabulary and hash read from the file; a file that cannot be one is one line before any work."""
import hashlib
import json

import pytest
import torch
from mlflow.tracking import MlflowClient

from lm.commands import sample, suite, train
from lm.heads.measure import head_statistics
from lm.heads.summary import headline
from lm.measures import probes
from lm.model.data import Corpus, DataConfig, DataError
from lm.model.model import GPT, GPTConfig
from lm.settings import config
from lm.settings.claims import ClaimKind, Source
from lm.settings.exercises import load_all

# Accents, curly quotes, guillemets, an em dash and an emoji; no 'T' and no 'W', so neither lesson 000's probe
# ('To be, or not to b') nor its heatmap line can be read on it.
LINES = ["À l’été, la forêt chante « bonjour » 🌲 — dit Zoé.",
         "“Où es-tu ?” demande Noël, près du lac gelé ❄️.",
         "Ça va très bien, merci ; l’œuvre est déjà là…",
         "Les élèves lisent « Les Misérables » à voix haute 📚."]
TEXT = "\n".join(LINES[i % 4] for i in range(120)) + "\n"
QUICK = ["quick=true", "ablations=[baseline]", "data=text"]


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """A quick baseline run on the text, in a store of its own."""
    root = tmp_path_factory.mktemp("own")
    path = root / "mine.txt"
    path.write_text(TEXT, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TINYGPT_STORE", str(root / "store"))
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        assert suite.main([*QUICK, f"data.path={path}"]) == 0
        client = MlflowClient(f"sqlite:///{root / 'store'}/mlflow.db")
        exp = client.get_experiment_by_name("quick/baseline")
        run = next(r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("variant") == "base")
        yield path, client, run, mp


def test_the_vocabulary_and_hash_come_from_the_file(own):
    path, _, run, _ = own
    assert run.info.status == "FINISHED"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert run.data.params["data.sha256"] == run.data.tags["corpus.sha256"] == digest
    assert run.data.params["data.vocab_size"] == run.data.params["model.vocab_size"] == str(len(set(TEXT)))
    assert run.data.tags["corpus"] == "text" and run.data.tags["corpus.file"] == "mine.txt"
    assert run.data.tags["corpus.pinned"] == "False"


def test_what_only_shakespeare_can_answer_is_not_measured_and_says_why(own):
    _, client, run, _ = own
    skipped = json.loads(run.data.tags["not_applicable"])
    assert set(skipped) == {"probe_top1", "probe_top1_p", "probe.json", "attention.json"}
    assert skipped["probe_top1"] == "data.probe 'To be, or not to b' has characters not in this corpus ('T')"
    assert "probe_top1" not in run.data.tags and "probe_top1_p" not in run.data.metrics
    files = {f.path for f in client.list_artifacts(run.info.run_id)}
    assert {"samples.txt", "heads.csv", "model.pt"} <= files and not files & {"probe.json", "attention.json"}
    assert "heads_word_start_max" in run.data.metrics   # the text has spaces between its words


def test_the_samples_speak_the_text_s_characters(own, capsys):
    _, client, run, _ = own
    assert sample.main([f"run={run.info.run_id}", "prompt=Zoé « ", "length=80"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Zoé « ") and len(out.rstrip("\n")) >= 80 and set(out) <= set(TEXT)
    assert sample.main([f"run={run.info.run_id}", "prompt=To be"]) == 2
    assert "not in the model's" in capsys.readouterr().err


def test_the_report_reads_the_lessons_claims_as_not_applicable(own, tmp_path):
    from analysis import report

    assert report.main(["quick=true", "ablations=[baseline]", f"out={tmp_path}", "log=false"]) == 0
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    table = md.split("## The lessons' claims")[1].split("\n## ")[0]   # the claims table itself, not a section's copy
    claims = [line for line in table.splitlines() if line.startswith("| baseline |") and "| not applicable |" in line]
    # every claim with a verdict to give; one shown beside the lesson's figure (a time on another machine) gives none
    judged = [c for c in load_all()["baseline"].claims if c.kind != ClaimKind.SHOWN]
    assert len(claims) == len(judged)
    n = len(claims)
    ours = sum(c.source == Source.OURS for c in judged)
    assert f"**The lessons' claims** ({n - ours}): {n - ours} not applicable." in md   # the first screen's counts
    assert f"**Ours** ({ours}): {ours} not applicable." in md and "**Not reproduced**: none." in md
    assert all("not applicable to this corpus: base read text (mine.txt); the lessons' figures are for shakespeare"
               in line for line in claims)
    assert "| text (mine.txt) | " in md   # the environments table names the corpus


def test_a_second_call_trains_nothing_and_an_interrupted_run_resumes_in_place(own, capsys):
    path, client, run, _ = own
    client.set_terminated(run.info.run_id, "KILLED")
    assert suite.main([*QUICK, f"data.path={path}"]) == 0
    out = capsys.readouterr().out
    assert "1 to run" in out
    again = client.get_run(run.info.run_id)
    assert again.info.status == "FINISHED" and again.data.params["data.sha256"] == run.data.params["data.sha256"], out
    assert suite.main([*QUICK, f"data.path={path}"]) == 0
    assert "nothing to run" in capsys.readouterr().out


def test_a_changed_file_is_another_corpus(own, tmp_path):
    path, *_ = own
    other = tmp_path / "mine.txt"
    other.write_text(TEXT + "Encore une ligne.\n", encoding="utf-8")
    a = config.load(["data=text", f"data.path={path}"])
    b = config.load(["data=text", f"data.path={other}"])
    assert a.config_hash != b.config_hash and a.data.sha256 != b.data.sha256


def test_the_pinned_corpora_keep_their_hash_and_vocabulary():
    c = config.load([]).data
    assert c.sha256.startswith("86c4e6aa") and c.vocab_size == 65 and c.url


def test_a_text_without_spaces_says_the_word_start_statistic_does_not_apply():
    c = DataConfig(corpus="text")
    corpus = Corpus(c, "天地玄黄宇宙洪荒日月盈昃" * 50)
    skipped = probes.not_applicable(corpus, c)
    assert "no spaces between words" in skipped["heads_word_start_max"]
    assert "probe_top1" in skipped and "attention.json" in skipped   # lesson 000's probe and line are not Chinese
    model = GPT(GPTConfig(vocab_size=corpus.vocab_size, block_size=16, n_layer=1)).eval()
    batches = [corpus.batch("val", 4, 16, torch.Generator().manual_seed(0))]
    table = head_statistics(model, corpus, batches, windows=4, skip=2)
    assert table["word_start_score"].isna().all() and "heads_word_start_max" not in headline(table)
    assert table["prev_token_score"].notna().all()                   # the other statistics stand


BAD = {
    "empty": (b"", "is empty"),
    "only whitespace": (b" \n\n \n", "is empty"),
    "binary": (bytes(range(256)) * 8, "is a binary file"),
    "not UTF-8": ("Zoé à l’été\n".encode("latin-1", errors="replace") * 200, "is not UTF-8 text"),
    "too short for one window": ("Un été à Noël 🌲\n".encode() * 4,
                                 "too short for one window of model.block_size=64"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_file_that_cannot_be_a_corpus_is_one_line_before_any_work(case, tmp_path, monkeypatch, capsys):
    content, message = BAD[case]
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(DataError, match=message):
        config.load(["data=text", f"data.path={path}"])
    assert train.main(["data=text", f"data.path={path}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "store").exists()   # nothing was started


def test_data_text_without_a_file_says_what_to_give(tmp_path):
    with pytest.raises(DataError, match="give data.path=FILE"):
        config.load(["data=text"])
    with pytest.raises(DataError, match="no such file"):
        config.load(["data=text", f"data.path={tmp_path / 'missing.txt'}"])
