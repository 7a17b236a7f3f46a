"""The report's attention view: pick a run, a block, a head and a line; hover a character to see its attention
over the earlier characters, highlighted on the text itself (CircuitsVis-style, in plain JavaScript).

Everything is embedded in the page: each run's weights (its attention_lines.json, else the one heatmap line of
attention.json) quantised to one byte (weight × 255, rounded: within 0.002 of the stored weight), only the causal
triangle when the model has the mask, deflated and base64-encoded; the browser inflates them with its own
DecompressionStream. Runs with identical weights (the suite's twins) share one copy.
"""
import base64
import hashlib
import itertools
import json
import zlib

import numpy as np

from analysis.report.document import Doc
from analysis.store_reading.reader import ExerciseRuns

TITLE = "Explore the attention"


def lines_of(er: ExerciseRuns, run_id: str) -> dict | None:
    """{mask, lines: [{name, chars, weights}]}: attention_lines.json, else attention.json's one line."""
    data = er.reader.json(run_id, "attention_lines.json")
    if data:
        return data
    one = er.reader.json(run_id, "attention.json")
    if not one:
        return None
    mask = np.allclose(np.triu(np.asarray(one["weights"][0][0], float), 1), 0)
    return {"mask": bool(mask), "lines": [{"name": "heatmap line", "chars": one["chars"], "weights": one["weights"]}]}


def pack(data: dict) -> bytes:
    """Every weight as a byte, line by line, block by block, head by head, query by query; with the mask a
    query's row holds only the keys up to itself."""
    rows = (row[: q + 1] if data["mask"] else row
            for line in data["lines"] for block in line["weights"] for head in block for q, row in enumerate(head))
    weights = np.fromiter(itertools.chain.from_iterable(rows), float)   # quantised at once, not row by row
    # zlib's default level: level 9 costs a noticeable part of a report for blobs barely smaller.
    return zlib.compress(np.clip(np.rint(weights * 255), 0, 255).astype(np.uint8).tobytes())


# The runs a variant shows in the view: its lowest seeds. Every run's attention in the page would make a sweep's report
# grow with its seeds (a store of 10,000 runs: an artifact read for each, a quarter of the report's time) for a view
# that is for looking, not for statistics (the head tables and the knock-out read every seed).
SEEDS_SHOWN = 3


def shown(er: ExerciseRuns) -> list[str]:
    """The runs of the exercise the view shows: each variant's first SEEDS_SHOWN seeds."""
    return er.finished.groupby("variant", sort=False).head(SEEDS_SHOWN)["run_id"].tolist()  # by variant, then seed


def payload(runs: dict[str, ExerciseRuns]) -> dict:
    items, blobs, index = [], [], {}
    for name, er in runs.items():
        if er.exercise.init_from:
            continue  # the same models as the exercise it samples
        picked = er.finished[er.finished["run_id"].isin(shown(er))]
        er.reader.prefetch(artifacts=[(r, "attention_lines.json") for r in picked["run_id"]])
        for run in picked[["run_id", "variant", "seed"]].itertuples():
            data = lines_of(er, run.run_id)
            if not data:
                continue
            blob = pack(data)
            key = hashlib.sha256(blob).hexdigest()
            if key not in index:
                index[key] = len(blobs)
                blobs.append(base64.b64encode(blob).decode())
            first = data["lines"][0]["weights"]
            items.append({"exercise": name, "label": f"{name} / {run.variant} / seed {run.seed}", "run_id": run.run_id,
                          "blocks": len(first), "heads": len(first[0]), "mask": bool(data["mask"]),
                          "lines": [{"name": ln["name"], "chars": "".join(ln["chars"])} for ln in data["lines"]],
                          "blob": index[key]})
    return {"runs": items, "blobs": blobs}


