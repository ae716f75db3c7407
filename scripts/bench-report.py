#!/usr/bin/env python3
"""Renders BENCHMARKS.md and the plots under docs/bench/ from bench/results/*.json.

    python3 scripts/bench-report.py           # write BENCHMARKS.md and docs/bench/*.svg
    python3 scripts/bench-report.py --check   # regenerate in memory; exit 1 if anything differs

Each file under bench/results/ is one area (call overhead, detection, ...) in the shape the
benchmark writes to target/bench/results.json (cli/benches/resilience/stats.rs): `meta` and
`rows`, each row with `section`, `name`, `unit`, `n`, `failed`, `errors`, `median`, `p99`, `min`,
`max`, `target`, `target_met` and `note`. An area's `meta` adds what the benchmark does not know:
`area`, `order`, `title`, `measured` (the date), `mode`, `conditions`, `reproduce` (the command),
and optionally `columns` (the row keys to show, in order), `headers` and `notes`. Rows may carry
more keys (`p90`, `measured` when a row is older than the area's date, per-kind columns). A fresh
run's rows for a section can replace an area's rows as they are; keep the area's `meta`.

Python 3 standard library only. The plots are plain SVG written here, deterministic, so the
committed files can be compared byte for byte.
"""

import json
import os
import re
import sys
from html import escape

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join(ROOT, "bench", "results")
PLOTS = os.path.join(ROOT, "docs", "bench")
DOC = os.path.join(ROOT, "BENCHMARKS.md")

HEADERS = {
    "name": "figure", "unit": "unit", "n": "n", "failed": "failed", "median": "median",
    "p90": "p90", "p99": "p99", "min": "min", "max": "max", "target": "target",
    "measured": "measured", "note": "note",
}
DEFAULT_COLUMNS = ["name", "unit", "n", "failed", "median", "p99", "target", "note"]


def load():
    areas = []
    for name in sorted(os.listdir(RESULTS)):
        if name.endswith(".json"):
            with open(os.path.join(RESULTS, name), encoding="utf-8") as f:
                data = json.load(f)
            data["meta"].setdefault("area", name[:-5])
            data["meta"].setdefault("title", data["meta"]["area"])
            areas.append(data)
    areas.sort(key=lambda a: (a["meta"].get("order", 999), a["meta"]["area"]))
    return areas


def slug(heading):
    """GitHub's anchor for a heading (the same rule as scripts/links.py)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def num(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 1000 else str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return num(int(v))
        return f"{v:.6g}"
    return str(v)


def cell(row, key, meta):
    v = row.get(key)
    if key == "target":
        if not v:
            return ""
        met = row.get("target_met")
        return v if met is None else ("met: " if met else "missed: ") + v
    if key == "note":
        note = v or ""
        when = row.get("measured")
        if when and when != meta.get("measured") and "measured" not in columns_of(meta):
            note = f"{note} (measured {when})" if note else f"measured {when}"
        return note
    if key == "measured":
        return v or meta.get("measured", "")
    if v is None:
        return "–"
    if isinstance(v, list):
        return ", ".join(num(x) for x in v)
    return num(v)


def columns_of(meta):
    return meta.get("columns") or DEFAULT_COLUMNS


def table(area):
    meta, rows = area["meta"], area["rows"]
    cols = columns_of(meta)
    heads = {**HEADERS, **meta.get("headers", {})}
    out = ["| " + " | ".join(heads.get(c, c) for c in cols) + " |",
           "|" + "---|" * len(cols)]
    for row in rows:
        cells = [cell(row, c, meta).replace("|", "\\|").replace("\n", " ") for c in cols]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# SVG

FONT = 'font-family="sans-serif" font-size="11"'
COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1"]


def plain(text):
    """Markdown's code and emphasis marks left out of a label."""
    return text.replace("`", "").replace("*", "")


def f2(x):
    return f"{x:.1f}"


