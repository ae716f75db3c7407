#!/usr/bin/env python3
"""The Done-when run of issue 26: a fleet of two `mcp-resilient serve` replicas behind nginx, their
host sessions in Redis, 50 hosts on the official Python and TypeScript SDKs calling through it
while a replica (then the other) is SIGKILLed and started again, or while Redis is down for 30 s.
What the hosts saw is counted. Everything listens on 127.0.0.1; every wait has a deadline; what
the script starts is stopped when it ends, by error too.

    scripts/serve-fleet/fleet.py [--bin B] [--hosts 50] [--seconds 60] [--down 1]
                                 [--kills 2 --first 15 --every 20] [--nginx-conf F]
                                 [--balancer nginx|haproxy] [--haproxy-conf F] [--no-hand-off]
                                 [--redis-down 30] [--only replicas,redis,rolling] [--logs DIR]

Scenarios:
  replicas  `--kills` SIGKILLs, the first at `--first` s and then every `--every` s, of replica A,
            then B, then A...; each is started again on its port `--down` s later (the defaults:
            A at 15 s, B at 35 s)
  rolling   a deploy: replica A is SIGTERMed at `--first` s, drains and exits, and is started
            again at once on its port; B the same at `--first` + `--every` s. Each replica's drain
            time (the signal to its exit) is measured; the replicas run with `--drain-hand-off`
            (unless `--no-hand-off`), so the balancer sends their sessions' new requests to the
            other replica while the calls in flight finish
  redis     redis-server is SIGKILLed at 15 s and started again (empty: it keeps nothing on disk)
            on its port `--redis-down` s later; the replicas must write their sessions again

A call is *in flight* at a kill when it began before the killed process was gone (the script
notes the time before the signal and after the process is reaped) and ended after the signal;
*started after a kill* means begun after the death (for `rolling`, a kill is a SIGTERM and the
death the exit after the drain). The balancer is nginx, scripts/fleet/nginx.conf.in (the tested
configuration; `--nginx-conf` another), or HAProxy, scripts/fleet/haproxy.cfg.in (`--balancer
haproxy`; its log is written in the same form, with only the last server a request went to),
with an access log added: from it, each host session's replica before a kill and the
first request after the kill that was answered, which is the time a moved session took to be
served; and every POST nginx had passed to the killed replica and not finished when it was
killed (*in flight on the killed replica*), by kind of host (its `MCP-Protocol-Version` and
`User-Agent`) and by what nginx answered: `200` (the head was out: the host got a stream that
broke), `502`, or sent again to the other replica (it died before its head). The upstream is the workspace's
mock server over Streamable HTTP; it is never killed here. Needs redis-server, redis-cli, nginx
and haproxy (scripts/fleet/deps.sh) and the SDKs (scripts/serve-fleet/setup.sh, or only the SDKs:
VENV=target/serve-fleet-venv scripts/counterparts/setup.sh and scripts/counterparts/setup-ts.sh). Prints one JSON object per
scenario, then a markdown table (BENCHMARKS.md, "A fleet of serve replicas").
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as common  # noqa: E402  (the single-gateway harness: processes, hosts, ports)

ROOT = common.ROOT


class Fleet:
    """Redis, the mock upstream, two replicas and nginx, in a temp dir of their own."""

    def __init__(self, bin_, dir_, conf, balancer="nginx", flags=()):
        self.bin, self.dir, self.conf = bin_, dir_, conf
        self.balancer, self.flags = balancer, list(flags)
        self.balancer_proc = None
        self.redis_port = common.free_port()
        self.redis = self.start_redis()
        self.mock_port = common.free_port()
        self.mock = common.mock_http(bin_, self.mock_port)
        self.ports = [common.free_port(), common.free_port()]
        self.replicas = [self.start_replica(i) for i in range(2)]
        self.nginx_port = common.free_port()
        if balancer == "haproxy":
            self.start_haproxy()
        else:
            self.start_nginx()
        self.url = f"http://127.0.0.1:{self.nginx_port}/mcp"

    def start_redis(self):
        redis = common.Proc(["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", self.dir], stream="stdout")
        common.STARTED.append(redis)
        common.wait_port(self.redis_port)
        return redis

    def start_replica(self, i):
        replica = common.Proc([self.bin, "serve", "--listen", f"127.0.0.1:{self.ports[i]}", "-v",
                               "--store", f"redis://127.0.0.1:{self.redis_port}",
                               "--url", f"http://127.0.0.1:{self.mock_port}/mcp", *self.flags])
        common.STARTED.append(replica)
        replica.wait_for(r"http://127\.0\.0\.1:\d+/mcp")
        common.wait_ready(f"http://127.0.0.1:{self.ports[i]}/readyz")
        return replica

    def start_nginx(self):
        with open(self.conf) as f:
            template = f.read()
        servers = "".join(f"        server 127.0.0.1:{p} max_fails=0;\n" for p in self.ports)
        log = ("log_format fleet '$msec $request_time $request_method $status "
               "\"$upstream_addr\" \"$http_mcp_session_id\" \"$http_mcp_protocol_version\" "
               "\"$http_user_agent\"';\n"
               f"    access_log {self.dir}/access.log fleet;")
        assert "access_log off;" in template
        conf = (template.replace("access_log off;", log).replace("@DIR@", self.dir)
                .replace("@PORT@", str(self.nginx_port))
                .replace("@USER@", "user root;" if os.getuid() == 0 else "")
                .replace("@SERVERS@", servers))
        path = os.path.join(self.dir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        nginx = common.Proc(["nginx", "-p", self.dir, "-c", path, "-e", f"{self.dir}/error.log"])
        common.STARTED.append(nginx)
        common.wait_port(self.nginx_port)

    def start_haproxy(self):
        with open(self.conf) as f:
            template = f.read()
        servers = "".join(f"    server r{i} 127.0.0.1:{p} check\n" for i, p in enumerate(self.ports))
        log_global = "    log stdout format raw local0 info"
        log_defaults = ('    log global\n    option httplog\n'
                        '    log-format "%Ts.%ms %Ta %HM %ST \\"%si:%sp\\" \\"%[var(txn.session)]\\" '
                        '\\"%[var(txn.version)]\\" \\"%[var(txn.agent)]\\""')
        conf = (template.replace("@LOG_GLOBAL@", log_global).replace("@LOG_DEFAULTS@", log_defaults)
                .replace("@PORT@", str(self.nginx_port)).replace("@SERVERS@", servers))
        path = os.path.join(self.dir, "haproxy.cfg")
        with open(path, "w") as f:
            f.write(conf)
        haproxy = common.Proc(["haproxy", "-db", "-f", path], stream="stdout")
        common.STARTED.append(haproxy)
        self.balancer_proc = haproxy
        common.wait_port(self.nginx_port)

    def write_access_log(self):
        """HAProxy's log lines, in nginx's form (the end in s, the time taken in s)."""
        if self.balancer_proc is None:
            return
        with open(os.path.join(self.dir, "access.log"), "w") as f:
            for line in list(self.balancer_proc.lines):
                m = HAPROXY_LINE.match(line)
                if not m:
                    continue
                start, took_ms, rest = m.groups()
                took = int(took_ms) / 1000 if took_ms.lstrip("-").isdigit() and int(took_ms) >= 0 else 0
                rest = rest.replace('"-"', '""')
                f.write(f"{float(start) + took:.3f} {took:.3f} {rest}\n")

    def held_in_redis(self):
        out = subprocess.run(["redis-cli", "-p", str(self.redis_port), "--scan", "--pattern",
                              "mcp-resilient:host:*"], capture_output=True, text=True, timeout=10)
        return len([line for line in out.stdout.splitlines() if line.strip()])

    def access_log(self):
        rows = []
        with open(os.path.join(self.dir, "access.log")) as f:
            for line in f:
                m = LOG_LINE.match(line.rstrip("\n"))
                if not m:
                    continue
                msec, took, method, status, upstream, session, version, agent = m.groups()
                upstreams = [u.strip() for u in upstream.split(",")]
                rows.append({"end": float(msec), "start": float(msec) - float(took),
                             "method": method, "status": status, "upstream": upstreams[-1],
                             "upstreams": upstreams, "session": session,
                             "kind": host_kind(version, agent)})
        return rows


HAPROXY_LINE = re.compile(r'^(\d+\.\d+) (-?\d+) (.*)$')
LOG_LINE = re.compile(r'^(\S+) (\S+) (\S+) (\S+) "([^"]*)" "([^"]*)" "([^"]*)" "([^"]*)"$')


def host_kind(version, agent):
    """The kind of host a request came from: its revision's header, else its HTTP client."""
    if version.startswith("2026"):
        return "py 2026-07-28"
    return "py 2025-11-25" if "python" in agent.lower() else "ts 2025-11-25"


