"use strict";
// Belief helpers around the Node lock libraries (PROTOCOL.md "Beliefs"): the
// library's own calls, unchanged, with the beliefs reported and each step
// named on the timeline in the library's terms.
//
// trackRedlock(redlock) — node-redlock 5 (src/index.ts at v5.0.0-beta.2):
//   acquire() resolved → held (value: the lock's random value); release()
//   called → released; using()'s AbortSignal aborted (its automatic
//   extension failed: signal.error) → lost. An extend() that rejects is
//   only named: using() retries it while the lock's expiration is in the
//   future, and a caller of extend() decides for itself (call lost()).
// trackMutex(mutex) — redis-semaphore 5 (src/Lock.ts): acquire() or a true
//   tryAcquire() → held (value: the identifier); release() → released; the
//   library's onLockLost (a refresh that found the lock gone) → lost, then
//   the user's own onLockLost.
function sdk() {
  return require("../index");
}

function describe(e) {
  return (e && e.message) || String(e);
}

function trackRedlock(redlock, { token } = {}) {
  const { acquire, release, extend, using } = redlock;
  redlock.acquire = async function (resources, duration, settings) {
    const f = sdk();
    const call = `redlock.acquire(${JSON.stringify(resources)}, ${duration})`;
    let lock;
    try {
      lock = await acquire.call(this, resources, duration, settings);
    } catch (e) {
      f.note(`${call} rejected: ${describe(e)}`);
      throw e;
    }
    f.note(`${call} resolved: lock.expiration ${lock.expiration}`);
    f.held(lock.value, token ? token(lock) : null);
    return lock;
  };
  redlock.release = async function (lock, settings) {
    const f = sdk();
    f.released();
    try {
      const r = await release.call(this, lock, settings);
      f.note("redlock.release(lock) resolved");
      return r;
    } catch (e) {
      f.note(`redlock.release(lock) rejected: ${describe(e)}`);
      throw e;
    }
  };
  redlock.extend = async function (lock, duration, settings) {
    const f = sdk();
    try {
      const l = await extend.call(this, lock, duration, settings);
      f.note(`redlock.extend(lock, ${duration}) resolved: lock.expiration ${l.expiration}`);
      return l;
    } catch (e) {
      f.note(`redlock.extend(lock, ${duration}) rejected: ${describe(e)}`);
      throw e;
    }
  };
  redlock.using = function (resources, duration, settingsOrRoutine, optionalRoutine) {
    const routine = optionalRoutine ?? settingsOrRoutine;
    const watched = (signal) => {
      signal.addEventListener("abort", () => {
        const why = `redlock.using(): signal aborted: ${describe(signal.error)}`;
        sdk().note(why);
        sdk().lost(why);
      });
      return routine(signal);
    };
    return optionalRoutine === undefined
      ? using.call(this, resources, duration, watched)
      : using.call(this, resources, duration, settingsOrRoutine, watched);
  };
  return redlock;
}

function trackMutex(mutex, { token } = {}) {
  const { acquire, tryAcquire, release } = mutex;
  const kind = mutex.constructor.name;
  const acquired = () => sdk().held(mutex.identifier, token ? token(mutex) : null);
  mutex.acquire = async function () {
    try {
      await acquire.call(this);
    } catch (e) {
      sdk().note(`${kind}.acquire() rejected: ${describe(e)}`);
      throw e;
    }
    sdk().note(`${kind}.acquire() resolved`); // its tryAcquire() stated the belief
  };
  mutex.tryAcquire = async function () {
    const ok = await tryAcquire.call(this);
    sdk().note(`${kind}.tryAcquire() resolved ${ok}`);
    if (ok) acquired();
    return ok;
  };
  mutex.release = async function () {
    sdk().released();
    await release.call(this);
    sdk().note(`${kind}.release() resolved`);
  };
  const onLockLost = mutex._onLockLost;
  mutex._onLockLost = (err) => {
    sdk().note(`${kind} onLockLost: ${describe(err)}`);
    sdk().lost(`${kind} onLockLost: ${describe(err)}`);
    return onLockLost(err);
  };
  return mutex;
}

module.exports = { trackRedlock, trackMutex };
