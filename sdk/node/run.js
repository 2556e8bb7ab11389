#!/usr/bin/env node
"use strict";
// node path/to/sdk/node/run.js client.js [args...]
//
// Runs client.js as a program client of fencesim (docs/PROTOCOL.md, version
// 1): hello, then for each run init → the program in lockstep with
// simulated time → end. The process stays for the next run of a sweep
// ("reuse": PROTOCOL.md "Speed"): client.js is loaded afresh for each init
// (its own modules — every file outside node_modules — are taken out of
// require's cache); libraries (ioredis, redlock) stay loaded.
//
// In the program, require("fencesim") is this SDK (index.js), and
// require("ioredis") is ioredis with the simulated connection as its
// default (lib/redis.js). Under fencesim-real (FENCESIM_BACKEND=real) the
// program runs on real time with real ioredis instead (lib/real.js).
const path = require("path");
const Module = require("module");

// stdout is fencesim's: the program's console.log and process.stdout go to stderr.
Object.defineProperty(process, "stdout", { configurable: true, enumerable: false, get: () => process.stderr });

const state = require("./lib/state");
const redis = require("./lib/redis");
const { Channel, ProtocolError, PROTOCOL } = require("./lib/channel");

const real = process.env.FENCESIM_BACKEND === "real";
state.s.backend = real ? "real" : "sim";

const sdkIndex = path.join(__dirname, "index.js");
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "fencesim") return sdkIndex;
  return resolveFilename.call(this, request, ...rest);
};
const load = Module._load;
Module._load = function (request, parent, ...rest) {
  const exported = load.call(this, request, parent, ...rest);
  if (request === "ioredis" && !real) redis.install(exported);
  if (request === "ioredis" && real) require("./lib/real").ioredis(exported, Module._resolveFilename(request, parent));
  return exported;
};

/** The program failed: its stack, then its message again as the last line
 * (fencesim's error quotes the end of stderr). */
function die(e) {
  process.stderr.write(`${(e && e.stack) || e}\n`);
  if (e && e.stack && e.message) process.stderr.write(`${e.name || "Error"}: ${e.message}\n`);
  process.exit(1);
}

function usage() {
  process.stderr.write("usage: node run.js SCRIPT.js [ARGS...]\n");
  process.exit(2);
}

/** Loads the user's script afresh: its own modules leave require's cache.
 * Returns the promise of its exported main, or null (a script without one). */
function loadScript(script) {
  for (const file of Object.keys(require.cache)) {
    if (!file.includes(`${path.sep}node_modules${path.sep}`) && !file.startsWith(__dirname + path.sep)) {
      delete require.cache[file];
    }
  }
  const exported = require(script);
  if (typeof exported !== "function") return null;
  return Promise.resolve(exported()).catch((e) => {
    die(e);
  });
}

const NO_TIMERS =
  "fencesim: a resource program cannot use timers (setTimeout, setInterval, setImmediate): a check decides " +
  "synchronously, inside the copy's atomic step, and what it must remember goes in the marks it returns " +
  "(docs/PROTOCOL.md \"Resource programs\")";

/** A resource program's decision on one check (PROTOCOL.md "Resource
 * programs"): the check runs synchronously, inside the copy's atomic step. */
function decide(msg) {
  const fn = state.s.checkFn;
  if (fn === null) {
    throw new Error("fencesim: a check came, and the script registered no check (call fencesim.check(fn))");
  }
  const d = fn(msg.request, msg.state);
  if (state.s.time.timers().length > 0) throw new Error(NO_TIMERS);
  if (d === null || typeof d !== "object" || typeof d.then === "function" || !("accepted" in d)) {
    throw new TypeError("a check returns fencesim.accept(...) or fencesim.reject(reason, ...), synchronously; got " +
                        String(d));
  }
  if (typeof d.accepted !== "boolean") {
    throw new TypeError("a decision's accepted is true or false; got " + JSON.stringify(d.accepted) +
                        " (return fencesim.accept(...) or fencesim.reject(reason, ...))");
  }
  if (!d.accepted && (typeof d.reason !== "string" || d.reason.trim() === "")) {
    throw new TypeError("a rejection needs a reason, visible text; got " + JSON.stringify(d.reason) +
                        " (return fencesim.reject(reason, ...))");
  }
  const out = { type: "decision", id: msg.id, accepted: d.accepted };
  if (d.reason !== undefined && d.reason !== null) out.reason = d.reason;
  // accept()/reject() checked these; a plain object returned by the check
  // is checked the same way here.
  const options = {};
  for (const k of ["marks", "last_written", "last_seen"]) {
    if (d[k] !== undefined && d[k] !== null) options[k] = d[k];
  }
  return Object.assign(out, require("./index.js")._decisionOptions("check", options));
}

async function serveSim(script) {
  const { SimTime } = require("./lib/sim");
  const ch = new Channel();
  state.s.channel = ch;
  ch.send({ type: "hello", protocol: PROTOCOL, sdk: "fencesim-node 0.1", reuse: true });
  ch.flush();
  let time = null;
  for (;;) {
    const msg = ch.read();
    if (msg.type === "init") {
      if (time !== null) throw new ProtocolError("init while a run is going on");
      ch.reset();
      state.s.init = msg;
      state.s.connections.clear();
      state.s.checkFn = null;
      time = new SimTime(ch, msg);
      state.s.time = time;
      loadScript(script);
    } else if (msg.type === "end") {
      if (time !== null) time.uninstall();
      time = null;
      state.s.init = null;
      state.s.time = null;
      ch.reset();
      ch.send({ type: "ready" });
      ch.flush();
      continue;
    } else if (msg.type === "check") {
      if (time === null) throw new ProtocolError("a check before init");
      time.advance(msg.time);
      ch.send(decide(msg));
    } else if (msg.type === "reply" || msg.type === "timer" || msg.type === "watch") {
      if (time === null) throw new ProtocolError(`a ${msg.type} before init`);
      time.advance(msg.time);
      ch.deliver(msg);
    } else {
      throw new ProtocolError("unexpected message from fencesim: " + JSON.stringify(msg).slice(0, 200));
    }
    await time.settle();
    if (state.s.init !== null && state.s.init.role === "check") {
      if (time.timers().length > 0) {
        throw new Error(NO_TIMERS);
      }
    } else {
      time.armAlarm();
    }
    ch.send({ type: "yield" });
    ch.flush();
  }
}

function main() {
  if (process.argv.length < 3) usage();
  const script = path.resolve(process.argv[2]);
  process.argv = [process.argv[0], script, ...process.argv.slice(3)];
  if (real) {
    require("./lib/real").serve(() => loadScript(script));
    return;
  }
  serveSim(script).catch((e) => {
    die(e);
  });
}

main();
