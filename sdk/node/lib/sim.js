"use strict";
// Time and randomness from the simulation while a program runs (PROTOCOL.md
// "Lockstep", rule 3), and the lockstep itself.
//
// * Date, setTimeout/setInterval/setImmediate (and their clear*), the
//   `timers` module, performance.now and process.hrtime are
//   @sinonjs/fake-timers' (pinned in package-lock.json). Date.now() is the
//   client's wall clock, performance.now() and hrtime its monotonic clock;
//   a timer counts on the monotonic clock, as Node's do, so a wall-clock
//   jump moves Date.now() and no timer.
// * Math.random and crypto's randomBytes, randomFillSync, randomUUID,
//   randomInt and getRandomValues draw from the client's own stream, seeded
//   by init.seed (node-redlock's lock value is randomBytes(16), redis-
//   semaphore's identifier randomUUID()).
// * The lockstep: after each delivery the SDK lets the program run —
//   promise jobs, process.nextTick, the fake timers that are due — until
//   nothing is left to run now; then it asks fencesim for one timer at the
//   earliest pending fake timer (the "alarm") and yields. Timers that fell
//   due while the client was paused run when the delivery after the pause
//   comes, one by one in the order they fell due, each seeing the clocks of
//   that moment (late, as Node runs them after a SIGSTOP); an interval is
//   rescheduled from the moment it ran.
const crypto = require("crypto");
const FakeTimers = require("@sinonjs/fake-timers");

const realSetImmediate = setImmediate;
const NS_PER_MS = 1e6;
const FAKED = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate",
               "Date", "hrtime", "performance"];

/** xoshiro128** seeded with splitmix32 from the 16 hex digits of init.seed. */
class Rng {
  constructor(seedHex) {
    let x = (parseInt(seedHex.slice(0, 8), 16) ^ Math.imul(parseInt(seedHex.slice(8, 16), 16), 0x9e3779b9)) >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s = [next(), next(), next(), next()];
  }

  u32() {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r;
  }

  /** A double in [0, 1) with 53 random bits. */
  random() {
    return ((this.u32() >>> 5) * 67108864 + (this.u32() >>> 6)) / 9007199254740992;
  }

  fill(buf) {
    for (let i = 0; i < buf.length; i++) buf[i] = this.u32() & 0xff;
    return buf;
  }
}

