"""Turns the raw results of run.sh (target/counterparts/) into markdown tables on stdout.

    python summarize.py target/counterparts
"""

import json
import sys
from pathlib import Path


def load(path: Path):
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    if not text:
        return None
    try:
        return json.loads(text.splitlines()[-1])
    except json.JSONDecodeError:
        return None


def lines(path: Path):
    out = []
    try:
        for line in path.read_text().splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    except FileNotFoundError:
        pass
    return out


def fmt_failed(result):
    by = result.get("failed_by") or {}
    if not by:
        return "0"
    return f"{result['failed']} (" + ", ".join(f"{k} {v}" for k, v in by.items()) + ")"


def gens(result):
    return f"{result.get('generation_start')} → {result.get('generation_end')}"


def protocols(events):
    """The protocol revisions the ready events named, in order, without repeats ("–" if none)."""
    seen = []
    for e in events:
        if is_ready(e) and e.get("protocol") and (not seen or seen[-1] != e["protocol"]):
            seen.append(e["protocol"])
    return " → ".join(seen) or "–"


def gateway_totals(path: Path):
    for line in reversed(lines(path)):
        if "injected" in line:
            return line
    return {}


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def section_calls(root: Path, title: str):
    """Experiments a and f: the example behind the HTTP gateway."""
    rows = []
    for result_path in sorted(root.glob("*.json")):
        name = result_path.name[: -len(".json")]
        if "." in name:
            continue
        result = load(result_path)
        if result is None or "calls" not in result:
            # A client that printed no totals did not run: say so, with its first words.
            said = root / f"{name}.events.jsonl"
            first = said.read_text(errors="replace").strip().splitlines()[:1] if said.exists() else []
            why = first[0][:160] if first else "no totals and nothing on stderr"
            rows.append([name, "–", "–", "–", f"**no result**: {why}"] + ["–"] * 6)
            continue
        gw = gateway_totals(root / f"{name}.gw.out")
        rows.append(
            [
                name,
                result.get("protocol") or "–",
                result["calls"],
                result["ok"],
                fmt_failed(result),
                gw.get("injected", "–"),
                gw.get("forwarded", "–"),
                gens(result),
                ", ".join(f"{k} {v}" for k, v in result.get("causes", {}).items()) or "–",
                result.get("slowest_call_ms"),
                result.get("elapsed_ms"),
            ]
        )
    if not rows:
        return ""
    header = ["variant", "protocol", "calls", "ok", "failed", "injected", "forwarded",
              "generation", "causes", "slowest call ms", "elapsed ms"]
    return f"### {title}\n\n" + table(header, rows) + "\n"


def section_probes(root: Path):
    """Experiment a, second part: an idle watch whose pings the gateway answers."""
    rows = []
    for path in sorted(root.glob("*.probes.jsonl")):
        name = path.name[: -len(".probes.jsonl")]
        events = lines(path)
        if not events:
            continue
        gw = gateway_totals(root / f"{name}.gw.out")
        causes = {}
        for e in events:
            if is_loss(e):
                causes[e.get("cause")] = causes.get(e.get("cause"), 0) + 1
        readies = [e["generation"] for e in events if is_ready(e)]
        span = (events[-1]["ts"] - events[0]["ts"]) / 1000
        rows.append([
            name, protocols(events), f"{span:.1f}", gw.get("injected", "–"), gw.get("forwarded", "–"),
            sum(1 for e in events if e.get("event") == "probe_missed"),
            ", ".join(f"{k} {v}" for k, v in causes.items()) or "–",
            f"{readies[0]} → {readies[-1]}" if readies else "never ready",
        ])
    if not rows:
        return ""
    return "### a (probes). Idle `watch`, 300 ms / 100 ms heartbeat, the gateway answers probes\n\n" + table(
        ["variant", "protocol", "watched s", "injected", "forwarded", "probe misses", "losses (cause)",
         "generation"], rows) + "\n"


def message(root: Path, name: str):
    text = ""
    for suffix in ("stderr", "stdout"):
        try:
            text = (root / f"{name}.{suffix}").read_text().strip()
        except FileNotFoundError:
            continue
        if text:
            break
    last = [l for l in text.splitlines() if l.strip()]
    msg = last[-1] if last else ""
    msg = msg.replace("|", "\\|")
    return msg if len(msg) <= 400 else msg[:400] + "…"


def section_b(root: Path):
    rows = []
    for meta_path in sorted(root.glob("*.meta.json")):
        meta = load(meta_path)
        name = meta["case"]
        rows.append([name, meta["rc"], f"{meta['ms'] / 1000:.2f}", f"`{message(root, name)}`"])
    if not rows:
        return ""
    return "### b. Permanent rejections (`mcp-resilient tools`)\n\n" + table(
        ["case", "exit", "wall s", "last line printed"], rows) + "\n"


def state_events(events):
    return [e for e in events if e.get("event") == "state"]


def timeline(events, t0):
    """The state changes, compactly, with times relative to t0 in seconds."""
    parts = []
    for e in events:
        if e.get("event") == "state":
            word = e["state"]
            if e.get("cause"):
                word += f"({e['cause']})"
            parts.append(f"{(e['ts'] - t0) / 1000:+.2f} {word} g{e.get('generation')}")
        elif e.get("event") == "probe_missed":
            parts.append(f"{(e['ts'] - t0) / 1000:+.2f} miss{e.get('misses')}")
        elif e.get("event") == "call_failed":
            parts.append(f"{(e['ts'] - t0) / 1000:+.2f} {e['variant']}")
    return "; ".join(parts)


