"use strict";
// A Node resource program for tests/models/program/program_check_test.cpp,
// in the mode named by argv[2] (run by sdk/node/run.js):
//   snake      accepts everything, sets last_written with the snake_case
//              spelling `state` uses, and a named mark "n" counting checks
//   timer      starts a setTimeout inside a check (refused by the SDK)
//   not-bool   returns {accepted: 1}
//   typo       accept({lastWriten: 1}): an unknown option
//   immediate  starts a setImmediate inside a check (refused: it would run
//              after the decision)
//   map        marks as a Map (refused: JSON would send {})
//   bigint     marks as BigInts (taken: n as a number)
//   twice      registers a second check (refused)
//   raw-map    returns a plain object whose marks are a Map (refused)
const fencesim = require("fencesim");

const mode = process.argv[2];
if (mode === "twice") fencesim.check(() => fencesim.accept());
fencesim.check((request, state) => {
  const n = (state.marks.n || 0) + 1;
  if (mode === "timer") setTimeout(() => {}, 10);
  if (mode === "immediate") setImmediate(() => {});
  if (mode === "map") return fencesim.accept({ marks: new Map([["n", n]]) });
  if (mode === "raw-map") return { accepted: true, marks: new Map([["n", n]]) };
  if (mode === "bigint") return fencesim.accept({ marks: { n: BigInt(n) }, lastWritten: BigInt(n) });
  if (mode === "not-bool") return { accepted: 1 };
  if (mode === "typo") return fencesim.accept({ lastWriten: n });
  return fencesim.accept({ marks: { n }, last_written: n });
});
