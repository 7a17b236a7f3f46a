"""What `make ui` shows, without a browser: the saved views built from each exercise's YAML (lm/tracking/views.py),
and the page lm/commands/ui_app.py serves (MLflow's own, with its first-visit defaults set)."""
import asyncio
import json
import urllib.parse

import pytest
import yaml

from lm.commands import ui_app
from lm.settings import exercises
from lm.settings.errors import ConfigError
from lm.tracking import reference, views

EXERCISES = exercises.load_all()
HEADS = (exercises.folder() / "heads.yaml").read_text()


def charts(st, section=0):
    """(type, metricKey, x) of a view's charts in its first section (or another)."""
    uuid = st["compareRunSections"][section]["uuid"]
    return [(c["type"], c["metricKey"], c.get("selectedXAxisMetricKey") or c.get("xaxis", {}).get("key") or None)
            for c in st["compareRunCharts"] if c["metricSectionId"] == uuid]


def test_the_charts_view_leads_with_the_exercises_own_comparison():
    assert charts(views.state(EXERCISES["heads"]))[:3] == [("LINE", "val_loss", None), ("BAR", "val_loss", None),
                                                           ("BAR", "knockout_head_max", None)]
    assert charts(views.state(EXERCISES["temperature"]))[0] == ("BAR", "word_validity", None)   # it trains nothing
    # without a ui: block, the validation curve and what the claims read
    assert charts(views.state(EXERCISES["nopos"])) == [("LINE", "val_loss", None), ("BAR", "val_loss", None),
                                                       ("BAR", "knockout_prev_head_b1", None),
                                                       ("BAR", "shuffle_change", None)]


def test_context_draws_the_loss_by_position_against_the_position_so_that_its_x_axis_is_named():
    first = views.state(EXERCISES["context"])["compareRunCharts"][0]
    assert (first["metricKey"], first["xAxisKey"], first["selectedXAxisMetricKey"]) == \
        ("val_loss_at_position", "metric", "position")
    # a store from before `position` was logged draws it over steps
    panel = views.drawable(views.panels(EXERCISES["context"])[0], {"val_loss_at_position", "val_loss"})
    assert panel.charts[0].x is None and views.title(EXERCISES["context"], panel, panel.charts[0]) == \
        "val_loss_at_position"


def test_scaling_draws_the_loss_against_training_time_and_against_parameters_and_no_count_as_a_bar():
    for name in ("scaling", "scaling002"):
        drawn = charts(views.state(EXERCISES[name]))
        assert ("LINE", "val_loss", "train_time_s") in drawn
        assert ("SCATTER", "val_loss", "n_params") in drawn and ("SCATTER", "val_loss", "train_time_s") in drawn
        assert not {m for kind, m, _ in drawn if kind == "BAR"} & {"n_params", "predicted_params"}, drawn


def test_an_exercise_of_one_variant_has_no_bar_and_its_curve_is_drawn_beside_the_lessons():
    for name in ("baseline", "bigram", "recipe002"):
        assert not [c for c in charts(views.state(EXERCISES[name])) if c[0] == "BAR"], name
    val = views.state(EXERCISES["baseline"])["compareRunCharts"][0]
    assert val["selectedMetricKeys"] == ["val_loss", "lesson_val_loss"]
    assert views.title(EXERCISES["baseline"], views.panels(EXERCISES["baseline"])[0],
                       views.panels(EXERCISES["baseline"])[0].charts[0]) == "val_loss vs lesson_val_loss"


def test_the_lessons_series_are_the_claims_own_numbers():
    ex = EXERCISES["baseline"]
    claimed = {c.ours: c.value for c in ex.claims if c.value is not None and c.ours.startswith("base.val_loss[")}
    assert reference.series(ex) == {("base", "val_loss"): sorted(
        (int(k.split("[")[1].rstrip("]")), float(v)) for k, v in claimed.items())}
    assert [s for s, _ in reference.series(ex)["base", "val_loss"]] == [0, 500, 1000, 1500, 2000, 2500, 3000]
    assert [s for s, _ in reference.series(EXERCISES["recipe002"])["cpu", "val_loss"]] == list(range(250, 2501, 250))
    assert reference.series(EXERCISES["heads"]) == {}


