"""The team-server tests run against a real PostgreSQL and a real `mlflow server` with MLflow's basic-auth app on this
machine (tests/server/pgserver.sh starts them, as CI's .ci/run does). Where none answers they are skipped, in one
line that says why; with TINYGPT_REQUIRE_SERVER=1 (CI, once the script has started one) that is a failure instead."""
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "pgserver.sh"
STATE = Path(os.environ.get("TINYGPT_SERVER_STATE", "/run/tinygpt-server"))


@dataclass
class TeamServer:
    """The running server as the tests see it: its URL, the test user's login, the admin's, and the PostgreSQL
    database's URI (with its password, as a user who points MLFLOW_TRACKING_URI at the database would give it)."""
    url: str
    user: str
    password: str
    admin: str
    admin_password: str
    db: str

    @property
    def secrets(self) -> list[str]:
        """What must never be shown or stored: every password the server's users and database have."""
        return [self.password, self.admin_password, urllib.parse.urlsplit(self.db).password]

    def login_uri(self, password: str | None = None) -> str:
        """The server's URL with the test user's login in it: http://tester:PASSWORD@127.0.0.1:PORT."""
        return self.url.replace("://", f"://{self.user}:{password or self.password}@", 1)

    def script(self, *args: str) -> str:
        out = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"pgserver.sh {' '.join(args)} exited {out.returncode}: {out.stderr[-2000:]}"
        return out.stdout


def settings() -> dict[str, str]:
    with open(STATE / "server.env") as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line)


def why_not() -> str | None:
    """None when the team server answers here; else why not, in a few words."""
    if not (shutil.which("pg_ctlcluster") or list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))):
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if not (STATE / "server.env").is_file():
        return f"no team server was started here ({STATE}/server.env is missing)"
    try:
        with urllib.request.urlopen(f"{settings()['TINYGPT_SERVER_URL']}/health", timeout=5) as r:
            r.read()
    except OSError as e:
        return f"the team server does not answer ({getattr(e, 'reason', e)})"
    return None


def pytest_collection_modifyitems(config, items):
    """Where no team server answers, each test here is skipped with one reason, which pytest's summary folds into one
    line (unless TINYGPT_REQUIRE_SERVER=1: then the `team_server` fixture fails them)."""
    here = [item for item in items if HERE in item.path.parents]
    if here and (why := why_not()) and os.environ.get("TINYGPT_REQUIRE_SERVER") != "1":
        skip = pytest.mark.skip(reason=f"team server tests skipped: {why}; start one with tests/server/pgserver.sh")
        for item in here:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def team_server() -> TeamServer:
    why = why_not()
    if why:
        pytest.fail(f"{why}; TINYGPT_REQUIRE_SERVER=1 requires the team server tests (tests/server/pgserver.sh "
                    f"starts one)")
    s = settings()
    return TeamServer(s["TINYGPT_SERVER_URL"], s["TINYGPT_SERVER_USER"], s["TINYGPT_SERVER_PASSWORD"],
                      s["TINYGPT_SERVER_ADMIN"], s["TINYGPT_SERVER_ADMIN_PASSWORD"], s["TINYGPT_SERVER_DB"])
