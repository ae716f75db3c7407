// The status page in headless chromium (run by scripts/status-browser/run.sh, which sets BIN,
// the mcp-resilient binary, and OUT, where the results and the screenshot go).
//
// 1. The mock MCP server (Streamable HTTP) and `serve` in front of it, on 127.0.0.1.
// 2. A host makes a few calls (so the tool table has a row), and keeps its session open.
// 3. Chromium opens /status; the upstream row says ready, generation G.
// 4. The mock is killed (SIGKILL): the row must leave `ready` within 2 s, with no reload.
// 5. The mock is started again on its port: the row must say ready, generation > G, within 2 s
//    of the start, still without a reload; the timeline has its red (down) stretch.
// Every wait has a deadline; every process started here is ended here, by its own handle.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const BIN = process.env.BIN;
const OUT = process.env.OUT;
const LIMIT_MS = 2000;
const started = [];

function launch(args, marker) {
  const child = spawn(BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start in 20 s`)), 20000);
    let seen = "";
    const look = (data) => {
      seen += data.toString();
      const found = seen.match(marker);
      if (found) { clearTimeout(timer); resolve({ child, found }); }
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.on("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${seen}`)));
  });
}

async function mock(port) {
  const { child, found } = await launch(
    ["mock-server", "--transport", "http", "--port", String(port)], /LISTENING 127\.0\.0\.1:(\d+)/);
  return { child, port: Number(found[1]) };
}

function stopped(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    child.once("exit", () => resolve());
  });
}

async function rpc(url, session, body) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25" };
  if (session) { headers["mcp-session-id"] = session; }
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body),
    signal: AbortSignal.timeout(10000) });
  await response.text();
  return response.headers.get("mcp-session-id");
}

async function host(url) {
  const session = await rpc(url, null, { jsonrpc: "2.0", id: 1, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "browser-check", version: "0" } } });
  await rpc(url, session, { jsonrpc: "2.0", method: "notifications/initialized" });
  for (let i = 0; i < 5; i++) {
    await rpc(url, session, { jsonrpc: "2.0", id: 10 + i, method: "tools/call",
      params: { name: "echo", arguments: { text: `call ${i}` } } });
  }
  return session;
}

const row = 'tr[data-upstream="mock"]';
const results = [];
let browser;
let profile;
try {
  let upstream = await mock(0);
  const serve = await launch(["serve", "--listen", "127.0.0.1:0", "--heartbeat-interval", "400ms",
    "--heartbeat-timeout", "150ms", "--reconnect-initial", "20ms", "--reconnect-max", "200ms",
    "--name", "mock", "--url", `http://127.0.0.1:${upstream.port}/mcp`],
    /serving MCP at (http:\/\/127\.0\.0\.1:\d+)\/mcp/);
  const base = serve.found[1];
  await host(`${base}/mcp`);

  profile = mkdtempSync(join(tmpdir(), "status-browser-"));
  // A fresh profile, given as playwright wants it (launchPersistentContext's first argument
  // is chromium's --user-data-dir).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1100, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const page = browser.pages()[0] ?? await browser.newPage();
  const refused = [];
  page.on("console", (m) => { if (m.type() === "error") { refused.push(m.text()); } });
  await page.goto(`${base}/status`);
  await page.waitForFunction((r) => document.querySelector(`${r} td.state`)?.textContent === "ready"
    && document.getElementById("live").textContent.startsWith("live,"), row, { timeout: 10000 });
  const before = Number(await page.textContent(`${row} td.gen`));
  // A reload would lose this mark.
  await page.evaluate(() => { window.notReloaded = true; });
  results.push(`loaded: mock ready, generation ${before}, live feed connected`);

  upstream.child.kill("SIGKILL");
  await stopped(upstream.child);
  const killed = Date.now();
  await page.waitForFunction((r) => document.querySelector(`${r} td.state`)?.textContent !== "ready",
    row, { timeout: LIMIT_MS });
  const down = await page.textContent(`${row} td.state`);
  results.push(`killed: the page said "${down}" after ${Date.now() - killed} ms (limit ${LIMIT_MS} ms)`);

  upstream = await mock(upstream.port);
  const restarted = Date.now();
  await page.waitForFunction(([r, g]) => document.querySelector(`${r} td.state`)?.textContent === "ready"
    && Number(document.querySelector(`${r} td.gen`).textContent) > g, [row, before], { timeout: LIMIT_MS });
  const after = Number(await page.textContent(`${row} td.gen`));
  results.push(`restarted: the page said ready, generation ${after}, after ${Date.now() - restarted} ms (limit ${LIMIT_MS} ms)`);
  const red = await page.locator('#timeline rect[fill="#d33"]').count();
  if (red < 1) { throw new Error("the timeline has no down stretch"); }
  results.push(`timeline: ${red} down stretch(es) drawn`);
  if (!(await page.evaluate(() => window.notReloaded === true))) { throw new Error("the page was reloaded"); }
  results.push("no reload: the page's own state survived");
  if (refused.length) { throw new Error(`console errors (CSP?): ${refused.join("; ")}`); }
  results.push("console: no error (nothing refused by the Content-Security-Policy)");
  // Let the rates settle into the picture, then keep it.
  await page.waitForTimeout(1200);
  await page.screenshot({ path: join(OUT, "status-page.png"), fullPage: true });
  results.push("screenshot: docs/status-page.png");
  const version = execFileSync("/usr/bin/chromium", ["--version"], { stdio: ["ignore", "pipe", "ignore"] })
    .toString().trim();
  writeFileSync(join(OUT, "status-browser-results.md"), [
    "# Status page in a browser",
    "",
    "`scripts/status-browser/run.sh` (headless Debian chromium driven by playwright-core): `serve` in",
    "front of the mock over Streamable HTTP, /status open, the mock killed and started again.",
    "",
    `Run ${new Date().toISOString()}, ${version}: **passed**.`,
    "",
    ...results.map((line) => `- ${line}`),
    "",
    "![the status page after the kill and the recovery](status-page.png)",
    "",
  ].join("\n"));
  console.log(results.join("\n"));
  console.log("status-browser: passed");
} catch (error) {
  console.error(results.join("\n"));
  console.error(`status-browser: FAILED: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (browser) { await browser.close(); }
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) { child.kill("SIGTERM"); await stopped(child); }
  }
  if (profile) { rmSync(profile, { recursive: true, force: true }); }
}