def nice_max(v):
    if v <= 0:
        return 1.0
    exp = 10 ** len(str(int(v))) / 10 if v >= 1 else 10 ** -len(str(int(1 / v)))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def svg(width, height, body, title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {FONT}>\n'
            f'<title>{escape(title)}</title>\n'
            f'<rect width="{width}" height="{height}" fill="white"/>\n'
            f'<text x="{width / 2:.0f}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>\n'
            + "".join(body) + "</svg>\n")


def legend(series, x, y):
    out = []
    for i, name in enumerate(series):
        out.append(f'<rect x="{x}" y="{y + i * 16}" width="10" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>'
                   f'<text x="{x + 14}" y="{y + i * 16 + 9}">{escape(name)}</text>\n')
    return out


def hbars(title, unit, categories, series, values):
    """Horizontal grouped bars: values[c][s] (None: no bar). Each bar is labelled."""
    categories = [plain(c) for c in categories]
    label_w, plot_w, bar_h = max(120, round(6.2 * max(len(c) for c in categories)) + 12), 420, 11
    group_h = bar_h * len(series) + 8
    top = 34 + 16 * len(series)
    height = top + group_h * len(categories) + 34
    width = label_w + plot_w + 70
    vmax = nice_max(max(v for row in values for v in row if v is not None))
    body = legend(series, label_w, 28)
    for t in range(5):
        x = label_w + plot_w * t / 4
        body.append(f'<line x1="{f2(x)}" y1="{top - 4}" x2="{f2(x)}" y2="{height - 30}" stroke="#ddd"/>'
                    f'<text x="{f2(x)}" y="{height - 16}" text-anchor="middle">{num(round(vmax * t / 4, 6))}</text>\n')
    body.append(f'<text x="{label_w + plot_w / 2:.0f}" y="{height - 3}" text-anchor="middle">{escape(unit)}</text>\n')
    for ci, cat in enumerate(categories):
        y0 = top + ci * group_h
        body.append(f'<text x="{label_w - 6}" y="{f2(y0 + group_h / 2)}" text-anchor="end">{escape(cat)}</text>\n')
        for si, v in enumerate(values[ci]):
            if v is None:
                continue
            y = y0 + si * bar_h
            w = plot_w * v / vmax
            body.append(f'<rect x="{label_w}" y="{f2(y)}" width="{f2(w)}" height="{bar_h - 1}" '
                        f'fill="{COLOURS[si % len(COLOURS)]}"/>'
                        f'<text x="{f2(label_w + w + 3)}" y="{f2(y + bar_h - 2)}" font-size="9">{num(v)}</text>\n')
    return svg(width, height, body, title)


def stacked(title, unit, categories, phases, values):
    """Horizontal stacked bars: values[c][p] in order of phases; the total is labelled."""
    categories = [plain(c) for c in categories]
    label_w, plot_w, bar_h = max(120, round(6.2 * max(len(c) for c in categories)) + 12), 460, 18
    top = 34 + 16
    height = top + (bar_h + 10) * len(categories) + 34
    width = label_w + plot_w + 80
    vmax = nice_max(max(sum(v for v in row if v) for row in values))
    body = []
    for i, name in enumerate(phases):
        x = label_w + i * 150
        body.append(f'<rect x="{x}" y="28" width="10" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>'
                    f'<text x="{x + 14}" y="37">{escape(name)}</text>\n')
    for t in range(5):
        x = label_w + plot_w * t / 4
        body.append(f'<line x1="{f2(x)}" y1="{top - 4}" x2="{f2(x)}" y2="{height - 30}" stroke="#ddd"/>'
                    f'<text x="{f2(x)}" y="{height - 16}" text-anchor="middle">{num(round(vmax * t / 4, 6))}</text>\n')
    body.append(f'<text x="{label_w + plot_w / 2:.0f}" y="{height - 3}" text-anchor="middle">{escape(unit)}</text>\n')
    for ci, cat in enumerate(categories):
        y = top + ci * (bar_h + 10)
        body.append(f'<text x="{label_w - 6}" y="{f2(y + bar_h - 5)}" text-anchor="end">{escape(cat)}</text>\n')
        x = label_w
        for pi, v in enumerate(values[ci]):
            if not v:
                continue
            w = plot_w * v / vmax
            body.append(f'<rect x="{f2(x)}" y="{y}" width="{f2(w)}" height="{bar_h}" fill="{COLOURS[pi % len(COLOURS)]}"/>\n')
            x += w
        total = sum(v for v in values[ci] if v)
        body.append(f'<text x="{f2(x + 4)}" y="{f2(y + bar_h - 5)}" font-size="9">{num(round(total, 3))}</text>\n')
    return svg(width, height, body, title)


