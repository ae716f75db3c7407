// A small MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk), Streamable
// HTTP at /mcp with sessions, built like the SDK's examples/server/simpleStreamableHttp.js.
// Run from a folder whose node_modules has the SDK, express and zod (setup-ts.sh):
//   cd target/counterparts-ts && node ../../scripts/counterparts/ts/server.mjs --port N
// Tools: echo(text); sleep(ms) awaits; block(ms) busy-waits, blocking node's event loop;
// meta() answers the W3C trace context the call carried in `_meta`.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// Resolve the packages from the working directory, not from this file's folder.
const require = createRequire(pathToFileURL(process.cwd() + '/'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { McpServer } = await load('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { createMcpExpressApp } = await load('@modelcontextprotocol/sdk/server/express.js');
const { isInitializeRequest } = await load('@modelcontextprotocol/sdk/types.js');
const z = await load('zod');

const portArg = process.argv.indexOf('--port');
const PORT = portArg > 0 ? parseInt(process.argv[portArg + 1], 10) : 3000;

const text = (t) => ({ content: [{ type: 'text', text: t }] });

function getServer() {
    const server = new McpServer({ name: 'counterpart-ts', version: '1.0.0' });
    server.registerTool('echo', { description: 'Echo the text back', inputSchema: { text: z.string() } },
        async ({ text: t }) => text(t));
    server.registerTool('sleep', { description: 'Sleep ms without blocking', inputSchema: { ms: z.number() } },
        async ({ ms }) => { await new Promise((r) => setTimeout(r, ms)); return text(`slept ${ms} ms`); });
    server.registerTool('block', { description: 'Block the event loop for ms', inputSchema: { ms: z.number() } },
        async ({ ms }) => { const end = Date.now() + ms; while (Date.now() < end) { /* busy */ } return text(`blocked ${ms} ms`); });
    server.registerTool('meta', { description: 'The W3C trace context the call carried in _meta', inputSchema: {} },
        async (_args, extra) => text(JSON.stringify({ traceparent: extra?._meta?.traceparent ?? null, tracestate: extra?._meta?.tracestate ?? null })));
    return server;
}

const app = createMcpExpressApp();
const sessions = new Map();

app.post('/mcp', async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    try {
        let transport = sessionId ? sessions.get(sessionId) : undefined;
        if (!transport) {
            if (sessionId) {
                res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
                return;
            }
            if (!isInitializeRequest(req.body)) {
                res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: (sid) => sessions.set(sid, transport),
            });
            transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
            await getServer().connect(transport);
        }
        await transport.handleRequest(req, res, req.body);
    } catch (error) {
        console.error('error handling request', error);
        if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    }
});

const byHeader = async (req, res) => {
    const transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport) {
        res.status(req.headers['mcp-session-id'] ? 404 : 400).send('no such session');
        return;
    }
    await transport.handleRequest(req, res);
};
app.get('/mcp', byHeader);
app.delete('/mcp', byHeader);

app.listen(PORT, '127.0.0.1', (error) => {
    if (error) { console.error(error); process.exit(1); }
    console.log(`listening on 127.0.0.1:${PORT}`);
});