def first_after(events, ts, pred):
    for e in events:
        if e["ts"] >= ts and pred(e):
            return e
    return None


def is_ready(e):
    return e.get("event") == "state" and e.get("state") == "ready"


def is_loss(e):
    return e.get("event") == "state" and e.get("state") in ("reconnecting", "failed")


def section_outage(root: Path, title: str, fault_word: str, heal_word: str):
    """Experiments d and e: a fault at one mark, a heal at another, events around them."""
    rows = []
    notes = []
    for marks_path in sorted(root.glob("*.marks.jsonl")):
        name = marks_path.name[: -len(".marks.jsonl")]
        marks = lines(marks_path)
        fault = next((m["ts"] for m in marks if m.get("command", m.get("mark")) == fault_word), None)
        heal = next((m["ts"] for m in marks if m.get("command", m.get("mark")) == heal_word), None)
        if fault is None or heal is None:
            continue
        events = lines(root / f"{name}.jsonl") or lines(root / f"{name}.events.jsonl")
        events.sort(key=lambda e: e.get("ts", 0))
        loss = first_after(events, fault, is_loss)
        ready = first_after(events, heal, is_ready)
        result = load(root / f"{name}.json")
        gen_before = max((e["generation"] for e in events if is_ready(e) and e["ts"] < fault), default=None)
        gen_after = max((e["generation"] for e in events if is_ready(e)), default=None)
        rows.append(
            [
                name,
                protocols(events),
                f"{(loss['ts'] - fault) / 1000:.2f} ({loss.get('cause')})" if loss else "none",
                f"{(heal - fault) / 1000:.2f}",
                f"{(ready['ts'] - heal) / 1000:.2f}" if ready else "never",
                f"{gen_before} → {gen_after}",
                sum(1 for e in events if is_loss(e)),
                fmt_failed(result) if result else "–",
            ]
        )
        notes.append(f"- `{name}` (t=0 at {fault_word}): {timeline(events, fault)}")
    if not rows:
        return ""
    header = ["case", "protocol", f"{fault_word} → loss noticed s (cause)", f"{fault_word} → {heal_word} s",
              f"{heal_word} → ready s", "generation", "losses + failed attempts", "calls failed"]
    return f"### {title}\n\n" + table(header, rows) + "\n\nTimelines:\n\n" + "\n".join(notes) + "\n"


def section_c(root: Path):
    rows = []
    for result_path in sorted(root.glob("*.json")):
        name = result_path.name[: -len(".json")]
        if "." in name:
            continue
        result = load(result_path)
        if result is None or "calls" not in result:
            continue
        rows.append([name, result.get("protocol") or "–", result["calls"], result["ok"],
                     fmt_failed(result), gens(result),
                     result.get("probe_missed"),
                     ", ".join(f"{k} {v}" for k, v in result.get("causes", {}).items()) or "–",
                     result.get("slowest_call_ms")])
    out = ""
    if rows:
        out = "### c. Busy: `block(3000)` with a 500 ms / 200 ms heartbeat\n\n" + table(
            ["case", "protocol", "calls", "ok", "failed", "generation", "probe misses", "causes",
             "slowest call ms"], rows) + "\n"
    marks = lines(root / "idle-watcher.marks.jsonl")
    events = lines(root / "idle-watcher.jsonl")
    if marks and events:
        t0 = marks[0]["ts"]
        out += f"\nIdle second client (`watch`, t=0 when the blocking call starts): {timeline(events, t0)}\n"
    return out


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "target/counterparts")
    parts = []
    versions = root / "versions.txt"
    if versions.exists():
        parts.append("```\n" + versions.read_text().strip() + "\n```\n")
    parts.append(section_calls(root / "a", "a. The flaky gateway (Python SDK behind `fault-proxy http`)"))
    parts.append(section_probes(root / "a"))
    parts.append(section_b(root / "b"))
    parts.append(section_c(root / "c"))
    parts.append(section_outage(root / "d", "d. Black hole and heal (`fault-proxy tcp`)", "blackhole", "pass"))
    parts.append(section_outage(root / "d_long", "d (long). Black hole and heal, default call timeout (60 s)", "blackhole", "pass"))
    parts.append(section_outage(root / "e", "e. kill -9 and restart on the same port", "killed", "restarted"))
    parts.append(section_calls(root / "g", "g. stdio: the Python SDK's server as our child, SIGKILLed once"))
    parts.append(section_outage(root / "h", "h. SIGSTOP between calls, SIGCONT 5 s later (Python SDK, Streamable HTTP)", "stopped", "continued"))
    f = root / "f"
    if f.exists():
        parts.append(section_calls(f, "f. TypeScript SDK behind `fault-proxy http`"))
        parts.append(section_b(f).replace("### b. Permanent rejections", "### f. Wrong path"))
        parts.append(section_outage(f, "f. TypeScript SDK: kill -9 and restart", "killed", "restarted"))
    print("\n".join(p for p in parts if p))


if __name__ == "__main__":
    main()