def on_killed(rows, kills, drained=False):
    """The POSTs nginx had passed to a killed replica and not finished at its death, by kind of
    host and by what nginx did with them."""
    out = {}
    for signalled, port, dead in kills:
        if port is None:
            continue
        for r in rows:
            if r["method"] != "POST" or not (r["start"] < dead and r["end"] > signalled):
                continue
            if not any(u.endswith(f":{port}") for u in r["upstreams"]):
                continue
            if r["upstream"].endswith(f":{port}"):
                if r["status"] == "200":
                    what = "answered there (200)" if drained else "stream broke (head out)"
                else:
                    what = f"balancer {r['status']}"
            else:
                what = f"sent again to the other replica: {r['status']}"
            kind = out.setdefault(r["kind"], {})
            kind[what] = kind.get(what, 0) + 1
    return out


def outcome(call):
    """What a host saw of one call, in a word."""
    if call[4] == "ok":
        return "answered"
    if call[4] == "tool_error" and "may have run" in call[5]:
        return "may have run"
    return f"{call[4]}: {' '.join(call[5].split())[:100]}"


def moved(rows, kill, port):
    """Per host session on the replica at `port` before `kill`: seconds from the kill to the end
    of its first request begun after the kill and answered 200, and how long that request took
    (the takeover, as the request saw it); with how many sessions had none."""
    before = {}
    for r in rows:
        if r["session"] and r["method"] == "POST" and r["start"] < kill:
            before[r["session"]] = r["upstream"]
    on_it = {s for s, up in before.items() if up.endswith(f":{port}")}
    served, took = {}, {}
    for r in sorted(rows, key=lambda r: r["end"]):
        s = r["session"]
        if s in on_it and s not in served and r["method"] == "POST" and r["start"] >= kill \
                and r["status"] == "200":
            served[s] = r["end"] - kill
            took[s] = r["end"] - r["start"]
    return len(on_it), sorted(served.values()), len(on_it) - len(served), sorted(took.values())


