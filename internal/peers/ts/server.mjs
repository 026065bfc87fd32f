// A TypeScript SDK (@modelcontextprotocol/sdk) MCP server for mcpchaos's interop tests.
//
// It is what a team would write with the SDK's own parts: one McpServer and one
// StreamableHTTPServerTransport per session, an event store so streams can be resumed, and an
// idle timer that closes a session after --ttl ms without a request (counted from the last
// request's arrival, in the time node ran: a stall of the process is not idleness). It serves on
// 127.0.0.1 only, prints its URL as its first line, and answers GET /stats with the server
// requests it sent to clients, how many of them went unanswered, and its process id.
//
// usage: node server.mjs [--ttl MS] [--notify MS] [--dead-status N] [--evict-after MS]
//
// --dead-status is the status an unknown or expired session gets (404 by default, as the spec
// says; 400 is what the SDK's older examples answer, and what many servers built on them do).
// --evict-after trims the event store by age (0: never): an event that old is forgotten while
// its session lives (a store bounded in production, a Redis stream trimmed by MINID), and a
// resume from it is one from an unknown id, which the SDK answers 400 "Invalid event ID format".
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { EmptyResultSchema, ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? def : Number(process.argv[i + 1]);
};
const ttl = arg('--ttl', 0);
const notifyEvery = arg('--notify', 0);
const deadStatus = arg('--dead-status', 404);
const evictAfter = arg('--evict-after', 0);

const stats = { server_requests: 0, unanswered: 0, abandoned: 0, sessions: 0, expired: 0 };

// An event store that keeps insertion order (the SDK's example store sorts ids as strings,
// which can put an event of the same millisecond before the cursor), trimmed by age with
// --evict-after.
class OrderedEventStore {
  constructor() { this.seq = 0; this.events = []; }
  async storeEvent(streamId, message) {
    const id = `${streamId}_${++this.seq}`;
    this.events.push({ id, streamId, message, at: Date.now() });
    return id;
  }
  // find is the index of the event eventId, or -1 when it was never stored or was trimmed.
  find(eventId) {
    const at = this.events.findIndex((x) => x.id === eventId);
    if (at >= 0 && evictAfter > 0 && Date.now() - this.events[at].at > evictAfter) return -1;
    return at;
  }
  async getStreamIdForEventId(eventId) {
    const at = this.find(eventId);
    return at < 0 ? undefined : this.events[at].streamId;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const at = this.find(lastEventId);
    if (at < 0) return '';
    const streamId = this.events[at].streamId;
    for (const e of this.events.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.id, e.message);
    }
    return streamId;
  }
}

// ask sends one server request to the client and counts it unanswered if it fails.
async function ask(extra, request, schema) {
  stats.server_requests++;
  try {
    await extra.sendRequest(request, schema, { timeout: 5000 });
  } catch (e) {
    if (process.env.PEER_DEBUG) console.error('ask failed', e && e.code, String(e));
    // An error answer is an answer. A timeout (-32001) is a request the client got and left
    // unanswered; a closed connection or a cancelled call (-32000) is a client that went away
    // (a fault cut it, or the session ended), counted apart.
    const code = e && typeof e.code === 'number' ? e.code : undefined;
    if (code === -32000) stats.abandoned++;
    else if (code === undefined || code === -32001) stats.unanswered++;
  }
}

function newServer(roots) {
  const server = new McpServer({ name: 'ts-sdk-peer', version: '1' }, { capabilities: { logging: {} } });
  server.registerTool('lookup_order', {
    description: 'Look up an order by id',
    inputSchema: {
      order_id: z.string().min(1),
      quantity: z.number().int().min(1),
      priority: z.enum(['low', 'high']).optional(),
    },
  }, async ({ order_id, quantity }) => ({ content: [{ type: 'text', text: `order ${order_id}: ${quantity}` }] }));
  server.registerTool('report_progress', {
    description: 'Work in steps, reporting progress when asked for it',
    inputSchema: { steps: z.number().int().min(1).max(20) },
  }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
      }
    }
    await ask(extra, { method: 'ping' }, EmptyResultSchema);
    if (roots()) await ask(extra, { method: 'roots/list' }, ListRootsResultSchema);
    return { content: [{ type: 'text', text: `done in ${steps} steps` }] };
  });
  server.registerTool('slow_query', {
    description: 'Answer a query after a delay',
    inputSchema: { query: z.string(), delay_ms: z.number().int().min(0).max(5000).optional() },
  }, async ({ query, delay_ms }) => {
    await new Promise((r) => setTimeout(r, delay_ms ?? 300));
    return { content: [{ type: 'text', text: `result of ${query}` }] };
  });
  return server;
}

const sessions = new Map(); // id -> { transport, server, timer, ticker }

function expire(id) {
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  stats.expired++;
  clearTimeout(s.timer);
  clearInterval(s.ticker);
  s.transport.close().catch(() => {});
}

// stalled is how long node has not run (a starved machine, a stopped process) since it
// started, as a 50 ms ticker finds itself late; measure brings it up to now.
let stalled = 0;
let tickAt = Date.now();
function measure() {
  const now = Date.now();
  stalled += Math.max(0, now - tickAt - 100);
  tickAt = now;
}
setInterval(measure, 50).unref();

// touch marks a request of session id arriving: its idle time starts again.
function touch(id) {
  const s = sessions.get(id);
  if (!s || ttl <= 0) return;
  measure();
  s.last = Date.now();
  s.stalledAt = stalled;
  clearTimeout(s.timer);
  s.timer = setTimeout(() => idleOut(id), ttl);
}

// idleOut ends session id once it has had no request for ttl of the time node ran. A stall is
// not idleness: when node runs again its timers fire before it reads the requests that came
// meanwhile, and a session whose client kept calling would be ended because the server could
// not read it (issue 30: at load 25-30 sessions called every 300 ms died of a 1.5 s TTL).
function idleOut(id) {
  const s = sessions.get(id);
  if (!s) return;
  measure();
  const idle = Date.now() - s.last - (stalled - s.stalledAt);
  if (idle < ttl) {
    s.timer = setTimeout(() => idleOut(id), ttl - idle);
    return;
  }
  expire(id);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try { resolve(text ? JSON.parse(text) : undefined); } catch (e) { reject(e); }
    });
    req.on('error', reject);
  });
}

function notFound(res) {
  if (deadStatus === 400) {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } }));
    return;
  }
  res.writeHead(deadStatus, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
}

const httpServer = http.createServer(async (req, res) => {
  try {
    if (req.url === '/stats') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ...stats, pid: process.pid }));
      return;
    }
    const id = req.headers['mcp-session-id'];
    if (id) touch(id); // at its arrival, before its body is read
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (id) {
      const s = sessions.get(id);
      if (!s) return notFound(res);
      await s.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !body || body.method !== 'initialize') {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'No session id' } }));
      return;
    }
    const hasRoots = body.params?.capabilities?.roots !== undefined;
    const server = newServer(() => hasRoots);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new OrderedEventStore(),
      onsessioninitialized: (sid) => {
        stats.sessions++;
        const s = { transport, server, timer: null, ticker: null, last: 0, stalledAt: 0 };
        sessions.set(sid, s);
        touch(sid);
        if (notifyEvery > 0) {
          s.ticker = setInterval(() => {
            server.sendLoggingMessage({ level: 'info', data: 'tick' }, sid).catch(() => {});
          }, notifyEvery);
        }
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
    }
    res.end(String(e));
  }
});

httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  process.stdout.write(`http://127.0.0.1:${port}/mcp\n`);
});

// The test that started the server ends it; stdin closing means that test is gone.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
