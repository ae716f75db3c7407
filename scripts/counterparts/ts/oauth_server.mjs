// The official TypeScript SDK's example server examples/server/simpleStreamableHttp.js, run
// unchanged (with its demoInMemoryOAuthProvider.js when given --oauth or --oauth-strict), but
// bound to 127.0.0.1 only: the example calls `app.listen(PORT)`, which listens on every
// interface, so a numeric port given to http.Server#listen gets the host 127.0.0.1 here.
// Run from a folder whose node_modules has the SDK (setup-ts.sh):
//   cd target/counterparts-ts && MCP_PORT=18741 MCP_AUTH_PORT=18742 \
//     node ../../scripts/counterparts/ts/oauth_server.mjs --oauth [--oauth-strict]
// The MCP endpoint is http://localhost:$MCP_PORT/mcp, the authorization server
// http://localhost:$MCP_AUTH_PORT (in memory: a restart forgets every client and token).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
    const first = args[0];
    const numeric = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
    if (numeric && typeof args[1] !== 'string') {
        args = [Number(first), '127.0.0.1', ...args.slice(1)];
    }
    return listen.apply(this, args);
};

// Resolve the SDK from the working directory, not from this file's folder.
const require = createRequire(pathToFileURL(process.cwd() + '/'));
const sdkRoot = require.resolve.paths('@modelcontextprotocol/sdk')
    .map((dir) => path.join(dir, '@modelcontextprotocol/sdk'))
    .find((dir) => fs.existsSync(path.join(dir, 'package.json')));
if (!sdkRoot) throw new Error('@modelcontextprotocol/sdk not found from ' + process.cwd());
await import(pathToFileURL(path.join(sdkRoot, 'dist/esm/examples/server/simpleStreamableHttp.js')).href);
