"""MLflow's tracking server, its page opening on the project's runs: what `make ui` serves (`mlflow server
--app-name tinygpt`, registered in pyproject.toml under MLflow's `mlflow.app` entry points).

MLflow 3.17's UI keeps two first-visit choices in the browser, with no server option or environment variable for
either (read in its JavaScript, mlflow/server/js/build): the sidebar's GenAI / model-training switch
(localStorage `mlflow.workflowType_v1`, "genai" unless set: the home page and every experiment open on GenAI pages),
and the assistant panel, which opens by itself on a first visit to a server on localhost
(`mlflow.assistant.fab.autoOpenedOnFirstLoad_v1`). The page this app serves sets both, where the browser has no
value of its own, before MLflow's scripts read them, and sends the bare address to the experiments list: the person
who switches to GenAI or opens the assistant keeps that choice. Everything else is MLflow's own app, unchanged.
"""
import json

from mlflow.server.fastapi_app import app as mlflow_app

WORKFLOW = "mlflow.workflowType_v1"
ASSISTANT_SHOWN = "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1"
DEFAULTS = {WORKFLOW: json.dumps("machine_learning"), ASSISTANT_SHOWN: json.dumps(True)}
FIRST_PAGE = "#/experiments"
SCRIPT = ("<script>(function(){var s=window.localStorage,d=%s;"
          "for(var k in d){if(s.getItem(k)===null)s.setItem(k,d[k]);}"
          "var h=window.location.hash;if(!h||h==='#'||h==='#/')window.location.replace('%s');})();</script>"
          % (json.dumps(DEFAULTS), FIRST_PAGE)).encode()
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
