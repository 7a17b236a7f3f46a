#!/usr/bin/env bash
# A real team tracking server on this machine, for the tests (tests/server) and CI: Debian's PostgreSQL (a cluster
# of its own, run as the postgres user, on 127.0.0.1 only), a database and a user for MLflow, and `mlflow server`
# on it with an artifact store (--artifacts-destination) and MLflow's basic-auth app (an admin and a test user),
# on 127.0.0.1 only.
#
#   tests/server/pgserver.sh [start]      install PostgreSQL if missing, start what is not running yet
#   tests/server/pgserver.sh stop         stop the MLflow server and PostgreSQL that this script started
#   tests/server/pgserver.sh stop mlflow  stop the MLflow server only (a test restarts it with `start`)
#   tests/server/pgserver.sh status       says whether the server answers (exit 0) or not (exit 1)
#
# The passwords are drawn once and kept in $STATE (mode 600): server.env for the tests (the URL, the test user and
# the database URI), pgpass for the MLflow server (whose database URI carries no password), auth.ini for the
# basic-auth app. Needs root (or sudo) to install and to run PostgreSQL as postgres. Prints one line per thing done,
# never a password.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STATE=${TINYGPT_SERVER_STATE:-/run/tinygpt-server}
PG_PORT=${TINYGPT_PG_PORT:-5433}          # not 5432: a PostgreSQL of the machine's own may be there
PORT=${TINYGPT_SERVER_PORT:-5055}
MLFLOW=${TINYGPT_MLFLOW:-$ROOT/.venv/bin/mlflow}
PYTHON=$(dirname "$MLFLOW")/python
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
DB=tinygpt
DB_USER=tinygpt
URL="http://127.0.0.1:$PORT"

pg_bin() {  # the newest installed PostgreSQL's programs
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] && [ -x "$dir/pg_ctl" ] && echo "$dir"
}

as_postgres() { $SUDO runuser -u postgres -- "$@"; }

answers() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 3 "$URL/health" >/dev/null 2>&1
  else
    "$PYTHON" -c "import urllib.request as u; u.urlopen('$URL/health', timeout=3)" >/dev/null 2>&1
  fi
}

install() {
  pg_bin >/dev/null && return
  echo "installing Debian's postgresql"
  $SUDO apt-get update -qq
  # Debian's scripts would start its own cluster through systemd, absent in containers: this script runs its own.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  pg_bin >/dev/null || { echo "error: postgresql installed, but no pg_ctl under /usr/lib/postgresql" >&2; exit 1; }
}

secrets() {  # drawn once; kept for the tests and the restarts
  $SUDO mkdir -p "$STATE"
  $SUDO chmod 0755 "$STATE"
  umask 077
  local name
  for name in PG_PASSWORD ADMIN_PASSWORD TEST_PASSWORD FLASK_SECRET_KEY; do
    if ! $SUDO grep -qs "^$name=" "$STATE/secrets"; then
      echo "$name=$(head -c 15 /dev/urandom | od -An -tx1 | tr -d ' \n')" | $SUDO tee -a "$STATE/secrets" >/dev/null
      echo "drew $name (kept in $STATE/secrets)"
    fi
  done
  # shellcheck disable=SC1091
  . <($SUDO cat "$STATE/secrets")
}

start_postgres() {
  local bin data=$STATE/pg/data sock=$STATE/pg
  bin=$(pg_bin)
  $SUDO mkdir -p "$sock"   # PostgreSQL's own folder: its data, its socket and its log
  $SUDO chown postgres:postgres "$sock"
  if [ ! -s "$data/PG_VERSION" ]; then
    as_postgres "$bin/initdb" -D "$data" -U postgres --auth-local=peer --auth-host=scram-sha-256 -E UTF8 >/dev/null
    echo "created a PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') cluster in $data"
  fi
  if as_postgres "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    return
  fi
  as_postgres "$bin/pg_ctl" -D "$data" -l "$STATE/pg/postgresql.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $sock" start >/dev/null
  touch "$STATE/postgres.started"
  echo "started PostgreSQL on 127.0.0.1:$PG_PORT (log: $STATE/pg/postgresql.log)"
  local psql="$bin/psql -h $sock -p $PG_PORT -U postgres -qtA"
  if [ -z "$(as_postgres $psql -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'")" ]; then
    # The password through psql's standard input: never on a command line that ps would show.
    printf "CREATE ROLE %s LOGIN PASSWORD '%s';\n" "$DB_USER" "$PG_PASSWORD" | as_postgres $psql >/dev/null
    echo "created the database user $DB_USER"
  fi
  for name in "$DB" "${DB}_auth"; do
    if [ -z "$(as_postgres $psql -c "SELECT 1 FROM pg_database WHERE datname = '$name'")" ]; then
      as_postgres $psql -c "CREATE DATABASE $name OWNER $DB_USER" >/dev/null
      echo "created the database $name"
    fi
  done
}