def lines(title, xlabel, ylabel, xs, series):
    """Lines with markers: series = [(name, [y per x])], x on a linear axis."""
    left, top, plot_w, plot_h = 60, 40 + 16 * len(series), 460, 220
    width, height = left + plot_w + 120, top + plot_h + 44
    ymax = nice_max(max(y for _, ys in series for y in ys if y is not None))
    xmin, xmax = 0, nice_max(max(xs))
    body = legend([s for s, _ in series], left + 10, 28)

    def px(x):
        return left + plot_w * (x - xmin) / (xmax - xmin)

    def py(y):
        return top + plot_h - plot_h * y / ymax

    for t in range(5):
        y = ymax * t / 4
        body.append(f'<line x1="{left}" y1="{f2(py(y))}" x2="{left + plot_w}" y2="{f2(py(y))}" stroke="#ddd"/>'
                    f'<text x="{left - 4}" y="{f2(py(y) + 4)}" text-anchor="end">{num(round(y, 6))}</text>\n')
    for x in xs:
        body.append(f'<text x="{f2(px(x))}" y="{top + plot_h + 16}" text-anchor="middle">{num(x)}</text>\n')
    body.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#888"/>\n')
    body.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle">{escape(xlabel)}</text>\n')
    body.append(f'<text x="14" y="{top + plot_h / 2:.0f}" text-anchor="middle" '
                f'transform="rotate(-90 14 {top + plot_h / 2:.0f})">{escape(ylabel)}</text>\n')
    for si, (name, ys) in enumerate(series):
        colour = COLOURS[si % len(COLOURS)]
        pts = [(px(x), py(y), y) for x, y in zip(xs, ys) if y is not None]
        body.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>\n'
                    % (colour, " ".join(f"{f2(a)},{f2(b)}" for a, b, _ in pts)))
        for a, b, y in pts:
            # Labels of different series side by side, in their colour, so that close points
            # do not print over each other.
            body.append(f'<circle cx="{f2(a)}" cy="{f2(b)}" r="3.5" fill="{colour}"/>'
                        f'<text x="{f2(a + 6 + 28 * si)}" y="{f2(b - 5)}" font-size="9" fill="{colour}">{num(y)}</text>\n')
    return svg(width, height, body, title)


# ---------------------------------------------------------------------------------------------
# The plots, by area. Each returns [(file name, alt text, svg)]; rows are found by their keys.

def by(area):
    return {r["name"]: r for r in area["rows"]}


def plot_calls(area):
    rows = [r for r in area["rows"] if r["unit"] == "ms" and r.get("median") is not None and r.get("p99") is not None]
    if not rows:
        return []
    when = rows[0].get("measured", area["meta"].get("measured"))
    body = hbars(f"tools/call echo latency, p50 and p99 (full mode, {when})", "ms",
                 [r["name"] for r in rows], ["p50", "p99"], [[r["median"], r["p99"]] for r in rows])
    return [("calls-latency.svg", "Call latency p50 and p99 per transport, supervised and raw rmcp", body)]


def plot_recovery(area):
    rows = [r for r in area["rows"] if r.get("phase")]
    if not rows:
        return []
    scenarios, phases = [], ["backoff", "handshake", "first call"]
    for r in rows:
        if r["scenario"] not in scenarios:
            scenarios.append(r["scenario"])
    values = [[next((r["median"] for r in rows if r["scenario"] == s and r["phase"] == p), None) for p in phases]
              for s in scenarios]
    when = rows[0].get("measured", area["meta"].get("measured"))
    body = stacked(f"From detection to the first successful call, medians ({when}, backoff 200 ms)", "ms",
                   scenarios, ["backoff (wait)", "spawn / handshake", "first call"], values)
    return [("recovery-timeline.svg", "Recovery timeline per scenario: backoff, handshake, first call", body)]


