"""docs/lesson-claims.md is generated from experiments/*.yaml and kept in step with it: every claim, its lesson's
words verbatim, ours apart with why. No store is read."""
from analysis.report import docs_pages
from lm.settings.claims import Source
from lm.settings.exercises import load_all


def test_the_checked_in_lesson_claims_page_is_the_yamls():
    page = (docs_pages.DOCS / "lesson-claims.md").read_text(encoding="utf-8")
    assert page == docs_pages.lesson_claims(load_all()), \
        f"docs/lesson-claims.md is out of date with experiments/*.yaml: run `{docs_pages.CLAIMS_COMMAND}`"


def test_every_claim_is_listed_once_with_its_lessons_words_or_why_it_is_ours():
    found = load_all()
    page = docs_pages.lesson_claims(found)
    ours = page.split("\n## Ours\n")[1]
    lessons = page.split("\n## Ours\n")[0]
    for name, ex in found.items():
        for index, claim in enumerate(ex.claims, start=1):
            rows = [ln for ln in page.splitlines() if ln.startswith(f"| {name} | {index} | ")]
            assert len(rows) == 1, (name, index)
            if claim.source == Source.OURS:
                assert rows[0] in ours and f"| {claim.why.replace('|', chr(92) + '|')} |" in rows[0], (name, index)
            else:
                lesson = docs_pages.lesson_of(ex.lesson)
                part = lessons.split(f"\n## Lesson {lesson}\n")[1].split("\n## ")[0]
                assert rows[0] in part, (name, index)
                if claim.lesson:
                    assert f"“{claim.lesson.replace('|', chr(92) + '|')}”" in rows[0], (name, index)
    n_ours = sum(c.source == Source.OURS for ex in found.values() for c in ex.claims)
    n_all = sum(len(ex.claims) for ex in found.values())
    assert f"**The lessons' claims**: {n_all - n_ours}; **ours**: {n_ours}." in page


def test_a_folder_that_is_not_there_is_one_line(tmp_path, capsys):
    assert docs_pages.main([str(tmp_path / "nonesuch")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nonesuch'} is not a folder\n"


def test_the_sentences_not_checkable_here_are_listed_apart_each_with_why():
    page = docs_pages.lesson_claims(load_all())
    part = page.split("\n## Not checkable here\n")[1]
    for lesson, words, why in docs_pages.NOT_CHECKABLE:
        row = f"| {lesson} | “{words.replace('|', chr(92) + '|')}” | {why} |"
        assert row in part, row
    assert f"({len(docs_pages.NOT_CHECKABLE)})" in part
    assert "## Not checkable here" not in page.split("\n## Ours\n")[0]   # after the claims, not among them