SCRIPT = """
(function () {
  const data = JSON.parse(document.getElementById("av-data").textContent);
  const view = document.getElementById("av"), runSel = document.getElementById("av-run"),
        lineSel = document.getElementById("av-line"), headsDiv = document.getElementById("av-heads"),
        text = document.getElementById("av-text"), note = document.getElementById("av-note");
  const cache = {};
  let run = null, weights = null, block = 1, head = 1, hovered = null;
  // The runs grouped by exercise, as the report's sections are.
  const groups = {};
  data.runs.forEach((r, i) => {
    if (!groups[r.exercise]) {
      groups[r.exercise] = document.createElement("optgroup");
      groups[r.exercise].label = r.exercise;
      runSel.append(groups[r.exercise]);
    }
    groups[r.exercise].append(new Option(r.label, i));
  });

  async function inflate(b64) {
    const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }
  function rowSize(T, q) { return run.mask ? q + 1 : T; }
  function headSize(T) { return run.mask ? T * (T + 1) / 2 : T * T; }
  // Where line l, block b, head h, query q starts in the run's bytes.
  function offset(l, b, h, q) {
    let o = 0;
    for (let i = 0; i < l; i++) o += run.blocks * run.heads * headSize(run.lines[i].chars.length);
    const T = run.lines[l].chars.length;
    o += ((b - 1) * run.heads + (h - 1)) * headSize(T);
    return o + (run.mask ? q * (q + 1) / 2 : q * T);
  }
  function show(q) {
    hovered = q;
    const l = +lineSel.value, T = run.lines[l].chars.length, spans = text.children;
    const start = q === null ? 0 : offset(l, block, head, q);
    for (let k = 0; k < T; k++) {
      const s = spans[k];
      s.classList.toggle("av-q", k === q);
      if (q === null || k >= rowSize(T, q)) {
        s.style.background = ""; delete s.dataset.w; s.title = ""; continue;
      }
      const w = weights[start + k] / 255;
      s.style.background = "rgba(214, 39, 40, " + w.toFixed(3) + ")";
      s.dataset.w = w.toFixed(3);
      s.title = (100 * w).toFixed(1) + "%";
    }
    note.textContent = q === null ? "Hover a character: the earlier characters it reads light up." :
      "block " + block + ", head " + head + ": character " + (q + 1) + " (" + JSON.stringify(run.lines[l].chars[q]) +
      ") reads its heaviest key at " + (100 * Math.max(...Array.from(spans).map(s => +(s.dataset.w || 0)))).toFixed(0) + "%";
  }
  function drawText() {
    const chars = run.lines[+lineSel.value].chars;
    text.replaceChildren(...Array.from(chars, (c, k) => {
      const s = document.createElement("span");
      s.textContent = c === "\\n" ? "\\u23ce" : c;
      s.dataset.i = k;
      s.addEventListener("mouseover", () => show(k));
      return s;
    }));
    show(hovered !== null && hovered < chars.length ? hovered : null);
  }
  function drawHeads() {
    headsDiv.replaceChildren();
    for (let b = 1; b <= run.blocks; b++) {
      const row = document.createElement("div");
      row.append("block " + b + ": ");
      for (let h = 1; h <= run.heads; h++) {
        const btn = document.createElement("button");
        btn.textContent = "head " + h;
        btn.dataset.block = b; btn.dataset.head = h;
        btn.className = b === block && h === head ? "on" : "";
        btn.addEventListener("click", () => { block = b; head = h; drawHeads(); show(hovered); });
        row.append(btn);
      }
      headsDiv.append(row);
    }
  }
  async function pick() {
    view.dataset.ready = "";
    run = data.runs[+runSel.value];
    const l = lineSel.value;
    lineSel.replaceChildren(...run.lines.map((ln, i) => new Option(ln.name + ": " + ln.chars.replace(/\\n/g, "\\u23ce"), i)));
    lineSel.value = l && +l < run.lines.length ? l : 0;
    if (block > run.blocks || head > run.heads) { block = 1; head = 1; }
    weights = cache[run.blob] || (cache[run.blob] = await inflate(data.blobs[run.blob]));
    drawHeads(); drawText();
    view.dataset.ready = "1";
  }
  runSel.addEventListener("change", pick);
  lineSel.addEventListener("change", drawText);
  if (data.runs.length) pick();
})();
"""

STYLE = """<style>
.av label { margin-right: 1.5em; }
.av select { max-width: 42em; }
.av button { margin: 2px; padding: 1px 8px; border: 1px solid #bbb; background: #fafafa; border-radius: 3px; }
.av button.on { background: #d62728; color: white; border-color: #d62728; }
.av-text { font: 22px/1.9 ui-monospace, monospace; white-space: pre; margin: 0.6em 0; padding: 0.3em;
           border: 1px solid #ddd; overflow-x: auto; }
.av-text span { padding: 0 1px; cursor: default; }
.av-text span.av-q { outline: 2px solid #1f77b4; }
</style>"""


def section(doc: Doc, runs: dict[str, ExerciseRuns]) -> None:
    doc.h(2, TITLE)
    data = payload(runs)
    if not data["runs"]:
        doc.p("Not run: no finished run in this store logged its attention (attention_lines.json).")
        return
    doc.p("Pick a run, a head and a line (the lessons' heatmap line, validation lines, or the induction test: a "
          "random string repeated, where an induction head reads the character that followed the current one the "
          "first time). Hover a character: each earlier character is shaded by the weight the head puts on it. "
          f"Weights are stored to the nearest 1/255. Each variant shows its first {SEEDS_SHOWN} seeds.")
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    body = (f"{STYLE}<div id='av' class='av'><p><label>Run <select id='av-run'></select></label>"
            f"<label>Line <select id='av-line'></select></label></p><div id='av-heads'></div>"
            f"<div id='av-text' class='av-text'></div><p id='av-note'></p></div>"
            f"<script type='application/json' id='av-data'>{blob}</script><script>{SCRIPT}</script>")
    doc.raw(body, f"The interactive attention view ({len(data['runs'])} runs) is in report.html: pick a run, a head "
                  f"and a line, and hover a character.")
