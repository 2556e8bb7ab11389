// The Node SDK's time (sdk/node/lib/sim.js): Date, performance.now,
// setTimeout/setInterval/setImmediate on the client's simulated clocks, and
// Math.random/crypto from its own stream. Run by
// tests/models/program/program_client_test.cpp (NodeSdk*), under a pause
// and a wall-clock jump.
const crypto = require("crypto");
const fencesim = require("fencesim");

const log = (what) => fencesim.note(`${what} wall ${Date.now()} mono ${Math.round(performance.now())}`);
fencesim.note(`random ${Math.random().toFixed(6)} uuid ${crypto.randomUUID()} bytes ${crypto.randomBytes(4).toString("hex")}`);
setImmediate(() => log("immediate"));
setTimeout(() => log("timeout 500"), 500);
setTimeout(() => log("timeout 300"), 300);
let n = 0;
const interval = setInterval(() => {
  n += 1;
  log(`interval ${n}`);
  if (n === 4) clearInterval(interval);
}, 400);