def test_sqrtd_charts_its_one_step_probes_in_a_view_of_their_own():
    ex = EXERCISES["sqrtd"]
    trained, probes = views.panels(ex)
    assert trained.variants == ("scaled", "unscaled") and probes.apart
    assert views.state(ex, trained)["searchFilter"] == (f"{views.SEEDS_ONLY} and tags.variant != 'scaled_d64' and "
                                                       "tags.variant != 'unscaled_d64' and "
                                                       "tags.variant != 'unscaled_d128'")
    st = views.state(ex, probes)
    assert "tags.variant != 'scaled' and tags.variant != 'unscaled'" in st["searchFilter"]
    assert charts(st)[0] == ("BAR", "init_score_std", None) and not [c for c in charts(st) if c[0] == "LINE"]


def test_every_other_metric_is_named_in_a_folded_last_section_so_mlflow_adds_no_chart_before_ours():
    others = {"val_loss": 4, "heads_prev_token_max": 4, "h1_only": 1}
    st = views.state(EXERCISES["heads"], others=others)
    assert charts(st, 1) == [("BAR", "heads_prev_token_max", None), ("LINE", "h1_only", None)]   # one variant: a dot
    assert [s["display"] for s in st["compareRunSections"]] == [True, False]
    assert st["isAccordionReordered"]     # else MLflow sorts the sections by name
    assert st["searchFilter"] == views.SEEDS_ONLY   # the children: no parent as an "Unassigned" group
    # what MLflow would add a chart of: the lesson's series and an axis's metric are charted there too
    assert ("LINE", "lesson_val_loss", None) in charts(views.state(EXERCISES["baseline"]), 1)
    assert ("LINE", "position", None) in charts(views.state(EXERCISES["context"], others={"position": 3}), 1)


def test_two_charts_to_a_row_so_that_a_legend_of_three_long_names_shows_them_all():
    section = views.state(EXERCISES["context"])["compareRunSections"][0]
    assert (section["columns"], section["cardHeight"]) == (views.COLUMNS, views.CARD_HEIGHT) == (2, 300)


def test_a_curve_starts_at_the_first_validation_after_step_0_on_the_range_of_its_values_there():
    s = views.span([[(0, 4.6), (500, 2.0), (1000, 1.6)], [(0, 4.5), (500, 2.1), (1000, 1.5)]])
    assert s["xMin"] == 500 and s["xMax"] == 1000
    assert s["yMin"] == 1.5 - 0.03 and abs(s["yMax"] - 2.13) < 1e-9   # 5% of 1.5-2.1 either side; 4.6 is left out
    assert views.span([[(3000, 2.9)]]) == {"xMin": 3000, "xMax": 3000, "yMin": 2.9 - 0.145, "yMax": 2.9 + 0.145}
    assert views.span([]) == {}
    # by position: every position, and the axis its own (against `position`)
    assert views.span([[(0, 3.3), (1, 2.5), (2, 2.0)]], after_start=False, steps=False) == \
        {"yMin": 2.0 - 0.065, "yMax": 3.3 + 0.065}


def test_the_table_view_leads_with_each_variants_loss_then_each_runs_time_and_what_a_copy_copies():
    cols = views.table_state(EXERCISES["heads"])["selectedColumns"]
    assert cols[:6] == ["tags.`h1/val_loss`", "tags.`h2/val_loss`", "tags.`h4/val_loss`", "tags.`h8/val_loss`",
                        "metrics.`val_loss`", f"metrics.`{views.TRAINING_TIME}`"]
    assert views.table_state(EXERCISES["heads"])["columnOrder"][6] == "duration"
    assert {"tags.`seed`", "tags.`copied_from`", "tags.`source_duration`", "tags.`h8/knockout_head_max`"} <= set(cols)
    cols = views.table_state(EXERCISES["temperature"])["selectedColumns"]   # it trains nothing: no loss of its own
    assert cols[0] == "tags.`t05/word_validity`" and "tags.`t15/word_validity_stripped`" in cols