def call_kind(call):
    return ("py 2026-07-28" if call[0].startswith("py26")
            else ("py 2025-11-25" if call[0].startswith("py") else "ts 2025-11-25"))


def analyse(name, data, kills, fleet, extra):
    calls = data["calls"]
    ok = [c for c in calls if c[4] == "ok"]
    failed = [c for c in calls if c[4] != "ok"]
    in_flight = [c for c in calls if any(c[2] < dead and c[3] > k for k, _, dead in kills)]
    after = [c for c in calls if any(c[2] >= dead for _, _, dead in kills) and c not in in_flight]
    rows = fleet.access_log()
    moves = []
    for k, port, _ in kills:
        if port is not None:
            count, times, unserved, took = moved(rows, k, port)
            moves.append({"sessions_on_killed": count, "unserved": unserved,
                          "served_p50_s": round(common.percentile(times, 0.5), 3) if times else None,
                          "served_max_s": round(max(times), 3) if times else None,
                          "first_request_p50_ms": round(1000 * common.percentile(took, 0.5), 1) if took else None,
                          "first_request_max_ms": round(1000 * max(took), 1) if took else None})
    result = {
        "scenario": name,
        "host_sessions_opened": data["sessions"],
        "sessions_lost": data["sessions_lost"],
        "calls": len(calls),
        "ok": len(ok),
        "failed": len(failed),
        "may_have_run": sum(1 for c in calls if outcome(c) == "may have run"),
        "failed_examples": sorted({f"{c[1]}: {c[5][:140]}" for c in failed})[:6],
        "started_after_a_kill": len(after),
        "of_which_answered": sum(1 for c in after if c[4] == "ok"),
        "in_flight_at_a_kill": len(in_flight),
        "in_flight_answered": sum(1 for c in in_flight if c[4] == "ok"),
        "in_flight_failed_saw": sorted({f"{c[1]}: {c[4]}: {c[5][:140]}" for c in in_flight
                                        if c[4] != "ok"})[:6],
        "moves": moves,
        "replica_takeovers_logged": sum(
            sum(1 for line in r.lines if "served here from now on" in line) for r in fleet.replicas),
    }
    by_era = {}
    for c in calls:
        era = call_kind(c)
        e = by_era.setdefault(era, {"calls": 0, "ok": 0, "in_flight_at_a_kill": {}})
        e["calls"] += 1
        e["ok"] += c[4] == "ok"
        if c in in_flight:
            seen = e["in_flight_at_a_kill"]
            seen[outcome(c)] = seen.get(outcome(c), 0) + 1
    result["by_host_kind"] = by_era
    result["kills"] = len(kills)
    result["on_killed_replica_by_nginx"] = on_killed(rows, kills, drained=name == "rolling")
    result.update(extra)
    return result


