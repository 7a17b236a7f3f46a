"""What `make ui` shows, without a browser: the saved views built from each exercise's YAML (lm/tracking/views.py),
and the page lm/commands/ui_app.py serves (MLflow's own, with its first-visit defaults set)."""
import asyncio
import json

from lm.commands import ui_app
from lm.spec import exercises
from lm.tracking import views

EXERCISES = exercises.load_all()


def charts(st):
    return [(c["type"], c["metricKey"]) for c in st["compareRunCharts"]]


def test_the_charts_view_leads_with_the_exercises_own_comparison():
    assert charts(views.state(EXERCISES["heads"]))[:2] == [("LINE", "val_loss"), ("BAR", "val_loss")]
    assert ("BAR", "knockout_head_max") in charts(views.state(EXERCISES["heads"]))
    assert charts(views.state(EXERCISES["temperature"]))[0] == ("BAR", "word_validity")   # it trains nothing
    assert charts(views.state(EXERCISES["context"]))[0] == ("LINE", "val_loss_at_position")
    # without a ui: block, the validation curve and what the claims read
    assert ("BAR", "n_params") in charts(views.state(EXERCISES["scaling"]))


def test_every_other_metric_is_named_in_a_folded_last_section_so_mlflow_adds_no_chart_before_ours():
    st = views.state(EXERCISES["heads"], others=["val_loss", "heads_prev_token_max", "h1/val_loss_mean"])
    folded = st["compareRunSections"][1]["uuid"]
    rest = [c["metricKey"] for c in st["compareRunCharts"] if c["metricSectionId"] == folded]
    assert rest == ["heads_prev_token_max", "h1/val_loss_mean"]          # val_loss has its chart already
    assert [s["display"] for s in st["compareRunSections"]] == [True, False]
    assert st["isAccordionReordered"]     # else MLflow sorts the sections by name
    assert st["searchFilter"] == views.SEEDS_ONLY   # the children: no parent as an "Unassigned" group


def test_a_curve_starts_at_the_first_validation_after_step_0_on_the_range_of_its_values_there():
    s = views.span([[(0, 4.6), (500, 2.0), (1000, 1.6)], [(0, 4.5), (500, 2.1), (1000, 1.5)]])
    assert s["xMin"] == 500 and s["xMax"] == 1000
    assert s["yMin"] == 1.5 - 0.03 and abs(s["yMax"] - 2.13) < 1e-9   # 5% of 1.5-2.1 either side; 4.6 is left out
    assert views.span([[(3000, 2.9)]]) == {"xMin": 3000, "xMax": 3000, "yMin": 2.9 - 0.145, "yMax": 2.9 + 0.145}
    assert views.span([]) == {}


def test_the_table_view_shows_each_variants_summary_the_training_time_and_the_seed():
    cols = views.table_state(EXERCISES["temperature"])["selectedColumns"]
    assert "tags.`t05/word_validity`" in cols and "tags.`t15/word_validity_stripped`" in cols
    assert f"metrics.`{views.TRAINING_TIME}`" in cols and "tags.`seed`" in cols


def test_a_description_is_plain_text():
    text = views.description(EXERCISES["context"])
    assert text.startswith("Context length (lesson 002). Lesson 002: train with block_size=16")
    assert "never learn? Measures:" in text and f"(1) {EXERCISES['context'].claims[0].text}" in text
    assert "*" not in text and "`" not in text


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
    assert "if(s.getItem(k)===null)" in page and "location.replace('#/experiments')" in page
    assert get("/health")[2] == "OK"   # everything else is MLflow's own


def test_a_view_naming_every_metric_of_a_scaling_run_fits_in_a_tag_and_reads_back():
    saved = {}
    client = type("Client", (), {"set_experiment_tag": lambda self, e, k, v: saved.__setitem__(k, v)})()
    others = [f"heads_metric_number_{i}" for i in range(300)]
    views.save(client, "1", EXERCISES["scaling"], others=others)
    tag = saved[views.PREFIX + views.KEY]
    assert len(tag) < 20_000 and json.loads(tag)["state"].startswith("deflate;")
    st = views.read_state(tag)
    assert [c["metricKey"] for c in st["compareRunCharts"]][-300:] == others