def test_a_description_is_plain_text():
    text = views.description(EXERCISES["context"])
    assert text.startswith("Context length (lesson 002). Lesson 002: train with block_size=16")
    assert "never learn? Measures:" in text and f"(1) {EXERCISES['context'].claims[0].text}" in text
    assert "*" not in text and "`" not in text


@pytest.mark.parametrize("block,message", [
    ({"lines": "val_loss"}, "ui: lines must be a list of metric names"),
    ({"dots": ["val_loss"]}, "ui: each of dots is 'y against x'"),
    ({"pies": ["val_loss"]}, "ui must name metrics to chart as lines, dots and bars"),
    ({"apart": {"name": "x", "variants": ["h9"]}}, "ui: apart names ['h9']: some but not all of the variants"),
    ({"apart": {"variants": ["h1"]}}, "ui: apart is a view of its own"),
])
def test_a_bad_ui_block_is_one_line_naming_the_form(block, message):
    with pytest.raises(ConfigError) as e:
        exercises.parse("heads", yaml.safe_dump({**yaml.safe_load(HEADS), "ui": block}), "heads.yaml")
    assert message in str(e.value) and "\n" not in str(e.value)


def get(path: str) -> tuple[int, dict, str]:
    """A GET through the ASGI app, as uvicorn sends it (a browser's gzip accepted): status, headers, body."""
    out = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        out.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"host", b"127.0.0.1:5000"), (b"accept-encoding", b"gzip")], "scheme": "http",
             "server": ("127.0.0.1", 5000), "client": ("127.0.0.1", 40000), "http_version": "1.1", "root_path": ""}
    asyncio.run(ui_app.app(scope, receive, send))
    start = next(m for m in out if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, body.decode()


def test_the_page_sets_model_training_and_no_assistant_where_the_browser_has_no_choice_of_its_own():
    status, headers, page = get("/")
    assert status == 200 and page.startswith("<!doctype html><html lang=\"en\"><head><script>")
    assert int(headers["content-length"]) == len(page.encode())
    defaults = json.loads(page.split("d=", 1)[1].split(";for", 1)[0])
    assert defaults == {"mlflow.workflowType_v1": '"machine_learning"',
                        "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "true"}
    assert "if(s.getItem(k)===null)" in page and 'HOME="#/experiments"' in page
    assert get("/health")[2] == "OK"   # everything else is MLflow's own


def test_the_page_sends_mlflows_own_landings_to_the_experiments_list_and_to_each_experiments_charts_view():
    page = get("/")[2]
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]
    # an experiment's bare page goes to its charts view, the one `make ui` prints second
    assert json.dumps(views.route(ui_app.ID)) in script
    assert views.route("4") == f"/experiments/4/{views.RUNS}&compareRunsMode=CHART&viewStateShareKey={views.KEY}"
    # for the experiments MLflow's search finds with that view
    assert ui_app.VIEWS.startswith("ajax-api/2.0/mlflow/experiments/search?") and ui_app.VIEWS in script
    assert "mlflow.sharedViewState.tinygpt-seeds-by-variant" in urllib.parse.unquote_plus(ui_app.VIEWS)
    # a click MLflow's router would take is taken first, in the capture phase
    assert "addEventListener('click'" in script and "},true);" in script


def test_a_view_naming_every_metric_of_a_scaling_run_fits_in_a_tag_and_reads_back():
    saved = {}
    client = type("Client", (), {"set_experiment_tag": lambda self, e, k, v: saved.__setitem__(k, v)})()
    others = [f"heads_metric_number_{i}" for i in range(300)]
    views.save(client, "1", EXERCISES["scaling"], [(views.panels(EXERCISES["scaling"])[0], {}, dict.fromkeys(others, 4))])
    tag = saved[views.PREFIX + views.KEY]
    assert len(tag) < 20_000 and json.loads(tag)["state"].startswith("deflate;")
    st = views.read_state(tag)
    assert [c["metricKey"] for c in st["compareRunCharts"]][-300:] == others
