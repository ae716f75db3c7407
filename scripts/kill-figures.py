#!/usr/bin/env python3
"""Issue 24's two first rows, as a new user would see them: `watch --json` on one mock server,
then REPS times: `kill -9` of the mock (SETTLE s, default 0.5, after the last ready), the loss
line's arrival; OUTAGE s later the mock is started again on the same port, and from the moment
its port accepts (and from its launch) to the ready line. Loopback only; every wait bounded.

    scripts/kill-figures.py target/release/mcp-resilient 2025-11-25|2026-07-28|sse REPS OUTAGE_S
"""
import json, os, signal, socket, subprocess, sys, threading, time, queue

BIN, PROTO, REPS, OUTAGE = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
PORT = 18000 + os.getpid() % 1000

def mock():
    p = subprocess.Popen([BIN, "mock-server", "--transport", "sse" if PROTO == "sse" else "http", "--port", str(PORT)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.readline()
    return p

def listening():
    while True:
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", PORT)); return time.time()
        except OSError:
            time.sleep(0.001)
        finally:
            s.close()

server = mock()
args = ["--url", f"http://127.0.0.1:{PORT}/sse", "--transport", "sse"] if PROTO == "sse" else ["--url", f"http://127.0.0.1:{PORT}/mcp", "--protocol", PROTO]
w = subprocess.Popen([BIN, "watch", *args, "--json"],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put((time.time(), l)) for l in w.stdout], daemon=True).start()

def until(pred, limit=60):
    end = time.time() + limit
    while True:
        t, l = lines.get(timeout=max(0.01, end - time.time()))
        try: e = json.loads(l)
        except ValueError: continue
        if pred(e): return t, e

until(lambda e: e.get("state") == "ready")
loss, back = [], []
for i in range(REPS):
    time.sleep(float(os.environ.get("SETTLE", "0.5")))
    k = time.time(); server.send_signal(signal.SIGKILL); server.wait()
    t, e = until(lambda e: e.get("state") in ("reconnecting", "failed"))
    loss.append((t - k) * 1000)
    time.sleep(OUTAGE)
    launch = time.time(); server = mock(); up = listening()
    t, e = until(lambda e: e.get("state") == "ready")
    back.append(((t - up) * 1000, (t - launch) * 1000, e.get("generation")))
    print(f"rep {i}: loss {loss[-1]:.0f} ms ({e.get('protocol')}), listening->ready {back[-1][0]:.0f} ms, launch->ready {back[-1][1]:.0f} ms", flush=True)
w.send_signal(signal.SIGINT); server.kill()
loss.sort(); lr = sorted(b[0] for b in back); la = sorted(b[1] for b in back)
m = lambda xs: xs[len(xs)//2]
print(f"{PROTO}: loss median {m(loss):.0f} ms max {max(loss):.0f}; listening->ready median {m(lr):.0f} max {max(lr):.0f}; launch->ready median {m(la):.0f} max {max(la):.0f}")
