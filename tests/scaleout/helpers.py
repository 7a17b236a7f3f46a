"""Helpers for the scale-out tests: a real `mlflow server` started as `make ui` starts it, and headless Chromium."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"   # git-ignored: what a browser test saw, kept for a person (and CI) to look at


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`python -m lm.commands.ui` (what `make ui` runs) over a store of its own, on a free loopback port, in a process group
    of its own so that stopping it stops all of it."""

    def __init__(self, store: Path, log: Path):
        self.store, self.port = store, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
        env["TINYGPT_STORE"] = str(store)
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "lm.commands.ui", f"port={self.port}"], cwd=ROOT, env=env,
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def wait(self, timeout: float = 180) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"mlflow server exited with {self.proc.returncode}:\n{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as r:
                    if r.read().strip() == b"OK":
                        return
            except OSError:
                time.sleep(0.5)
        self.stop()
        pytest.fail(f"mlflow server did not answer within {timeout:.0f} s:\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        try:  # the uvicorn worker outlives the CLI by a moment; the group goes with it
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def chromium() -> str:
    """Debian's Chromium, or a skip; with TINYGPT_REQUIRE_BROWSER=1 (CI) a missing browser is a failure."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    message = "no Chromium on PATH (apt-get install chromium)"
    if os.environ.get("TINYGPT_REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; TINYGPT_REQUIRE_BROWSER=1 requires it")
    pytest.skip(message)


# Playwright's Chromium: headless by default, and no machine-wide services a test has no use for.
PLAYWRIGHT_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
_playwright = _browser = None


def shared_browser():
    """One Chromium (through Playwright) for the test module, started at its first use and stopped when the module
    ends (tests/conftest.py). Each look opens a fresh context in it, a new user's profile, for the price of a tab, not
    of a browser's start; and one process never holds two Playwrights at once."""
    global _playwright, _browser
    if _browser is None:
        exe = chromium()   # a one-line skip without it (a failure with TINYGPT_REQUIRE_BROWSER=1)
        sync_api = pytest.importorskip("playwright.sync_api",
                                       reason="playwright is not installed (pip install playwright)")
        _playwright = sync_api.sync_playwright().start()
        _browser = _playwright.chromium.launch(executable_path=exe, args=PLAYWRIGHT_FLAGS)
    return _browser


def stop_shared_browser() -> None:
    """Stops the shared browser and its Playwright, if started. Not to be left to the process's end: while it runs,
    Playwright's event loop is the thread's running loop, and a later test's asyncio.run() refuses to start (CI)."""
    global _playwright, _browser
    if _browser is not None:
        _browser.close()
        _playwright.stop()
        _playwright = _browser = None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1500,1000"]


def browse(url: str, *, dom: bool = False, screenshot: Path | None = None, budget_ms: int = 10000) -> str:
    """Loads the page in headless Chromium, lets its scripts run for budget_ms of virtual time, and returns the
    rendered DOM (dom=True) or writes a PNG."""
    exe = chromium()
    with tempfile.TemporaryDirectory() as profile:
        what = ["--dump-dom"] if dom else [f"--screenshot={screenshot}"]
        out = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
                              *what, url], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        pytest.fail(f"chromium exited with {out.returncode}: {out.stderr[-1500:]}")
    return out.stdout
