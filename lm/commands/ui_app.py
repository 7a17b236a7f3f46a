"""MLflow's tracking server, its page opening on the project's runs: what `make ui` serves (`mlflow server
--app-name tinygpt`, registered in pyproject.toml under MLflow's `mlflow.app` entry points).

MLflow 3.17's UI keeps two first-visit choices in the browser, with no server option or environment variable for
either (read in its JavaScript, mlflow/server/js/build): the sidebar's GenAI / model-training switch
(localStorage `mlflow.workflowType_v1`, "genai" unless set: the home page and every experiment open on GenAI pages),
and the assistant panel, which opens by itself on a first visit to a server on localhost
(`mlflow.assistant.fab.autoOpenedOnFirstLoad_v1`). The page this app serves sets both, where the browser has no
value of its own, before MLflow's scripts read them: the person who switches to GenAI or opens the assistant keeps
that choice.

What an experiment opens on is the runs page's URL alone: its table unless `compareRunsMode=CHART`, its state the
saved view `viewStateShareKey` names, else the state the browser kept for that experiment
(`MLflowLocalStorage-1.1-ExperimentPage-["<id>"]-ReactComponentState`), else MLflow's defaults; no experiment tag
and no server option chooses (MLflow 3.17's JavaScript; its saved views, lm/tracking/views.py, open only from their
menu or a link). So the page also sends MLflow's own landings elsewhere: the bare address and the sidebar's Home
(MLflow's welcome page) to the experiments list, and an experiment's bare page (a click in that list, its name in a
run's breadcrumbs) to its charts view, for an experiment that has one (MLflow's REST API says which, once a page).
A link MLflow follows inside the page is a click on an `<a href="#/...">`, handled by its router: the script takes
the click first, in the capture phase, and goes to the address it sends it to. An address with a query of its own
(the person's filters, another view) is MLflow's. Everything else is MLflow's own app, unchanged.
"""
import json
from urllib.parse import urlencode

from mlflow.server.fastapi_app import app as mlflow_app

from lm.tracking import views

WORKFLOW = "mlflow.workflowType_v1"
ASSISTANT_SHOWN = "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1"
DEFAULTS = {WORKFLOW: json.dumps("machine_learning"), ASSISTANT_SHOWN: json.dumps(True)}
FIRST_PAGE = "#/experiments"
ID = "{id}"
# Every experiment with a charts view: its tag's key in a filter of MLflow's search (backquoted: it has dots).
VIEWS = "ajax-api/2.0/mlflow/experiments/search?" + urlencode(
    {"max_results": 1000, "filter": f"tags.`{views.PREFIX}{views.KEY}` LIKE '%'"})
# The page's query parameters that say nothing of the runs: an address with no other is MLflow's bare landing.
BARE = ("workflowType", "workspace")
SCRIPT_SOURCE = """(function(){
var s=window.localStorage,d=%(defaults)s;
for(var k in d){if(s.getItem(k)===null)s.setItem(k,d[k]);}
var HOME=%(home)s,CHARTS=%(charts)s,BARE=%(bare)s,known=null;
function charted(){if(!known)known=fetch(%(api)s).then(function(r){return r.json();}).then(function(j){
var ids={};(j.experiments||[]).forEach(function(e){ids[e.experiment_id]=true;});return ids;})
.catch(function(){return {};});return known;}
function landing(h,first){if(h==='#/'||(first&&(!h||h==='#')))return {home:true};
var m=/^#\\/experiments\\/(\\d+)(?:\\/runs)?\\/?(?:\\?(.*))?$/.exec(h);if(!m)return null;
var q=new URLSearchParams(m[2]||''),own=false;q.forEach(function(v,k){if(BARE.indexOf(k)<0)own=true;});
return own?null:{id:m[1]};}
function go(l,how,fallback){if(l.home){window.location[how](HOME);return;}
charted().then(function(ids){var to=ids[l.id]?'#'+CHARTS.replace(%(id)s,l.id):fallback;
if(to&&to!==window.location.hash)window.location[how](to);});}
var first=landing(window.location.hash,true);if(first)go(first,'replace',null);else charted();
document.addEventListener('click',function(e){
if(e.defaultPrevented||e.button!==0||e.metaKey||e.ctrlKey||e.shiftKey||e.altKey)return;
var a=e.target&&e.target.closest?e.target.closest('a[href]'):null;if(!a||a.target==='_blank')return;
var h=a.getAttribute('href'),l=landing(h);if(!l||(h.charAt(0)!=='#'))return;
e.preventDefault();e.stopPropagation();go(l,'assign',h);},true);
})();"""
SCRIPT = ("<script>" + SCRIPT_SOURCE.replace("\n", "") % {
    "defaults": json.dumps(DEFAULTS), "home": json.dumps(FIRST_PAGE), "charts": json.dumps(views.route(ID)),
    "bare": json.dumps(list(BARE)), "api": json.dumps(VIEWS), "id": json.dumps(ID)} + "</script>").encode()
PAGES = ("/", "/index.html")


class App:
    """An ASGI app: MLflow's, with the page (index.html) carrying SCRIPT first in its head. A class, not a function:
    `mlflow server` would take a function for a factory."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] not in PAGES:
            return await self.inner(scope, receive, send)
        # The page uncompressed, so that it can be read and changed here.
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]
        start, body = {}, []

        async def keep(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.append(message.get("body", b""))
                if not message.get("more_body"):
                    await send_page(b"".join(body))
            else:
                await send(message)

        async def send_page(page: bytes):
            html = dict(start.get("headers", [])).get(b"content-type", b"").startswith(b"text/html")
            if html and b"<head>" in page:
                page = page.replace(b"<head>", b"<head>" + SCRIPT, 1)
            out = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*out, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.inner({**scope, "headers": headers}, receive, keep)


app = App(mlflow_app)
