// The Node SDK's file reads (sdk/node/lib/sim.js, FS_CALLS): several in
// flight at once finish in the order they were called, whatever the
// machine's thread pool does -- a large read first, then a small one, then
// a callback-style stat. Run by tests/models/program/program_client_test.cpp
// (NodeSdkFileReads*).
const fs = require("fs");
const os = require("os");
const path = require("path");
const fencesim = require("fencesim");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fencesim-node-files-"));
const big = path.join(dir, "big");
const small = path.join(dir, "small");
fs.writeFileSync(big, Buffer.alloc(32 * 1024 * 1024, 7));
fs.writeFileSync(small, "x");
const order = [];
const done = Promise.all([
  fs.promises.readFile(big).then((b) => order.push(`big ${b.length}`)),
  fs.promises.readFile(small, "utf8").then((s) => order.push(`small ${s}`)),
  new Promise((resolve) => fs.stat(small, (err, st) => resolve(order.push(`stat ${err ? err.code : st.size}`)))),
  fs.promises.readFile(path.join(dir, "missing")).catch((err) => order.push(`missing ${err.code}`)),
]);
done.then(() => {
  fs.rmSync(dir, { recursive: true });
  fencesim.note(order.join(", "));
});
