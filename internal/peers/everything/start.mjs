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
// it answered, by method ("POST 400"), those of 400 or more that it answered to a session id
// it had issued (by method, status, whether it had forgotten the session, and the message),
// and the events with data "{}" its GET streams carried. Read in-process, it is complete when
// it is answered.
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
  refused_issued: 0, // 4xx or 5xx answered to a request carrying a session id it had issued
  // those by "METHOD STATUS live|forgotten: message" (forgotten: the id's transport had closed)
  refusals: {},
  get_events_not_jsonrpc: 0, // events with data "{}" written on GET streams (replays)
};
const issued = new Set();
const forgotten = new Set();
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
  const id = s.match(/^Session initialized with ID: (\S+)/);
  if (id) issued.add(id[1]);
  const gone = s.match(/^Transport closed for session (\S+),/);
  if (gone) forgotten.add(gone[1]);
  log(...args);
};

const writeHead = http.ServerResponse.prototype.writeHead;
http.ServerResponse.prototype.writeHead = function (status, ...rest) {
  if (this.req && this.req.url !== '/mcpchaos/record') {
    const k = `${this.req.method} ${status}`;
    record.statuses[k] = (record.statuses[k] || 0) + 1;
    const sid = this.req.headers['mcp-session-id'];
    if (status >= 400 && issued.has(sid)) {
      record.refused_issued++;
      this.mcpchaosWhy = `${k} ${forgotten.has(sid) ? 'forgotten' : 'live'}`;
    }
  }
  return writeHead.call(this, status, ...rest);
};

// A refusal's message is in its body: written by write (hono) or end (express), the latter
// before the status is known. On GET streams, events whose data is "{}" are counted: the
// transport stores a priming event as {} in the event store, and this server's store replays
// every event after the cursor, of every stream of the session, so a replay can carry them.
const text = (chunk) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
const keep = (res, chunk) => {
  if (!chunk || typeof chunk === 'function') return;
  if (res.req && res.req.method === 'GET') {
    record.get_events_not_jsonrpc += (text(chunk).match(/^data: \{\}$/gm) || []).length;
  }
  if ((res.mcpchaosBody || '').length < 300) {
    res.mcpchaosBody = (res.mcpchaosBody || '') + text(chunk);
  }
};
const write = http.ServerResponse.prototype.write;
http.ServerResponse.prototype.write = function (chunk, ...rest) {
  keep(this, chunk);
  return write.call(this, chunk, ...rest);
};
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (chunk, ...rest) {
  keep(this, chunk);
  const out = end.call(this, chunk, ...rest);
  if (this.mcpchaosWhy) {
    let msg = '';
    try {
      msg = JSON.parse(this.mcpchaosBody).error.message;
    } catch {}
    const key = `${this.mcpchaosWhy}: ${msg}`;
    record.refusals[key] = (record.refusals[key] || 0) + 1;
    this.mcpchaosWhy = undefined;
  }
  return out;
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
