# Shell helpers of the counterpart scripts (run.sh, peer-calls.sh): sourced, not run.

log() { echo "[$(date +%T)] $*" >&2; }

# up PORT: whether something accepts on 127.0.0.1:PORT.
up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_port PORT SECONDS
wait_port() {
    local deadline=$(($(date +%s) + $2))
    until up "$1"; do
        (($(date +%s) >= deadline)) && return 1
        sleep 0.05
    done
}
