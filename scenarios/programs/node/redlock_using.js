// node-redlock's using() with automatic extension, unchanged (redlock
// 5.0.0-beta.2, src/index.ts), guarding an unfenced read-modify-write of
// the resource. One ioredis client per Redis node of the scenario: with
// lock.redlock, a Redlock pool. Beliefs come from fencesim.trackRedlock,
// which names redlock's calls on the timeline and in the stories.
//
//   node ../../sdk/node/run.js node/redlock_using.js [--duration MS]
//        [--iterations N] [--rounds N] [--work MS] [--think MS]
//
// Each iteration: using([lock key], duration, routine), where the routine
// reads the counter, works, checks signal.aborted and writes +1, `rounds`
// times; then `think` before the next iteration.
const Redis = require("ioredis");
const Redlock = require("redlock").default;
const fencesim = require("fencesim");

const opt = { duration: 2000, iterations: 1, rounds: 1, work: 300, think: 0 };
for (let i = 2; i + 1 < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, "")] = Number(process.argv[i + 1]);

const clients = fencesim.client().nodes.redis.map((host) => new Redis({ host, maxRetriesPerRequest: 2 }));
const redlock = fencesim.trackRedlock(new Redlock(clients, { retryCount: 100, retryDelay: 100, retryJitter: 50 }));

async function routine(signal) {
  fencesim.iterationAcquired();
  for (let i = 0; i < opt.rounds; i++) {
    const { value } = await fencesim.resource.read();
    await fencesim.sleep(opt.work); // the work between the read and the write
    if (signal.aborted) throw signal.error;
    const done = await fencesim.resource.write(value + 1, { read_value: value });
    fencesim.note(`wrote ${value + 1}: ${done.accepted ? "accepted" : "rejected"}`);
  }
}

module.exports = async function main() {
  for (let n = 0; n < opt.iterations; n++) {
    if (n > 0) await fencesim.sleep(opt.think);
    fencesim.iterationStart();
    try {
      await redlock.using([fencesim.client().lock.key], opt.duration, routine);
      fencesim.iterationEnd(true);
    } catch (e) {
      fencesim.note(`using() rejected: ${e.message}`);
      fencesim.iterationEnd(false, e.message);
    }
  }
  for (const c of clients) c.disconnect();
};
