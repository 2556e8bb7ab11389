"use strict";
// The process's one channel and the current run's init, shared by the SDK's
// modules.
const s = { channel: null, init: null, time: null, connections: new Map(), backend: "sim", checkFn: null };

module.exports = {
  s,
  channel() {
    if (s.channel === null) throw new Error("fencesim: not running under fencesim (start the program with sdk/node/run.js)");
    return s.channel;
  },
  init() {
    if (s.init === null) throw new Error("fencesim: the run has not started (no init yet)");
    return s.init;
  },
  /** A fresh connection number for `node` in this run (PROTOCOL.md "Redis commands"). */
  nextConnection(node) {
    const n = s.connections.get(node) || 0;
    s.connections.set(node, n + 1);
    return n;
  },
};
