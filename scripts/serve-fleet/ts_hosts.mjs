// N hosts on the official TypeScript MCP SDK (Client over StreamableHTTPClientTransport), each
// with its own session to `mcp-resilient serve` (or another gateway), calling `echo` and the
// read-only `peek {ms}` in turn until the deadline. A failed call is followed by a ping: a host
// whose ping fails too has lost its session, counts it, opens a new session and goes on.
// Run from target/counterparts-ts (scripts/counterparts/setup-ts.sh):
//   node ../../scripts/serve-fleet/ts_hosts.mjs URL HOSTS SECONDS PEEK_MS
// Prints one JSON object like py_hosts.py. MCP_BEARER and TOOL_PREFIX as in py_hosts.py.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(pathToFileURL(process.cwd() + '/'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');

const [url, hostsText, secondsText, peekText] = process.argv.slice(2);
const HOSTS = parseInt(hostsText, 10);
const deadline = Date.now() + parseFloat(secondsText) * 1000;
const PEEK_MS = parseInt(peekText, 10);
const PREFIX = process.env.TOOL_PREFIX ?? '';
const transportOptions = process.env.MCP_BEARER
    ? { requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_BEARER}` } } }
    : undefined;
// One call may wait out an outage (serve's call wait, 10 s) and more: past this, it is failed.
const CALL_LIMIT_MS = 30000;
const now = () => Date.now() / 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const textOf = (result) => (result.content ?? []).map((c) => c.text ?? '').join('');

const calls = [];
const counts = { sessions_lost: 0, sessions: 0 };

async function host(index) {
    let turn = 0;
    while (Date.now() < deadline) {
        const client = new Client({ name: `ts-host-${index}`, version: '1.0.0' });
        try {
            await client.connect(new StreamableHTTPClientTransport(new URL(url), transportOptions), { timeout: CALL_LIMIT_MS });
            counts.sessions += 1;
            while (Date.now() < deadline) {
                turn += 1;
                const [name, args] = turn % 2 ? ['peek', { ms: PEEK_MS }] : ['echo', { text: `ts${index}-${turn}` }];
                const start = now();
                let result;
                try {
                    result = await client.callTool({ name: PREFIX + name, arguments: args }, undefined, { timeout: CALL_LIMIT_MS });
                } catch (error) {
                    calls.push([`ts${index}`, name, start, now(), 'error', String(error).slice(0, 200)]);
                    await client.ping({ timeout: CALL_LIMIT_MS });
                    continue;
                }
                calls.push([`ts${index}`, name, start, now(), result.isError ? 'tool_error' : 'ok', textOf(result).slice(0, 300)]);
            }
        } catch {
            counts.sessions_lost += 1;
            await sleep(50);
        } finally {
            await client.close().catch(() => {});
        }
    }
}

await Promise.all(Array.from({ length: HOSTS }, (_, i) => host(i)));
process.stdout.write(JSON.stringify({ calls, ...counts }) + '\n');
