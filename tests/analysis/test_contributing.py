"""A claim kind is two entries in two files (docs/contributing.md, "A claim kind"): the page's worked example, our
own inference, added to a copy of the tree in lm/settings/claims.py and analysis/verdicts/claim_kinds.py alone,
is read from an exercise file, judged through the table, set on its boundary by the calibration, given its seeds by
the suite's plan and described on the docs page, with nothing else changed."""
import shutil
import subprocess
import sys
import textwrap

from tests.conftest import ROOT

EXERCISE = """\
title: own
lesson: none
measures: heads
steps: 1000
variants:
  pos: []
  nopos: [model.pos_emb=false]
claims:
  - text: "Ours: without position vectors, the sharpest previous-character head is weaker"
    ours: "[nopos.heads_prev_token_max, pos.heads_prev_token_max]"
    check: nopos.heads_prev_token_max < pos.heads_prev_token_max
    inference: true
"""

# The page's two entries, each put where the page says, as a contributor would type them.
FIELDS = [
    ('    VALUE = "value"',
     '    INFERENCE = "inference"    # ours, in no lesson: judged as a check, its lessons column saying so'),
    ("    ClaimKind.CONTROL: ClaimFields(",
     '    ClaimKind.INFERENCE: ClaimFields(marks=("inference",), needs=("check",), excludes=("finding",), '
     'decided=True),'),
    ("    def sets(self, name: str) -> bool:",
     "    inference: bool = False     # ours, in no lesson: a check we judge, marked as ours\n"),
]
JUDGING = [
    ("KINDS: dict[ClaimKind, Judging] = {", '''\
def inference(claim: Claim, r: Lookups, v: Verdict) -> None:
    """Our own inference: judged as a check, its lessons column saying that no lesson makes it."""
    v.lesson = f"ours, in no lesson: {claim.lesson}" if claim.lesson else "ours, in no lesson"
    by_comparisons(check)(claim, r, v)

'''),
]
ENTRY = '''    ClaimKind.INFERENCE: Judging(
        inference, expression=lambda claim: claim.check, family=TABLE, slots=lambda claim: count(claim.check),
        asks=lambda claim: f"`{claim.check}`, our inference", placement=Placement.COMPARISONS, marks=Marks.BANDS),'''

SCRIPT = textwrap.dedent('''
    from analysis.calibration import boundary
    from analysis.report import docs_pages
    from analysis.report.verdict_text import frame
    from analysis.verdicts import Numbers, table
    from lm.settings import needs
    from lm.settings.claims import ClaimKind
    from lm.settings.exercises import load_all

    own = load_all()["own"]
    (claim,) = own.claims
    assert claim.kind == ClaimKind.INFERENCE, claim.kind
    final = {"nopos": {"heads_prev_token_max": {1: 0.30, 2: 0.32, 3: 0.31}},
             "pos": {"heads_prev_token_max": {1: 0.60, 2: 0.63, 3: 0.61}}}
    t = table({"own": Numbers(own, final)})
    (row,) = t.rows
    assert row.verdict.verdict == "reproduced" and row.verdict.lesson == "ours, in no lesson", row.verdict
    assert len(t.family) == 1 and frame(t).loc[0, "verdict"] == "reproduced"
    worlds, problems = boundary.worlds({"own": own})
    assert problems == [] and [w.kind for w in worlds] == [ClaimKind.INFERENCE] and worlds[0].counted
    assert needs.decided([own]) == {("own", "nopos"), ("own", "pos")}
    assert "our inference" in docs_pages.lesson_claims({"own": own})
    print("ok")
''')


def insert_before(path, edits) -> None:
    text = path.read_text()
    for anchor, line in edits:
        assert text.count(anchor) == 1, f"{path.name}: the page's anchor {anchor!r} is not one line"
        text = text.replace(anchor, f"{line}\n{anchor}" if not line.endswith("\n") else f"{line}{anchor}")
    path.write_text(text)


def test_the_worked_example_adds_a_kind_in_two_files_and_it_runs_everywhere(tmp_path):
    tree = tmp_path / "tree"
    for part in ("lm", "analysis", "conf", "experiments"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    insert_before(tree / "lm" / "settings" / "claims.py", FIELDS)
    kinds = tree / "analysis" / "verdicts" / "claim_kinds.py"
    insert_before(kinds, JUDGING)
    text = kinds.read_text()
    text = text.replace("KINDS: dict[ClaimKind, Judging] = {\n", "KINDS: dict[ClaimKind, Judging] = {\n" + ENTRY + "\n")
    kinds.write_text(text)
    changed = [p.relative_to(tree).as_posix() for p in tree.rglob("*.py")
               if p.read_bytes() != (ROOT / p.relative_to(tree)).read_bytes()]
    assert sorted(changed) == ["analysis/verdicts/claim_kinds.py", "lm/settings/claims.py"]
    own = tmp_path / "own"
    own.mkdir()
    (own / "own.yaml").write_text(EXERCISE)
    env = {"PYTHONPATH": str(tree), "TINYGPT_EXPERIMENTS": str(own), "PATH": "/usr/bin:/bin",
           "MPLBACKEND": "Agg", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tree, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout[-2000:] + out.stderr[-3000:]
