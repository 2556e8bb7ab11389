// redis-semaphore's Mutex, unchanged (src/Lock.ts, src/mutex/*.ts), guarding
// an unfenced read-modify-write of the resource that takes several steps;
// the client checks mutex.isAcquired before it writes, as the library's
// README suggests. Which redis-semaphore runs is the scenario's choice
// (NODE_PATH: node/semaphore-5.3.0 or node/semaphore-5.3.1). Beliefs come
// from fencesim.trackMutex (onLockLost → lost).
//
//   node ../../sdk/node/run.js node/semaphore_mutex.js [--steps N] [--step MS]
//        [--lock-timeout MS] [--refresh MS]
const Redis = require("ioredis");
const { Mutex } = require("redis-semaphore");
const fencesim = require("fencesim");

const opt = { steps: 1, step: 300, "lock-timeout": 2000, refresh: 1000 };
for (let i = 2; i + 1 < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, "")] = Number(process.argv[i + 1]);

const redis = new Redis({ host: fencesim.client().nodes.redis[0], maxRetriesPerRequest: 2 });
// redis-semaphore names its key "mutex:<key>": the scenario's lock.key is "mutex:lock".
const key = fencesim.client().lock.key.replace(/^mutex:/, "");
const mutex = fencesim.trackMutex(new Mutex(redis, key, {
  lockTimeout: opt["lock-timeout"], refreshInterval: opt.refresh, retryInterval: 100, acquireTimeout: 20000,
  onLockLost: () => {}, // trackMutex reports the loss; the routine checks isAcquired
}));

module.exports = async function main() {
  fencesim.iterationStart();
  await mutex.acquire();
  fencesim.iterationAcquired();
  const { value } = await fencesim.resource.read();
  for (let s = 0; s < opt.steps; s++) await fencesim.sleep(opt.step); // the work, step by step
  if (mutex.isAcquired) {
    const done = await fencesim.resource.write(value + 1, { read_value: value });
    fencesim.note(`wrote ${value + 1}: ${done.accepted ? "accepted" : "rejected"}`);
    await mutex.release();
    fencesim.iterationEnd(done.accepted);
  } else {
    fencesim.note("mutex.isAcquired is false: the write is abandoned");
    fencesim.iterationEnd(false, "lock lost");
  }
  redis.disconnect();
};
