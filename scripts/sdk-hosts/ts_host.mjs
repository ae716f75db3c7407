// A host on the official TypeScript SDK: connects to a server, runs the steps of
// scripts/sdk-hosts/run.sh and prints one JSON line per step. Run from target/sdk-hosts/node.
//
//   node ts_host.mjs SDK ERA UPSTREAM CALLS_JSON --url URL
//   node ts_host.mjs SDK ERA UPSTREAM CALLS_JSON --stdio CMD [ARG]...
//
// SDK: v2 (@modelcontextprotocol/client 2.3) or v1 (@modelcontextprotocol/sdk 1.x, 2025-11-25 only).
// ERA (v2's versionNegotiation.mode): legacy (its default: initialize), auto (server/discover,
// then initialize on a legacy server), modern ({pin: '2026-07-28'}). v1 takes `legacy` only.
// Lines: {"step", "ok", "error"}; the first is the connect step, with the negotiated "revision".
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const STEP_TIMEOUT_MS = 20000;
const require = createRequire(pathToFileURL(process.cwd() + '/'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);

const [sdk, era, upstream, callsFile, how, ...target] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, 'utf8'))[upstream];

let Client, StdioClientTransport, StreamableHTTPClientTransport;
if (sdk === 'v2') {
    ({ Client, StreamableHTTPClientTransport } = await load('@modelcontextprotocol/client'));
    ({ StdioClientTransport } = await load('@modelcontextprotocol/client/stdio'));
} else {
    ({ Client } = await load('@modelcontextprotocol/sdk/client/index.js'));
    ({ StdioClientTransport } = await load('@modelcontextprotocol/sdk/client/stdio.js'));
    ({ StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js'));
}

const emit = (step, ok, error = null, extra = {}) =>
    console.log(JSON.stringify({ step, ok, error, ...extra }));
const describe = (e) => {
    const name = e?.constructor?.name ?? 'Error';
    const code = e?.code !== undefined ? ` (code ${e.code})` : '';
    return `${name}${code}: ${String(e?.message ?? e).split('\n').filter(Boolean).slice(0, 4).join(' | ')}`.slice(0, 400);
};
const options = { timeout: STEP_TIMEOUT_MS };

async function step(name, action) {
    try {
        const value = await action();
        emit(name, true);
        return value;
    } catch (e) {
        emit(name, false, describe(e));
        return undefined;
    }
}

const negotiation = { legacy: 'legacy', auto: 'auto', modern: { pin: '2026-07-28' } }[era];
const clientOptions = sdk === 'v2' ? { versionNegotiation: { mode: negotiation } } : {};
const client = new Client({ name: `sdk-hosts-ts-${sdk}-${era}`, version: '1.0.0' }, clientOptions);
const transport = how === '--url'
    ? new StreamableHTTPClientTransport(new URL(target[0]))
    : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'ignore' });
// v1 says the negotiated version only to the transport: keep what it says.
let negotiated = null;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
    negotiated = version;
    setVersion?.(version);
};

try {
    await client.connect(transport, options);
} catch (e) {
    emit('connect', false, describe(e));
    process.exit(1);
}
emit('connect', true, null, { revision: client.getNegotiatedProtocolVersion?.() ?? negotiated });

const tools = await step('tools/list', () => client.listTools(undefined, options));
const listed = new Set((tools?.tools ?? []).map((t) => t.name));
for (const [name, args] of Object.entries(calls.tools)) {
    if (tools && !listed.has(name)) {
        emit(`tools/call ${name}`, false, 'not listed');
        continue;
    }
    await step(`tools/call ${name}`, async () => {
        const result = await client.callTool({ name, arguments: args }, undefined, options);
        if (result.isError) {
            const text = (result.content ?? []).map((c) => c.text ?? '').join('');
            throw new Error(`isError: ${text.slice(0, 300)}`);
        }
        return result;
    });
}
await step('prompts/list', () => client.listPrompts(undefined, options));
for (const [name, args] of Object.entries(calls.prompts)) {
    await step(`prompts/get ${name}`, () => client.getPrompt({ name, arguments: args }, options));
}
const resources = await step('resources/list', () => client.listResources(undefined, options));
await step('resources/templates/list', () => client.listResourceTemplates(undefined, options));
if (resources?.resources?.length) {
    const uri = resources.resources[0].uri;
    await step('resources/read', () => client.readResource({ uri }, options));
} else {
    emit('resources/read', false, 'no resource listed');
}
await Promise.race([client.close(), new Promise((r) => setTimeout(r, 5000))]);
process.exit(0);
