// Starts the official everything MCP server (@modelcontextprotocol/server-everything, its
// streamable-HTTP transport) for mcpchaos's tests, on loopback only.
//
// The server itself listens on every interface (express's app.listen(PORT)), on PORT or 3001.
// This wrapper makes every listen of this process bind 127.0.0.1, lets PORT=0 pick a free
// port, and prints "MCPCHAOS_URL http://127.0.0.1:PORT/mcp" once it listens (the server's own
// log lines go to stdout too, so the test looks for that prefix). The process exits when its
// stdin ends: the test that started it is gone.
//
// usage: PORT=0 node start.mjs
import http from 'node:http';

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (port, ...rest) {
  const cb = rest.find((a) => typeof a === 'function');
  return listen.call(this, Number(port) || 0, '127.0.0.1', () => {
    process.stdout.write(`MCPCHAOS_URL http://127.0.0.1:${this.address().port}/mcp\n`);
    if (cb) cb();
  });
};

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

await import('@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js');
