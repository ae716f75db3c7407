#!/usr/bin/env bash
# Stands a fleet of `mcp-resilient serve` up on this machine, for a person to try: one Redis,
# N replicas (default 2) keeping their host sessions in it, nginx in front of them
# (scripts/fleet/nginx.conf.in: session-era requests by Mcp-Session-Id, the rest round-robin),
# and the mock server as the upstream. Everything listens on 127.0.0.1 only, runs in the
# foreground under a temp dir of its own, and stops on Ctrl-C (or SIGTERM); the system's redis
# and nginx services are neither started nor used.
#
#   scripts/fleet.sh [N]          # then point a host at the printed URL
#
# Needs redis-server and nginx on the PATH (scripts/fleet/deps.sh installs them) and a
# built CLI (cargo build -p mcp-resilient-cli; MCP_RESILIENT=path overrides it). Try it: connect
# a host, kill the replica it is on (`kill -9 PID`, the PIDs are printed), and call again.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
N="${1:-2}"
BIN="${MCP_RESILIENT:-$ROOT/target/debug/mcp-resilient}"
for tool in redis-server nginx python3; do
    command -v "$tool" >/dev/null || { echo "fleet.sh: $tool is not on the PATH" >&2; exit 1; }
done
[[ -x "$BIN" ]] || { echo "fleet.sh: no $BIN (cargo build -p mcp-resilient-cli)" >&2; exit 1; }

DIR="$(mktemp -d -t mcp-fleet.XXXXXX)"
pids=()
stop() {
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$DIR"
}
trap stop EXIT INT TERM

# A free loopback port below the kernel's ephemeral range: the kernel never hands such a port
# to a bind to port 0 or to an outgoing connection, so between this check and the process's own
# bind only someone choosing ports by number could take it (a pick of the kernel's could go to
# a busy machine's next connection, or to another program's listener, meanwhile).
free_port() {
    python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(500):
    port = random.randrange(min(10000, low // 2), low)
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
else:
    raise SystemExit("fleet.sh: no free port below the ephemeral range")
PY
}
# Waits (at most 20 s) until 127.0.0.1:$1 accepts connections.
wait_port() {
    local deadline=$((SECONDS + 20))
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        ((SECONDS < deadline)) || { echo "fleet.sh: nothing listens on port $1" >&2; exit 1; }
        sleep 0.1
    done
}

REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$DIR" \
    >"$DIR/redis.log" 2>&1 &
pids+=($!)
wait_port "$REDIS_PORT"

MOCK_PORT="$(free_port)"
"$BIN" mock-server --transport http --port "$MOCK_PORT" >"$DIR/mock.log" 2>&1 &
pids+=($!)
wait_port "$MOCK_PORT"

servers=""
for i in $(seq 1 "$N"); do
    port="$(free_port)"
    replica=("$BIN" serve --listen "127.0.0.1:$port" --store "redis://127.0.0.1:$REDIS_PORT"
        --name mock --transport http --url "http://127.0.0.1:$MOCK_PORT/mcp")
    "${replica[@]}" >"$DIR/replica-$i.log" 2>&1 &
    pids+=($!)
    wait_port "$port"
    echo "replica $i: http://127.0.0.1:$port/mcp (pid ${pids[-1]}, log $DIR/replica-$i.log)"
    echo "  start it again after a kill: ${replica[*]}"
    servers+="        server 127.0.0.1:$port max_fails=0;"$'\n'
done

NGINX_PORT="$(free_port)"
user=""
[[ "$(id -u)" == 0 ]] && user="user root;"
template="$(cat "$ROOT/scripts/fleet/nginx.conf.in")"
template="${template//@DIR@/$DIR}"
template="${template//@PORT@/$NGINX_PORT}"
template="${template//@USER@/$user}"
template="${template//@SERVERS@/$servers}"
printf '%s\n' "$template" >"$DIR/nginx.conf"
nginx -p "$DIR" -c "$DIR/nginx.conf" -e "$DIR/error.log" &
NGINX_PID=$!
pids+=("$NGINX_PID")
wait_port "$NGINX_PORT"

echo "redis: redis://127.0.0.1:$REDIS_PORT   upstream (mock): http://127.0.0.1:$MOCK_PORT/mcp"
echo "the fleet: http://127.0.0.1:$NGINX_PORT/mcp   (Ctrl-C stops everything)"
# Replicas may be killed and started again by hand: the fleet lasts as long as nginx does.
wait "$NGINX_PID" || true
echo "fleet.sh: nginx ended; stopping the rest" >&2