def plot_proxy(area):
    rows = [r for r in area["rows"] if r.get("p90") is not None]
    if not rows:
        return []
    when = rows[0].get("measured", area["meta"].get("measured"))
    body = hbars(f"tools/call echo through the proxy and directly, p50 / p90 / p99 ({when})", "µs",
                 [r["name"] for r in rows], ["p50", "p90", "p99"], [[r["median"], r["p90"], r["p99"]] for r in rows])
    return [("proxy-latency.svg", "Proxy and direct call latency, p50 p90 p99", body)]


def plot_scale(area, areas):
    out = []
    rows = [r for r in area["rows"] if r.get("n_conn")]
    kinds = [("http2025", "HTTP 2025-11-25"), ("http2026", "HTTP 2026-07-28"), ("sse", "legacy SSE")]
    if len(rows) >= 2:
        rows.sort(key=lambda r: r["n_conn"])
        body = lines("Start-up CPU per connection against N (same build)", "connections (N)",
                     "ms of client CPU per connection", [r["n_conn"] for r in rows],
                     [(label, [r.get(k) for r in rows]) for k, label in kinds])
        out.append(("scale-startup-cpu.svg", "Start-up CPU per connection at N = 2,000 and 10,000", body))
    idle = next((a for a in areas if a["meta"]["area"] == "idle"), None)
    big = by(area).get("RSS per idle connection, N = 10,000")
    if idle and big:
        small = by(idle)
        http = small.get("http N=1000: resident memory per connection")
        sse = small.get("sse N=1000: resident memory per connection")
        if http and sse:
            body = lines("RSS per idle connection against N (one full run; heartbeat 1 s at 1,000, 30 s at 10,000)", "connections (N)",
                         "KiB per connection", [1000, 10000],
                         [("HTTP 2025-11-25", [http["median"], big["http2025"]]),
                          ("legacy SSE", [sse["median"], big["sse"]])])
            out.append(("scale-memory.svg", "RSS per idle connection at N = 1,000 and 10,000", body))
    return out


def plot_serve(area):
    rows = [r for r in area["rows"] if r.get("side")]
    if not rows:
        return []
    body = hbars("echo with 1,000 host sessions, 100 calling, 1,000 calls/s: p50 and p99", "ms",
                 [r["side"] for r in rows], ["p50", "p99"], [[r["median"], r["p99"]] for r in rows])
    return [("serve-latency.svg", "Latency straight to the mock and through serve, p50 and p99", body)]


def plot_serve_kills(area):
    rows = [r for r in area["rows"] if r.get("schedule", "").startswith("35 s apart, 2025")]
    rows = [r for r in rows if isinstance(r.get("recovery"), list)]
    if not rows:
        return []
    kills = max(len(r["recovery"]) for r in rows)
    body = hbars("Recovery per kill, five upstream kills 35 s apart, 50 hosts", "s (kill → first successful call begun after it)",
                 [r["name"] for r in rows], [f"kill {i + 1}" for i in range(kills)],
                 [r["recovery"] + [None] * (kills - len(r["recovery"])) for r in rows])
    return [("serve-kills-recovery.svg", "Recovery per kill for each gateway", body)]


PLOTTERS = {
    "calls": lambda a, _: plot_calls(a),
    "recovery": lambda a, _: plot_recovery(a),
    "proxy": lambda a, _: plot_proxy(a),
    "scale": plot_scale,
    "serve": lambda a, _: plot_serve(a),
    "serve-kills": lambda a, _: plot_serve_kills(a),
}


# ---------------------------------------------------------------------------------------------

def machine_line(m):
    parts = [f"{m.get('cpus')} vCPUs ({m.get('cpu_model')})"]
    for key, fmt in (("memory", "{}"), ("kernel", "Linux {}"), ("nofile_soft_hard", "`ulimit -n` {}"),
                     ("rustc", "rustc {}"), ("profile", "{} profile unless said")):
        if m.get(key):
            parts.append(fmt.format(m[key]))
    return ", ".join(parts)