def run_scenario(name, args):
    try:
        with tempfile.TemporaryDirectory(prefix="mcp-fleet-run.") as dir_:
            return scenario(name, args, dir_)
    finally:
        common.stop_started()


def at(started, offset):
    time.sleep(max(0.0, started + offset - time.time()))


def scenario(name, args, dir_):
    conf = args.haproxy_conf if args.balancer == "haproxy" else args.nginx_conf
    flags = [] if args.no_hand_off or name != "rolling" else ["--drain-hand-off"]
    fleet = Fleet(args.bin, dir_, conf, args.balancer, flags)
    procs = common.hosts(fleet.url, args.hosts, args.seconds, args.peek_ms, mixed=True)
    started = time.time()
    kills, extra = [], {}
    if name == "replicas":
        for n in range(args.kills):
            i, offset = n % 2, args.first + n * args.every
            at(started, offset)
            old = fleet.replicas[i]
            signalled = time.time()
            old.stop(signal.SIGKILL)
            # A request nginx passed on between the signal and the death was in flight too.
            kills.append((signalled, fleet.ports[i], time.time()))
            time.sleep(args.down)
            fleet.replicas.append(old)  # its log lines still count
            fleet.replicas[i] = fleet.start_replica(i)
        extra["replica_restart_s"] = args.down
    elif name == "rolling":
        drains = []
        for i in range(2):
            at(started, args.first + i * args.every)
            old = fleet.replicas[i]
            signalled = time.time()
            old.stop(signal.SIGTERM, limit=120.0)
            exited = time.time()
            drains.append({"replica": "AB"[i], "drain_s": round(exited - signalled, 3),
                           "exit_code": old.proc.returncode})
            kills.append((signalled, fleet.ports[i], exited))
            fleet.replicas.append(old)  # its log lines still count
            fleet.replicas[i] = fleet.start_replica(i)
        extra["drains"] = drains
        extra["hand_off"] = bool(flags)
    elif name == "redis":
        at(started, 10.0)
        extra["held_before"] = fleet.held_in_redis()
        at(started, 15.0)
        signalled = time.time()
        fleet.redis.stop(signal.SIGKILL)
        kills.append((signalled, None, time.time()))
        at(started, 15.0 + args.redis_down)
        fleet.redis = fleet.start_redis()
        extra["redis_down_s"] = args.redis_down
        at(started, 15.0 + args.redis_down + 5.0)
        extra["held_5s_after_return"] = fleet.held_in_redis()
        extra["warned"] = sum(1 for r in fleet.replicas for line in r.lines
                              if "WARN" in line and "edis" in line)
        extra["rewritten_logged"] = sum(1 for r in fleet.replicas for line in r.lines
                                        if "written again" in line)
    data = common.collect(procs, args.seconds + 120)
    fleet.write_access_log()
    result = analyse(name, data, kills, fleet, extra)
    result["balancer"] = args.balancer
    if args.logs:
        # What a person reads after the run: nginx's access log and each replica's log.
        out = os.path.join(args.logs, name)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(dir_, "access.log")) as f, open(os.path.join(out, "access.log"), "w") as g:
            g.write(f.read())
        for n, replica in enumerate(fleet.replicas):
            with open(os.path.join(out, f"replica-{n}.log"), "w") as g:
                g.write("\n".join(replica.lines) + "\n")
        with open(os.path.join(out, "calls.json"), "w") as g:
            json.dump({"kills": kills, "calls": data["calls"]}, g)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "mcp-resilient"))
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--down", type=float, default=1.0, help="seconds a killed replica stays down")
    parser.add_argument("--kills", type=int, default=2, help="replica kills (A, B, A, ...)")
    parser.add_argument("--first", type=float, default=15.0, help="seconds to the first kill")
    parser.add_argument("--every", type=float, default=20.0, help="seconds between kills")
    parser.add_argument("--nginx-conf", default=os.path.join(ROOT, "scripts", "fleet", "nginx.conf.in"))
    parser.add_argument("--haproxy-conf", default=os.path.join(ROOT, "scripts", "fleet", "haproxy.cfg.in"))
    parser.add_argument("--balancer", choices=["nginx", "haproxy"], default="nginx")
    parser.add_argument("--no-hand-off", action="store_true",
                        help="rolling: the replicas drain without --drain-hand-off")
    parser.add_argument("--redis-down", type=float, default=30.0)
    parser.add_argument("--peek-ms", type=int, default=300)
    parser.add_argument("--only", default="replicas,redis")
    parser.add_argument("--logs", help="a directory to keep the run's logs in (one folder per scenario)")
    args = parser.parse_args()
    results = []
    for name in args.only.split(","):
        result = run_scenario(name, args)
        print(json.dumps(result), flush=True)
        results.append(result)
    print()
    print("| scenario | balancer | host sessions lost | calls | failed | \"may have run\" | started after a kill: answered "
          "| in flight at a kill: answered | moved sessions (unserved) | kill → moved session served, p50 / max "
          "| its first request, p50 / max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        moves = r["moves"]
        moved_n = " + ".join(f"{m['sessions_on_killed']} ({m['unserved']})" for m in moves) or "—"
        served = ", ".join(f"{m['served_p50_s']} / {m['served_max_s']} s" for m in moves) or "—"
        first = ", ".join(f"{m['first_request_p50_ms']} / {m['first_request_max_ms']} ms" for m in moves) or "—"
        print(f"| {r['scenario']} | {r['balancer']} | {r['sessions_lost']} | {r['calls']} | {r['failed']} "
              f"| {r['may_have_run']} "
              f"| {r['of_which_answered']} of {r['started_after_a_kill']} "
              f"| {r['in_flight_answered']} of {r['in_flight_at_a_kill']} | {moved_n} | {served} | {first} |")
    for r in results:
        for d in r.get("drains", []):
            print(f"\n{r['scenario']} ({r['balancer']}): replica {d['replica']} drained in "
                  f"{d['drain_s']} s, exit {d['exit_code']}", end="")
    print("\n")
    print("| scenario | kind of host | calls in flight at a kill: what the host saw "
          "| POSTs in flight on the killed replica: what nginx did |")
    print("|---|---|---|---|")
    for r in results:
        nginx = r.get("on_killed_replica_by_nginx", {})
        for kind, e in sorted(r["by_host_kind"].items()):
            saw = "; ".join(f"{n} {what}" for what, n in sorted(e["in_flight_at_a_kill"].items(),
                                                               key=lambda kv: -kv[1])) or "—"
            did = "; ".join(f"{n} {what}" for what, n in sorted(nginx.get(kind, {}).items(),
                                                               key=lambda kv: -kv[1])) or "—"
            print(f"| {r['scenario']} | {kind} | {saw} | {did} |")


if __name__ == "__main__":
    sys.exit(main())
