// A host written by others in front of `mcp-resilient proxy`: the official TypeScript SDK's Client
// over StdioClientTransport launches the proxy as a host launches any stdio server, with the
// TypeScript SDK's own server (server.mjs) upstream over Streamable HTTP. The upstream is
// SIGKILLed and restarted while the host's session stays open; then the host leaves with a call in
// flight on a blocked server, and `leave_s` is how long `client.close()` took.
// Run from target/counterparts-ts (setup-ts.sh):
//   node ../../scripts/counterparts/ts/proxy_host.mjs BIN PORT [proxy flags…]
// Prints one JSON object; exit 0 when every step behaved.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const require = createRequire(pathToFileURL(process.cwd() + '/'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await load('@modelcontextprotocol/sdk/client/stdio.js');

const [bin, portText, ...extra] = process.argv.slice(2);
const port = parseInt(portText, 10);
const serverJs = join(dirname(fileURLToPath(import.meta.url)), 'server.mjs');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startServer() {
    const child = spawn(process.execPath, [serverJs, '--port', String(port)], { stdio: 'ignore' });
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
        const open = await new Promise((resolve) => {
            const socket = connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
            socket.on('error', () => resolve(false));
        });
        if (open) return child;
        await sleep(50);
    }
    child.kill('SIGKILL');
    throw new Error(`server on ${port} did not start`);
}

async function kill(child) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
}

const text = (result) => (result.content ?? []).map((c) => c.text ?? '').join('');
const out = {};
let server = await startServer();
const transport = new StdioClientTransport({
    command: bin,
    args: ['proxy', '--name', 'ts', ...extra, '--url', `http://127.0.0.1:${port}/mcp`],
    stderr: 'ignore',
});
const client = new Client({ name: 'ts-host', version: '1.0.0' });
try {
    await client.connect(transport);
    out.server_info = client.getServerVersion()?.name;
    out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
    out.before = text(await client.callTool({ name: 'echo', arguments: { text: 'before' } }));
    await kill(server);
    const killed = Date.now();
    const [during, restarted] = await Promise.all([
        client.callTool({ name: 'echo', arguments: { text: 'during' } }),
        sleep(1000).then(startServer),
    ]);
    server = restarted;
    out.during = { is_error: !!during.isError, text: text(during), s_after_kill: (Date.now() - killed) / 1000 };
    out.after = text(await client.callTool({ name: 'echo', arguments: { text: 'after' } }));
    // Leave with a call in flight on a server whose event loop is blocked (8 s, the session
    // DELETE included): the proxy must be gone before the SDK's 2 s grace ends.
    client.callTool({ name: 'block', arguments: { ms: 8000 } }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    const leaving = Date.now();
    await client.close();
    out.leave_s = (Date.now() - leaving) / 1000;
    out.host_left = 'ok';
} finally {
    await kill(server);
}
out.ok = out.before === 'before' && out.after === 'after' && (out.during.text === 'during' || out.during.is_error)
    && out.leave_s < 2;
console.log(JSON.stringify(out, null, 1));
process.exit(out.ok ? 0 : 1);
