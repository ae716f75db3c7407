// Starts the reference "everything" server (@modelcontextprotocol/server-everything) bound to
// 127.0.0.1 only. Its Streamable HTTP mode listens on $PORT (default 3001) at /mcp with
// `app.listen(PORT)`, which binds every interface and takes no host; this wrapper makes a
// `listen(port[, callback])` with no host bind 127.0.0.1, then runs the package's own launcher
// unchanged. Used by scripts/counterparts/peer-calls.sh. Run from a folder whose node_modules has
// the package (peer-calls.sh installs it into target/counterparts-ts):
//   cd target/counterparts-ts && PORT=18751 node ../../scripts/counterparts/ts/everything_loopback.mjs streamableHttp
import net from 'node:net';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    const port = args[0];
    const isPort = typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port));
    if (isPort && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
    return listen.apply(this, args);
};

// Resolve the package from the working directory, not from this file's folder.
const require = createRequire(pathToFileURL(process.cwd() + '/'));
await import(pathToFileURL(require.resolve('@modelcontextprotocol/server-everything/dist/index.js')).href);
