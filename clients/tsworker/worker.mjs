// A node worker that holds many MCP clients of one TypeScript library, for mcpchaos groups of
// kind ts-sdk (@modelcontextprotocol/sdk 1.x) and ts-client (@modelcontextprotocol/client 2.x).
// mcpchaos (clients/tsdriver.go) drives it over JSON lines: commands on stdin, answers and
// events on stdout, one object a line. It exits when stdin ends, after closing its clients.
//
// Commands:  {op:"open", c, url, opts, name}        -> {ev:"opened", c, session, protocol} | {ev:"open_failed", c, error}
//            {op:"call", c, q, tool, args, progress} -> {ev:"result", c, q, ok, ...}
//            {op:"list", c, q}                       -> {ev:"listed", c, q, tools} | {ev:"result", c, q, ok:false, ...}
//            {op:"close", c}                         -> {ev:"closed", c}
// Events:    {ev:"ready", library, version, pid}, {ev:"ended", c} (the library closed the client
//            by itself), {ev:"onerror", c, message} (what only the transport's onerror heard).
//
// Every request a client sends carries X-Mcpchaos-Client: c, so that mcpchaos's gateway knows
// whose it is; the gateway removes it before the server sees the request.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';

const which = process.argv[process.argv.indexOf('--library') + 1];
const pkg = which === 'client' ? '@modelcontextprotocol/client' : '@modelcontextprotocol/sdk';

let Client, Transport, McpError, StreamableHTTPError, SdkError, SdkHttpError, ProtocolError;
if (which === 'client') {
  ({ Client, StreamableHTTPClientTransport: Transport, SdkError, SdkHttpError, ProtocolError } = await import('@modelcontextprotocol/client'));
} else {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport: Transport, StreamableHTTPError } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
  ({ McpError } = await import('@modelcontextprotocol/sdk/types.js'));
}
const version = JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const clients = new Map(); // c -> {client, transport, closing}

const reconnectionKeys = ['maxRetries', 'initialReconnectionDelay', 'maxReconnectionDelay', 'reconnectionDelayGrowFactor'];
const reconnectionDefaults = { maxRetries: 2, initialReconnectionDelay: 1000, maxReconnectionDelay: 30000, reconnectionDelayGrowFactor: 1.5 };

async function open(m) {
  const opts = m.opts || {};
  const reconnectionOptions = { ...reconnectionDefaults };
  for (const k of reconnectionKeys) if (opts[k] !== undefined) reconnectionOptions[k] = opts[k];
  const transport = new Transport(new URL(m.url), {
    requestInit: { headers: { 'X-Mcpchaos-Client': String(m.c) } },
    reconnectionOptions,
  });
  const client = new Client({ name: m.name || 'mcpchaos', version: '1' }, { capabilities: {} });
  const entry = { client, transport, closing: false, opts };
  client.onerror = (err) => out({ ev: 'onerror', c: m.c, message: String(err?.message ?? err).slice(0, 300) });
  client.onclose = () => { if (!entry.closing) out({ ev: 'ended', c: m.c }); };
  try {
    await client.connect(transport, opts.timeout ? { timeout: opts.timeout } : undefined);
  } catch (err) {
    entry.closing = true;
    client.close().catch(() => {});
    out({ ev: 'open_failed', c: m.c, error: String(err?.message ?? err).slice(0, 300) });
    return;
  }
  clients.set(m.c, entry);
  out({ ev: 'opened', c: m.c, session: transport.sessionId ?? '', protocol: transport.protocolVersion ?? '' });
}

// classify says what the application got back: the library's error class, and what it means.
function classify(err) {
  const r = { ok: false, message: String(err?.message ?? err).slice(0, 300), class: err?.name || 'Error' };
  if (StreamableHTTPError && err instanceof StreamableHTTPError) {
    r.class = `StreamableHTTPError(${err.code})`;
    r.status = err.code;
    r.gone = err.code === 404; // an HTTP error carrying the status: the application can tell
    r.misclassified = err.code !== 404;
  } else if (McpError && err instanceof McpError) {
    r.class = `McpError(${err.code})`;
    r.code = err.code;
    r.timed_out = err.code === -32001;
    r.answered = err.code !== -32001 && err.code !== -32000; // those two are the client's own
    r.misclassified = true;
  } else if (SdkHttpError && err instanceof SdkHttpError) {
    r.class = `SdkHttpError(${err.code})`;
    r.status = err.status;
    r.gone = err.status === 404; // visible in the error's data, though its code says otherwise
    r.misclassified = true;
  } else if (SdkError && err instanceof SdkError) {
    r.class = `SdkError(${err.code})`;
    r.timed_out = err.code === 'REQUEST_TIMEOUT';
    r.misclassified = true;
  } else if (ProtocolError && err instanceof ProtocolError) {
    r.class = `ProtocolError(${err.code})`;
    r.code = err.code;
    r.answered = true;
    r.misclassified = true;
  } else {
    r.misclassified = true;
  }
  return r;
}

function requestOptions(e) {
  const o = {};
  if (e.opts.timeout) o.timeout = e.opts.timeout;
  if (e.opts.resetTimeoutOnProgress) o.resetTimeoutOnProgress = true;
  return o;
}

async function call(m) {
  const e = clients.get(m.c);
  if (!e) return out({ ev: 'result', c: m.c, q: m.q, ok: false, class: 'NoClient', message: 'no such client' });
  const params = { name: m.tool, arguments: m.args ?? {} };
  const opts = requestOptions(e);
  if (m.progress) {
    params._meta = { progressToken: m.progress };
    opts.onprogress = () => {}; // the application listens, as one that asked for progress would
  }
  try {
    // 1.x: callTool(params, resultSchema, options); 2.x: callTool(params, options).
    const res = which === 'client' ? await e.client.callTool(params, opts) : await e.client.callTool(params, undefined, opts);
    out({ ev: 'result', c: m.c, q: m.q, ok: true, is_error: !!res?.isError });
  } catch (err) {
    out({ ev: 'result', c: m.c, q: m.q, ...classify(err) });
  }
}

async function list(m) {
  const e = clients.get(m.c);
  if (!e) return out({ ev: 'result', c: m.c, q: m.q, ok: false, class: 'NoClient', message: 'no such client' });
  try {
    const res = await e.client.listTools(undefined, requestOptions(e));
    out({ ev: 'listed', c: m.c, q: m.q, tools: res });
  } catch (err) {
    out({ ev: 'result', c: m.c, q: m.q, ...classify(err) });
  }
}

async function close(m) {
  const e = clients.get(m.c);
  clients.delete(m.c);
  if (e) {
    e.closing = true;
    await e.transport.terminateSession().catch(() => {});
    await e.client.close().catch(() => {});
  }
  out({ ev: 'closed', c: m.c });
}

const ops = { open, call, list, close };
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return out({ ev: 'bad_line', line: line.slice(0, 200) }); }
  const f = ops[m.op];
  if (!f) return out({ ev: 'bad_line', line: line.slice(0, 200) });
  f(m).catch((err) => out({ ev: 'onerror', c: m.c, message: 'worker: ' + String(err?.message ?? err) }));
});
rl.on('close', async () => {
  await Promise.allSettled([...clients.keys()].map((c) => close({ c })));
  process.exit(0);
});
out({ ev: 'ready', library: pkg, version, pid: process.pid });
