"use strict";
// ioredis on the simulated Redis (PROTOCOL.md "Redis commands").
//
// `SimConnector` is an ioredis Connector (ioredis 5, built/Redis.js connect():
// `new options.Connector(options)`, `connector.connect()` resolves to the
// stream ioredis writes RESP to and reads RESP from). Its `SimStream` is a
// Duplex in place of the TCP socket: each command ioredis writes is parsed
// from RESP and sent as a `redis` request to the node the client was given
// (`host`, when it names a node of the scenario; else the service's first
// node), on a connection of its own; the JSON answer is turned back into
// RESP bytes, in the order the commands were sent (as TCP would). Every
// line above the socket — ioredis's command queue, its reconnects and
// offline queue, EVALSHA/NOSCRIPT, node-redlock, redis-semaphore — is the
// library's own code, unchanged.
//
// `install(ioredis)` makes SimConnector the default Connector of an ioredis
// module (Redis.defaultOptions), so `new Redis({host: "redis-1"})` in user
// code reaches the simulated redis-1. It also turns the ready check off by
// default: the simulated Redis has no INFO (a client that sets
// `enableReadyCheck: true` itself would never become ready).
//
// A command with no answer within the client's `command_timeout`
// (init.settings) drops the connection, as a socket timeout would: ioredis
// sees an ETIMEDOUT error and a close, and reconnects (its retryStrategy).
const { Duplex } = require("stream");
const state = require("./state");

const CRLF = Buffer.from("\r\n");

/** Parses the RESP arrays of bulk strings a client writes. */
class RequestParser {
  constructor() {
    this.buf = Buffer.alloc(0);
  }

  feed(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk);
    const out = [];
    for (;;) {
      const r = this.parseOne();
      if (r === null) break;
      out.push(r);
    }
    return out;
  }

  line(at) {
    const end = this.buf.indexOf(CRLF, at);
    return end < 0 ? null : { text: this.buf.toString("latin1", at + 1, end), next: end + 2, kind: this.buf[at] };
  }

  parseOne() {
    if (this.buf.length === 0) return null;
    const head = this.line(0);
    if (head === null) return null;
    if (head.kind !== 0x2a) throw new Error("fencesim: ioredis wrote a command that is not a RESP array");
    const n = parseInt(head.text, 10);
    const args = [];
    let at = head.next;
    for (let i = 0; i < n; i++) {
      const h = this.line(at);
      if (h === null) return null;
      const len = parseInt(h.text, 10);
      if (this.buf.length < h.next + len + 2) return null;
      args.push(this.buf.toString("latin1", h.next, h.next + len));
      at = h.next + len + 2;
    }
    this.buf = this.buf.subarray(at);
    return args;
  }
}

/** A PROTOCOL.md RESP value as RESP2 bytes. */
function encode(v, parts) {
  if (v === null || v === undefined) {
    parts.push(Buffer.from("$-1\r\n"));
  } else if (typeof v === "number") {
    parts.push(Buffer.from(`:${v}\r\n`));
  } else if (typeof v === "string") {
    const b = Buffer.from(v, "latin1");
    parts.push(Buffer.from(`$${b.length}\r\n`), b, CRLF);
  } else if (Array.isArray(v)) {
    parts.push(Buffer.from(`*${v.length}\r\n`));
    for (const x of v) encode(x, parts);
  } else if ("status" in v) {
    parts.push(Buffer.from(`+${v.status}\r\n`, "latin1"));
  } else if ("error" in v) {
    parts.push(Buffer.from(`-${v.error}\r\n`, "latin1"));
  } else {
    throw new Error("fencesim: not a RESP value: " + JSON.stringify(v));
  }
  return parts;
}

const LOCAL = new Set([undefined, null, "", "localhost", "127.0.0.1", "::1"]);

/** The node a client's `host` names, or the service's first Redis node. */
function nodeFor(host) {
  const init = state.init();
  const nodes = init.nodes || {};
  if (!LOCAL.has(host)) {
    for (const group of Object.values(nodes)) if (group.includes(host)) return host;
    throw new Error(`fencesim: ioredis was given host "${host}", which is not a node of the scenario ` +
                    `(its nodes: ${Object.values(nodes).flat().join(", ")})`);
  }
  return (nodes.redis || [])[0] || "redis-0";
}

class SimStream extends Duplex {
  constructor(node, connection) {
    super();
    this.node = node;
    this.connection = connection;
    this.connecting = true;
    this.remoteAddress = node;
    this.remotePort = 6379;
    this.parser = new RequestParser();
    this.inflight = []; // {id, reply: Buffer or null}, in the order sent
    process.nextTick(() => {
      if (this.destroyed) return;
      this.connecting = false;
      this.emit("connect");
    });
  }

  setNoDelay() { return this; }
  setKeepAlive() { return this; }
  setTimeout() { return this; } // connecting takes no simulated time here
  ref() { return this; }
  unref() { return this; }
  _read() {}

  _write(chunk, encoding, callback) {
    let commands;
    try {
      commands = this.parser.feed(typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk);
    } catch (e) {
      callback(e);
      return;
    }
    for (const args of commands) this.send(args);
    callback();
  }

  send(args) {
    const entry = { id: 0, reply: null };
    const ch = state.channel();
    const timeout = state.init().settings.command_timeout;
    entry.id = ch.request({ type: "redis", node: this.node, connection: this.connection, args, timeout }, (msg) => {
      if (msg.error !== undefined) {
        const err = new Error(`fencesim: no answer from ${this.node} within ${timeout / 1e6} ms ` +
                              "(settings.command_timeout): the connection is dropped");
        err.code = "ETIMEDOUT";
        this.destroy(err);
        return;
      }
      entry.reply = Buffer.concat(encode(msg.result, []));
      while (this.inflight.length && this.inflight[0].reply !== null) this.push(this.inflight.shift().reply);
    });
    this.inflight.push(entry);
  }

  _final(callback) {
    this.push(null);
    callback();
  }

  _destroy(err, callback) {
    const ch = state.channel();
    for (const e of this.inflight) if (e.reply === null) ch.cancel(e.id);
    this.inflight = [];
    callback(err);
  }
}

class SimConnector {
  constructor(options) {
    this.options = options;
    this.connecting = false;
    this.stream = null;
  }

  check() {
    return true;
  }

  async connect() {
    this.connecting = true;
    const node = nodeFor(this.options.host);
    this.stream = new SimStream(node, state.nextConnection(node));
    return this.stream;
  }

  disconnect() {
    this.connecting = false;
    if (this.stream) this.stream.end();
  }
}

const installed = new WeakSet();

/** SimConnector as the default of an ioredis module's Redis class. */
function install(ioredis) {
  const Redis = ioredis && (ioredis.Redis || ioredis.default || ioredis);
  if (!Redis || !Redis.defaultOptions || installed.has(Redis)) return;
  installed.add(Redis);
  Redis.defaultOptions.Connector = SimConnector;
  Redis.defaultOptions.enableReadyCheck = false;
}

module.exports = { SimConnector, SimStream, install, encode, RequestParser };
