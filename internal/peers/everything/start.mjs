// Starts the official everything MCP server (@modelcontextprotocol/server-everything, its
// streamable-HTTP transport) for mcpchaos's tests, on loopback only, and keeps the server's
// own record of what it did, for the tests to hold a run's figures against.
//
// The server itself listens on every interface (express's app.listen(PORT)), on PORT or 3001.
// This wrapper makes every listen of this process bind 127.0.0.1, lets PORT=0 pick a free
// port, and prints "MCPCHAOS_URL http://127.0.0.1:PORT/mcp" once it listens (the server's own
// log lines go to stdout too, so the test looks for that prefix). The process exits when its
// stdin ends: the test that started it is gone.
//
// The record (GET /mcpchaos/record, JSON) counts what the server's own log lines say it did
// (it logs each session initialized, each session whose transport closed and was forgotten,
// each DELETE, each new GET stream and each resume with Last-Event-ID) and every HTTP status
// it answered, by method ("POST 400"). Read in-process, it is complete when it is answered.
//
// usage: PORT=0 node start.mjs
import http from 'node:http';

const record = {
  sessions_initialized: 0, // "Session initialized with ID"
  sessions_forgotten: 0, // "Transport closed for session ..., removing from transports map"
  deletes: 0, // "Received session termination request"
  get_streams: 0, // "Establishing new SSE stream"
  resumes: 0, // "Client reconnecting with Last-Event-ID"
  statuses: {}, // "METHOD STATUS" -> count, every response the server answered
};
const lines = [
  ['Session initialized with ID', 'sessions_initialized'],
  ['Transport closed for session', 'sessions_forgotten'],
  ['Received session termination request', 'deletes'],
  ['Establishing new SSE stream', 'get_streams'],
  ['Client reconnecting with Last-Event-ID', 'resumes'],
];
const log = console.log;
console.log = (...args) => {
  const s = String(args[0]);
  for (const [prefix, key] of lines) {
    if (s.startsWith(prefix)) record[key]++;
  }
  log(...args);
};

const writeHead = http.ServerResponse.prototype.writeHead;
http.ServerResponse.prototype.writeHead = function (status, ...rest) {
  if (this.req && this.req.url !== '/mcpchaos/record') {
    const k = `${this.req.method} ${status}`;
    record.statuses[k] = (record.statuses[k] || 0) + 1;
  }
  return writeHead.call(this, status, ...rest);
};

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (port, ...rest) {
  const cb = rest.find((a) => typeof a === 'function');
  const handlers = this.listeners('request');
  this.removeAllListeners('request');
  this.on('request', (req, res) => {
    if (req.url === '/mcpchaos/record') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(record));
      return;
    }
    for (const h of handlers) h.call(this, req, res);
  });
  return listen.call(this, Number(port) || 0, '127.0.0.1', () => {
    process.stdout.write(`MCPCHAOS_URL http://127.0.0.1:${this.address().port}/mcp\n`);
    if (cb) cb();
  });
};

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

await import('@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js');
