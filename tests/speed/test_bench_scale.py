"""`make bench`'s scale rows at toy sizes: stores of 10 and 20 finished runs built as the suite lays them out, each
step timed on a fresh copy, the growth between sizes, and the suite set against a bare reading."""
import re

from lm.tools import bench_scale, scale_store


class Rows:
    def __init__(self):
        self.rows, self.sections = {}, []

    def add(self, what, value, note=""):
        self.rows[what] = (value, note)

    def section(self, title):
        self.sections.append(title)


def test_the_scale_rows_time_each_step_at_each_size_with_its_growth(tmp_path, monkeypatch):
    monkeypatch.setattr(scale_store, "CACHE", tmp_path / "cache")
    table = Rows()
    bench_scale.scale(table, str(tmp_path / "scratch"), sizes=(10, 20))
    assert "stores of 10, 20 finished runs" in table.sections[0]
    for what in bench_scale.ROWS.values():
        value, note = table.rows[what]
        assert re.fullmatch(r"[\d.]+ → [\d.]+ s", value) and re.fullmatch(r"growth ×[\d.]+", note), (what, value)
    ratio, note = table.rows["the suite that trains nothing against a bare reading, 20 runs"]
    assert re.fullmatch(r"[\d.]+×", ratio) and note == "target ≤ 2×"
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache").iterdir() if p.is_dir()) == ["10", "20"]