function rotl(x, k) {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

function uuid4(rng) {
  const b = rng.fill(Buffer.alloc(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// The properties patched in, and their own descriptors to put back (some
// of crypto's are getters).
const saved = [];

function patch(obj, key, value) {
  const d = Object.getOwnPropertyDescriptor(obj, key);
  if (d && !d.configurable) return; // Node 20's crypto.getRandomValues: not replaceable
  saved.push([obj, key, d]);
  Object.defineProperty(obj, key, { value, configurable: true, writable: true, enumerable: true });
}

function patchRandom(rng) {
  const fillSync = (buf) => {
    rng.fill(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
    return buf;
  };
  const uuid = () => uuid4(rng);
  patch(Math, "random", () => rng.random());
  patch(crypto, "randomBytes", (n, cb) => {
    const b = rng.fill(Buffer.alloc(n));
    if (typeof cb !== "function") return b;
    process.nextTick(cb, null, b);
    return undefined;
  });
  patch(crypto, "randomFillSync", fillSync);
  patch(crypto, "getRandomValues", fillSync);
  patch(crypto, "randomUUID", uuid);
  patch(crypto, "randomInt", (min, max) => {
    if (max === undefined) [min, max] = [0, min];
    return min + Math.floor(rng.random() * (max - min));
  });
  if (globalThis.crypto) {
    patch(globalThis.crypto, "getRandomValues", fillSync);
    patch(globalThis.crypto, "randomUUID", uuid);
  }
}

// The file-system calls whose asynchronous forms run on Node's thread pool,
// where several in flight finish in an order the machine decides (five
// ioredis connections each read ioredis's package.json at once: which
// reply comes first changed the order of the commands they queued). Their
// callback and promise forms do the work synchronously instead and finish
// in the order they were called, callbacks and promises alike (both as
// promise jobs): a file read takes no simulated time.
const FS_CALLS = ["access", "appendFile", "chmod", "copyFile", "lstat", "mkdir", "mkdtemp", "readdir", "readFile",
                  "readlink", "realpath", "rename", "rm", "rmdir", "stat", "unlink", "utimes", "writeFile"];

function byPath(args) {
  const p = args[0];
  return typeof p === "string" || typeof p === "number" || Buffer.isBuffer(p) || p instanceof URL;
}

function patchFs() {
  const fs = require("fs");
  for (const name of FS_CALLS) {
    const sync = fs[`${name}Sync`];
    const callback = fs[name];
    const promise = fs.promises[name];
    if (typeof sync !== "function") continue;
    if (typeof callback === "function") {
      patch(fs, name, (...args) => {
        const cb = args[args.length - 1];
        if (typeof cb !== "function" || !byPath(args)) return callback.apply(fs, args);
        let result;
        try {
          result = sync.apply(fs, args.slice(0, -1));
        } catch (err) {
          queueMicrotask(() => cb(err));
          return undefined;
        }
        queueMicrotask(() => cb(null, result));
        return undefined;
      });
    }
    if (typeof promise === "function") {
      patch(fs.promises, name, (...args) => {
        if (!byPath(args)) return promise.apply(fs.promises, args); // a FileHandle
        try {
          return Promise.resolve(sync.apply(fs, args));
        } catch (err) {
          return Promise.reject(err);
        }
      });
    }
  }
}

function unpatch() {
  while (saved.length) {
    const [obj, key, d] = saved.pop();
    if (d) Object.defineProperty(obj, key, d);
    else delete obj[key];
  }
}

/** Whether the program waits for the file system (a call outside
 * FS_CALLS, a FileHandle's), a compression or a crypto job of Node's thread
 * pool: the lockstep waits for it, so the machine's speed does not decide
 * what happens next (with two such jobs in flight at once, the order they
 * finish in still may; PROTOCOL.md says so). */
const WORK_IN_FLIGHT = /^(FSReq|FileHandle|CloseReq|StatWatcher|Zlib|GetAddrInfoReqWrap|[A-Za-z0-9]+Job$)/;

function fileIoInFlight() {
  return process.getActiveResourcesInfo().some((r) => WORK_IN_FLIGHT.test(r));
}

/** One run's clocks, timers and alarm over a Channel. */
class SimTime {
  constructor(channel, init) {
    this.ch = channel;
    this.mono = init.time.monotonic;
    this.clock = FakeTimers.install({ now: Math.floor(init.time.wall / NS_PER_MS), toFake: FAKED,
                                      shouldClearNativeTimers: false });
    this.alarm = null; // {id, due (ns)}
    this.rng = new Rng(init.seed);
    patchRandom(this.rng);
    patchFs();
  }

  uninstall() {
    this.clock.uninstall();
    unpatch();
  }

  /** Moves the clocks to a delivery's time without running any timer. */
  advance(time) {
    const dMs = Math.floor(time.monotonic / NS_PER_MS) - Math.floor(this.mono / NS_PER_MS);
    this.mono = time.monotonic;
    if (dMs > 0) this.clock.now += dMs; // Date, hrtime and performance.now move; no timer fires yet
    const wallMs = Math.floor(time.wall / NS_PER_MS);
    // A wall clock that differs from what the monotonic step gives (a jump,
    // drift): setSystemTime moves Date only, and keeps every timer's distance.
    if (this.clock.now !== wallMs) this.clock.setSystemTime(wallMs);
  }

  timers() {
    return this.clock.timers ? [...this.clock.timers.values()] : [];
  }

  /** The next fake timer due now or overdue, in the order they fell due. */
  nextDue() {
    let best = null;
    for (const t of this.timers()) {
      if (t.callAt > this.clock.now) continue;
      if (best === null || t.callAt < best.callAt || (t.callAt === best.callAt && t.id < best.id)) best = t;
    }
    return best;
  }

  /** Lets the program run until nothing is left to run now (promise jobs,
   * nextTicks, file reads in flight, due fake timers). */
  async settle() {
    for (;;) {
      await new Promise((resolve) => realSetImmediate(resolve));
      if (fileIoInFlight()) continue; // a file read takes no simulated time
      // One turn of the event loop has run every promise job and nextTick
      // the delivery started (they all run before an immediate).
      const due = this.nextDue();
      if (due === null) return;
      if (due.callAt < this.clock.now) {
        // An overdue timer runs now, late. fake-timers 15 keeps its timers
        // in a heap by callAt (as its own interval rescheduling does: remove,
        // change, push).
        this.clock.timerHeap.remove(due);
        due.callAt = this.clock.now;
        this.clock.timerHeap.push(due);
      }
      await this.clock.tickAsync(0);
    }
  }

  /** One fencesim timer at the earliest pending fake timer. */
  armAlarm() {
    let first = null;
    for (const t of this.timers()) if (first === null || t.callAt < first) first = t.callAt;
    if (first === null) {
      if (this.alarm) this.ch.cancel(this.alarm.id);
      this.alarm = null;
      return;
    }
    const due = (Math.floor(this.mono / NS_PER_MS) + (first - this.clock.now)) * NS_PER_MS;
    if (this.alarm && this.alarm.due === due) return;
    if (this.alarm) this.ch.cancel(this.alarm.id);
    const alarm = { due, id: 0 };
    alarm.id = this.ch.request({ type: "timer", after: Math.max(0, due - this.mono) }, () => {
      if (this.alarm === alarm) this.alarm = null;
    });
    this.alarm = alarm;
  }
}

module.exports = { SimTime, Rng, realSetImmediate };
