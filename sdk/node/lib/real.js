"use strict";
// The real backend (FENCESIM_BACKEND=real, fencesim-real; docs/PROTOCOL.md
// "The real stack"): the same program against the runner's real Redis, on
// real time. No lockstep and no fakes: Date, timers and randomness are
// Node's own, and ioredis is real ioredis on a socket — a client given the
// host "redis-0" (or localhost) connects to FENCESIM_REDIS (host:port, the
// runner's proxied link to the primary, so link faults reach it). Beliefs,
// iterations, notes and resource operations still go to the runner over the
// protocol; a resource operation resolves when the runner's reply comes.
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const state = require("./state");
const { PROTOCOL, ProtocolError } = require("./channel");

class RealChannel {
  constructor() {
    this.handlers = new Map();
    this.nextId = 1;
  }

  get time() {
    const ns = process.hrtime.bigint();
    return { wall: Date.now() * 1e6, monotonic: Number(ns) };
  }

  send(msg) {
    const data = Buffer.from(JSON.stringify(msg) + "\n", "utf8");
    let off = 0;
    while (off < data.length) {
      try {
        off += fs.writeSync(1, data, off, data.length - off);
      } catch (e) {
        if (e.code !== "EAGAIN") throw e;
      }
    }
  }

  flush() {}

  request(msg, fn) {
    if (msg.type !== "resource") {
      // Under fencesim-real the program talks to the servers itself.
      process.nextTick(fn, { type: "reply", id: 0, error: "not under fencesim-real" });
      return 0;
    }
    const id = this.nextId++;
    msg.id = id;
    this.handlers.set(id, fn);
    this.send(msg);
    return id;
  }

  cancel(id) {
    this.handlers.delete(id);
  }

  deliver(msg) {
    const fn = this.handlers.get(msg.id);
    if (fn === undefined) return;
    this.handlers.delete(msg.id);
    fn(msg);
  }
}

/** host:port of the runner's link to the Redis primary. */
function redisAddress() {
  const link = process.env.FENCESIM_REDIS;
  if (!link) throw new Error("fencesim-real gave no FENCESIM_REDIS: this scenario's service is not Redis");
  const at = link.lastIndexOf(":");
  return { host: link.slice(0, at), port: Number(link.slice(at + 1)) };
}

const LOCAL = new Set([undefined, null, "", "localhost", "127.0.0.1", "::1", "redis-0"]);

/** Real ioredis, its "redis-0" (or localhost) the runner's link. */
function ioredis(exported, file) {
  const Redis = exported && (exported.Redis || exported.default || exported);
  if (!Redis || !Redis.defaultOptions || Redis.defaultOptions.Connector) return;
  const Standalone = require(path.join(path.dirname(file), "connectors", "StandaloneConnector")).default;
  class RealConnector extends Standalone {
    constructor(options) {
      if (!LOCAL.has(options.host)) {
        throw new Error(`fencesim-real: ioredis host "${options.host}": only the primary (redis-0) is reachable from a Node program in this version`);
      }
      super({ ...options, ...redisAddress() });
    }
  }
  Redis.defaultOptions.Connector = RealConnector;
}

function serve(start) {
  const ch = new RealChannel();
  state.s.channel = ch;
  ch.send({ type: "hello", protocol: PROTOCOL, sdk: "fencesim-node 0.1", reuse: false });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    const msg = JSON.parse(line);
    if (msg.type === "init") {
      state.s.init = msg;
      const main = start();
      // The exported main has returned: one yield tells fencesim-real so
      // (--stop-when-done); the process idles until `end`.
      if (main !== null) main.then(() => ch.send({ type: "yield" }));
    } else if (msg.type === "end") {
      process.exit(0);
    } else if (msg.type === "reply") {
      ch.deliver(msg);
    } else {
      throw new ProtocolError("unexpected message from fencesim-real: " + line.slice(0, 200));
    }
  });
  rl.on("close", () => process.exit(0));
}

module.exports = { serve, ioredis, RealChannel };
