// The TypeScript SDK's side of scripts/counterparts/peer-calls.sh: the official client
// (`Client` + `StreamableHTTPClientTransport`) connects once, then makes N sequential
// `tools/call`s, and prints one JSON line of totals, the counterpart of counterpart_calls.rs's.
//
//   cd target/counterparts-ts && node ../../scripts/counterparts/ts/peer_calls.mjs \
//       --url http://127.0.0.1:18751/mcp --tool echo --args '{"message":"hi"}' --calls 1000
//
// `elapsed_ms` is the call loop alone (connect and close excluded), as in counterpart_calls;
// `loop_cpu_ms` is this process's CPU time (user + system, every thread) over the same loop.
// A call counts as ok when it resolves without `isError`; anything else is a failure.
// Run from a folder whose node_modules has the SDK (setup-ts.sh).
// Exit code: 0 when the run completed (whatever the calls did), 2 on a usage error, 3 if the
// connection failed.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

// Resolve the SDK from the working directory, not from this file's folder, as server.mjs does
// (this loads its CommonJS build, compiled from the same source as the ESM one).
const require = createRequire(pathToFileURL(process.cwd() + '/'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');

const opts = { url: null, tool: 'echo', args: { message: 'hi' }, calls: 1000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const [flag, value] = [argv[i], argv[i + 1]];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === '--url') opts.url = value;
  else if (flag === '--tool') opts.tool = value;
  else if (flag === '--args') opts.args = JSON.parse(value);
  else if (flag === '--calls') opts.calls = Number.parseInt(value, 10);
  else usage(`unknown flag ${flag}`);
}
if (!opts.url || !Number.isInteger(opts.calls) || opts.calls < 0) usage('--url and --calls N are needed');

function usage(message) {
  console.error(`peer_calls: ${message}`);
  console.error('usage: peer_calls.mjs --url URL [--tool NAME] [--args JSON] [--calls N]');
  process.exit(2);
}

const started = performance.now();
const transport = new StreamableHTTPClientTransport(new URL(opts.url));
const client = new Client({ name: 'peer-calls', version: '1.0.0' });
try {
  await client.connect(transport);
} catch (error) {
  console.log(JSON.stringify({ error: 'connect failed', detail: String(error) }));
  process.exit(3);
}
const readyMs = performance.now() - started;

let ok = 0;
let toolErrors = 0;
let failed = 0;
let slowest = 0;
let firstError = null;
const cpu0 = process.cpuUsage();
const loop0 = performance.now();
for (let i = 0; i < opts.calls; i++) {
  const t0 = performance.now();
  try {
    const result = await client.callTool({ name: opts.tool, arguments: opts.args });
    if (result.isError) toolErrors += 1;
    else ok += 1;
  } catch (error) {
    failed += 1;
    firstError ??= String(error);
  }
  slowest = Math.max(slowest, performance.now() - t0);
}
const elapsedMs = performance.now() - loop0;
const cpu = process.cpuUsage(cpu0);

const protocol = transport.protocolVersion ?? null;
try {
  await transport.terminateSession();
} catch {
  // A server without sessions, or one already gone: nothing to end.
}
await client.close();
console.log(JSON.stringify({
  calls: opts.calls,
  ok,
  tool_errors: toolErrors,
  failed,
  first_error: firstError,
  protocol,
  ready_ms: Math.round(readyMs),
  elapsed_ms: Number(elapsedMs.toFixed(3)),
  loop_cpu_ms: Number(((cpu.user + cpu.system) / 1000).toFixed(3)),
  slowest_call_ms: Number(slowest.toFixed(3)),
}));
