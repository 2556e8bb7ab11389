"use strict";
// fencesim's Node SDK: your own lock client inside fencesim's deterministic
// simulation (docs/PROTOCOL.md, version 1). Start the program with
// `node path/to/sdk/node/run.js client.js`; in it, require("fencesim") is
// this module. See sdk/node/README.md.
const state = require("./lib/state");

class RequestTimeout extends Error {}

function channel() {
  return state.channel();
}

/** The `init` message of this run: client().client is the client's name. */
function client() {
  return state.init();
}

/** The client's clocks now, in ns: {wall, monotonic}. */
function now() {
  return { ...channel().time };
}

/** Any request of PROTOCOL.md that crosses the (simulated) network; resolves
 * to its `result`, rejects with RequestTimeout on `"error"`. */
function request(type, fields = {}) {
  const msg = { type };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null) msg[k] = v;
  return new Promise((resolve, reject) => {
    channel().request(msg, (got) => {
      if (got.error !== undefined) reject(new RequestTimeout(`${type} request: ${got.error}`));
      else resolve(got.result);
    });
  });
}

const etcd = (method, fields = {}) => request("etcd", { method, ...fields });
const table = (op, fields = {}) => request("table", { op, ...fields });
const queue = (op, fields = {}) => request("queue", { op, ...fields });

/** The resource (PROTOCOL.md "Resource operations"). */
const resource = {
  read({ token, node } = {}) {
    return request("resource", { op: "read", token, node });
  },
  write(value, { token, read_value: readValue, readValue: rv, expected_version: ev, expectedVersion, tag, node } = {}) {
    return request("resource", { op: "write", value, token, read_value: readValue ?? rv,
                                 expected_version: ev ?? expectedVersion, tag, node });
  },
};

function say(msg) {
  channel().send(msg);
}

/** From now on the program believes it holds its lock (PROTOCOL.md "Beliefs"). */
function held(value, token = null) {
  say({ type: "held", value: String(value), token });
}

/** The belief ends: the program is releasing the lock. */
function released() {
  say({ type: "released" });
}

/** The belief ends: the program learned that its lease is gone. */
function lost(reason = "") {
  say({ type: "lost", reason: String(reason) });
}

const iterationStart = () => say({ type: "iteration", event: "start" });
const iterationAcquired = () => say({ type: "iteration", event: "acquired" });
function iterationEnd(success, outcome) {
  const msg = { type: "iteration", event: "end", success: Boolean(success) };
  if (outcome) msg.outcome = String(outcome);
  say(msg);
}

/** A line on the timeline at the current time. */
function note(text) {
  say({ type: "note", text: String(text) });
}

/** Waits `ms` milliseconds (of the client's monotonic clock in the simulation). */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A resource program ("resource": {"kind": "program"}): `fn(request, state)`
 * decides each read and write of the resource, synchronously, and returns
 * accept(...) or reject(reason, ...). `request`: op ("read" or "write"),
 * client, lock, token (or null), and for a write value, value_read,
 * version_read; `state`: the copy's value, version, last_written,
 * last_seen and marks (an object of integers by name). What the check must
 * remember goes in the marks it returns, not in a variable of the script
 * (PROTOCOL.md "Resource programs").
 */
function check(fn) {
  if (typeof fn !== "function") throw new TypeError("fencesim.check(fn): fn must be a function");
  if (state.s.checkFn !== null) throw new Error("fencesim.check(fn): a check is registered already; one per program");
  state.s.checkFn = fn;
  return fn;
}

const DECISION_OPTIONS = { marks: "marks", lastWritten: "last_written", last_written: "last_written",
                           lastSeen: "last_seen", last_seen: "last_seen" };

/** The decision's optional fields from accept's or reject's options:
 * marks, lastWritten (or last_written), lastSeen (or last_seen). */
function decisionOptions(fnName, options) {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`fencesim.${fnName}: the options must be an object, e.g. { marks: { "row-1": 7 } }`);
  }
  const out = {};
  for (const [k, v] of Object.entries(options)) {
    const field = DECISION_OPTIONS[k];
    if (field === undefined) {
      throw new TypeError(`fencesim.${fnName}: unknown option "${k}"; the options are marks, lastWritten and lastSeen`);
    }
    if (v === undefined) continue;
    if (field in out) throw new TypeError(`fencesim.${fnName}: "${k}" is given twice, in two spellings`);
    out[field] = field === "marks" ? markObject(fnName, v) : integer(`fencesim.${fnName}: ${k}`, v);
  }
  return out;
}

/** A mark's value as a JSON-safe integer: a Number that is a safe integer,
 * or a BigInt within ±(2^53 - 1) (a JS number is exact only that far). */
function integer(what, v) {
  if (typeof v === "bigint" && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(v);
  }
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  throw new TypeError(`${what} must be an integer within ±(2^53 - 1), got ${typeof v === "bigint" ? `${v}n` : String(v)}`);
}

/** `marks`: a plain object of integers by name (not a Map: JSON would send it as {}). */
function markObject(fnName, m) {
  const proto = m === null || typeof m !== "object" ? undefined : Object.getPrototypeOf(m);
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError(`fencesim.${fnName}: marks must be a plain object of integers by name, e.g. { "row-1": 7 }` +
                        (m instanceof Map ? " (a Map: use Object.fromEntries(map))" : ""));
  }
  const out = {};
  for (const [name, v] of Object.entries(m)) out[name] = integer(`fencesim.${fnName}: the mark "${name}"`, v);
  return out;
}

/** A check's answer: accepted. `marks` replaces the copy's marks;
 * lastWritten/lastSeen (or last_written/last_seen, as `state` spells them)
 * replace those marks; undefined: unchanged. */
function accept(options = {}) {
  return { accepted: true, ...decisionOptions("accept", options) };
}

/** A check's answer: rejected, with the reason the report shows. */
function reject(reason, options = {}) {
  if (typeof reason !== "string" || reason === "") {
    throw new TypeError("fencesim.reject(reason, ...): the reason is a non-empty string, e.g. \"token 3 < 5\"");
  }
  return { accepted: false, reason, ...decisionOptions("reject", options) };
}

module.exports = {
  check, accept, reject, _decisionOptions: decisionOptions,
  client, now, request, etcd, table, queue, resource, held, released, lost, note, sleep,
  iterationStart, iterationAcquired, iterationEnd, RequestTimeout,
  ...require("./lib/track"),
};