def render(areas):
    svgs = {}
    doc = ["# Benchmarks", "",
           "What the resilience layer costs, and how fast it notices a failure and recovers, measured",
           "against the workspace's mock server on 127.0.0.1 and, where they exist, against the clients",
           "and gateways people use. Each table holds the newest figures of its area; how they got there",
           "is in the git history of `bench/results/`.", "",
           "This file and the plots in `docs/bench/` are generated by `python3 scripts/bench-report.py`",
           "from `bench/results/*.json` (one file per area, in the shape the benchmark writes to",
           "`target/bench/results.json`). Edit the JSON, then run the script; CI runs it with `--check`.", "",
           "## Machine and conditions", "",
           machine_line(areas[0]["meta"].get("machine", {})) + ".",
           "Other builds often shared the two cores; each area says whether its machine was idle or",
           "loaded. Quick runs made while compilers ran differed by up to 35 % on the HTTP 16-way",
           "figures, so treat single-digit-percent differences as noise. Every measured call is",
           "checked (no error, no `isError`, the echo came back); failed repetitions are counted in",
           "`failed`, never dropped. CPU and memory are read from `/proc` of a process that holds only",
           "the client; the mock server is a process of its own.", "",
           "The benchmark itself:", "",
           "```sh",
           "cargo bench --bench resilience -- --quick    # under 2 minutes of measuring on 2 cores",
           "cargo bench --bench resilience               # full mode: 15 call rounds, 25 faults per scenario, 30 s idle windows",
           "cargo bench --bench resilience -- --only calls,faults   # a subset: calls, faults, idle, storm, verdicts, era, proxy, auth, hostile, scale, serve",
           "```", "",
           "## Areas", ""]
    for area in areas:
        doc.append(f"- [{area['meta']['title']}](#{slug(area['meta']['title'])})")
    doc.append("")
    for area in areas:
        meta = area["meta"]
        doc += [f"## {meta['title']}", ""]
        doc.append(f"Measured {meta.get('measured', '?')}, mode: {meta.get('mode', '?')}. {meta.get('conditions', '')}".rstrip())
        doc.append("")
        if meta.get("reproduce"):
            doc += ["```sh", meta["reproduce"], "```", ""]
        doc += [table(area), ""]
        plotter = PLOTTERS.get(meta["area"])
        for name, alt, body in (plotter(area, areas) if plotter else []):
            svgs[name] = body
            doc += [f"![{alt}](docs/bench/{name})", ""]
        for note in meta.get("notes", []):
            doc += [note, ""]
    return "\n".join(doc).rstrip() + "\n", svgs


def main():
    check = "--check" in sys.argv[1:]
    text, svgs = render(load())
    wanted = {DOC: text, **{os.path.join(PLOTS, n): b for n, b in svgs.items()}}
    if check:
        bad = []
        for path, body in sorted(wanted.items()):
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != body:
                        bad.append(f"{os.path.relpath(path, ROOT)}: differs from what bench/results/ renders")
            except FileNotFoundError:
                bad.append(f"{os.path.relpath(path, ROOT)}: missing")
        if os.path.isdir(PLOTS):
            for name in sorted(os.listdir(PLOTS)):
                if name.endswith(".svg") and os.path.join(PLOTS, name) not in wanted:
                    bad.append(f"docs/bench/{name}: not rendered from bench/results/ (stale)")
        for line in bad:
            print(f"bench-report: {line}", file=sys.stderr)
        if bad:
            print("bench-report: run `python3 scripts/bench-report.py` and commit the result", file=sys.stderr)
            return 1
        print(f"bench-report: BENCHMARKS.md and {len(svgs)} plots match bench/results/")
        return 0
    os.makedirs(PLOTS, exist_ok=True)
    for path, body in wanted.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    print(f"bench-report: wrote BENCHMARKS.md and {len(svgs)} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