write_config() {
  umask 077
  # The MLflow server's database URIs carry no password: libpq reads it from PGPASSFILE.
  echo "127.0.0.1:$PG_PORT:*:$DB_USER:$PG_PASSWORD" | $SUDO tee "$STATE/pgpass" >/dev/null
  $SUDO tee "$STATE/auth.ini" >/dev/null <<INI
[mlflow]
default_permission = READ
database_uri = postgresql+psycopg2://$DB_USER@127.0.0.1:$PG_PORT/${DB}_auth
admin_username = admin
admin_password = $ADMIN_PASSWORD
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
# A login checked once a minute, not on every request: each check is a scrypt hash (0.3 s of CPU here), and a run
# makes hundreds of requests (an authenticated request took 1.3 s without this, on this loaded 2-core machine).
auth_cache_ttl_seconds = 60
INI
  $SUDO tee "$STATE/server.env" >/dev/null <<ENV
TINYGPT_SERVER_URL=$URL
TINYGPT_SERVER_USER=tester
TINYGPT_SERVER_PASSWORD=$TEST_PASSWORD
TINYGPT_SERVER_ADMIN=admin
TINYGPT_SERVER_ADMIN_PASSWORD=$ADMIN_PASSWORD
TINYGPT_SERVER_DB=postgresql+psycopg2://$DB_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$DB
ENV
  $SUDO chmod 0644 "$STATE/server.env"   # the tests may run as another user on this machine
}

start_mlflow() {
  if answers; then
    return
  fi
  [ -x "$MLFLOW" ] || { echo "error: no $MLFLOW: build the environment first (make .venv/.installed)" >&2; exit 1; }
  $SUDO mkdir -p "$STATE/artifacts"
  # A process group of its own (setsid), so that stop ends the server and its workers together. The secrets go
  # through the environment, never on a command line that ps would show. No job execution, as `make ui` (lm/commands/
  # ui.py): MLflow's GenAI jobs are nothing this project runs, and their 7 huey consumers took 18 s of CPU at each
  # start (CI of 2026-12-04).
  export PGPASSFILE=$STATE/pgpass MLFLOW_AUTH_CONFIG_PATH=$STATE/auth.ini MLFLOW_FLASK_SERVER_SECRET_KEY=$FLASK_SECRET_KEY
  export MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false
  ${SUDO:+$SUDO --preserve-env=PGPASSFILE,MLFLOW_AUTH_CONFIG_PATH,MLFLOW_FLASK_SERVER_SECRET_KEY,MLFLOW_SERVER_ENABLE_JOB_EXECUTION} \
    setsid "$MLFLOW" server --host 127.0.0.1 --port "$PORT" --workers 1 \
    --backend-store-uri "postgresql+psycopg2://$DB_USER@127.0.0.1:$PG_PORT/$DB" \
    --artifacts-destination "$STATE/artifacts" --app-name basic-auth \
    </dev/null >>"$STATE/mlflow.log" 2>&1 &
  echo $! | $SUDO tee "$STATE/mlflow.started" >/dev/null
  local pid
  pid=$(cat "$STATE/mlflow.started")
  for _ in $(seq 240); do
    answers && break
    kill -0 "$pid" 2>/dev/null || { echo "error: mlflow server exited: $(tail -1 "$STATE/mlflow.log")" >&2; exit 1; }
    sleep 0.5
  done
  answers || { echo "error: mlflow server did not answer on $URL within 120 s (see $STATE/mlflow.log)" >&2; exit 1; }
  echo "started mlflow server on $URL (PostgreSQL store, artifacts in $STATE/artifacts, basic-auth; log: $STATE/mlflow.log)"
}

add_test_user() {  # through the admin's login, as a team's admin would; a user that exists is left as it is
  ADMIN_PASSWORD=$ADMIN_PASSWORD TEST_PASSWORD=$TEST_PASSWORD "$PYTHON" - "$URL" <<'PY'
import base64, json, os, sys, urllib.error, urllib.request
login = base64.b64encode(f"admin:{os.environ['ADMIN_PASSWORD']}".encode()).decode()
req = urllib.request.Request(f"{sys.argv[1]}/api/2.0/mlflow/users/create", method="POST",
                             data=json.dumps({"username": "tester", "password": os.environ["TEST_PASSWORD"]}).encode(),
                             headers={"Authorization": f"Basic {login}", "Content-Type": "application/json"})
try:
    urllib.request.urlopen(req, timeout=30).read()
    print("created the MLflow user tester")
except urllib.error.HTTPError as e:
    if "RESOURCE_ALREADY_EXISTS" not in e.read().decode(errors="replace"):
        sys.exit(f"error: cannot create the MLflow user tester: HTTP {e.code}")
PY
}

start() {
  install
  secrets
  start_postgres
  write_config
  start_mlflow
  add_test_user
  echo "team server running: $URL (users admin and tester; credentials for the tests in $STATE/server.env)"
}

stop_mlflow() {
  [ -f "$STATE/mlflow.started" ] || return 0
  local pid
  pid=$(cat "$STATE/mlflow.started")
  if kill -0 "$pid" 2>/dev/null; then
    $SUDO kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    $SUDO kill -KILL -- "-$pid" 2>/dev/null || true   # its uvicorn workers, should any outlive it
    echo "stopped mlflow server (pid $pid)"
  fi
  $SUDO rm -f "$STATE/mlflow.started"
}

stop_postgres() {
  [ -f "$STATE/postgres.started" ] || return 0
  as_postgres "$(pg_bin)/pg_ctl" -D "$STATE/pg/data" -m fast -w stop >/dev/null 2>&1 && echo "stopped PostgreSQL"
  $SUDO rm -f "$STATE/postgres.started"
}

case "${1:-start}" in
  start) start ;;
  stop) stop_mlflow; [ "${2:-}" = mlflow ] || stop_postgres ;;
  status) if answers; then echo "mlflow server answers on $URL"; else echo "no mlflow server answers on $URL"; exit 1; fi ;;
  *) echo "usage: $0 [start|stop [mlflow]|status]" >&2; exit 2 ;;
esac
