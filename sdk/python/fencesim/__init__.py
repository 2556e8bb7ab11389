"""fencesim's Python SDK: your own lock client inside fencesim's
deterministic simulation (docs/PROTOCOL.md, version 1).

    import fencesim, redis
    r = fencesim.redis()                       # redis.Redis on the simulated Redis
    lock = fencesim.tracked(r.lock("lock", timeout=10))
    if lock.acquire():
        v = fencesim.resource.read()["value"]
        fencesim.resource.write(v + 1, read_value=v)
        lock.release()

Run a script with ``python3 -m fencesim client.py`` (warm between runs) or
call ``fencesim.run(main)`` from it. See sdk/python/README.md.
"""
from . import _patch, _state
from ._core import ProtocolError, RequestTimeout

__all__ = ["run", "client", "redis", "redis_pool", "held", "released", "lost", "iteration_start",
           "iteration_acquired", "iteration_end", "note", "resource", "spawn", "sleep", "now", "tracked",
           "request", "redis_sentinel", "etcd", "etcd_watch", "Watch", "prefix_end", "table", "queue", "rng", "run_async",
           "check", "accept", "reject", "ProtocolError", "RequestTimeout"]


def client():
    """The ``init`` message of this run: ``client()["client"]`` is the name."""
    return _state.channel().init


def now():
    """The client's clocks now, in ns: ``{"wall": …, "monotonic": …}``."""
    return dict(_state.channel().time)


def sleep(seconds):
    """Waits ``seconds`` of the client's monotonic time (time.sleep is this)."""
    import time
    time.sleep(seconds)  # patched in the simulation; real under fencesim-real


def rng():
    """The client's random stream (a random.Random seeded by fencesim)."""
    return _patch.rng()


def request(type, **fields):
    """Any request of PROTOCOL.md that crosses the simulated network; its
    ``result``. Raises RequestTimeout on ``"error": "timeout"``."""
    msg = {"type": type}
    msg.update({k: v for k, v in fields.items() if v is not None})
    got = _state.channel().request(msg)
    if "error" in got:
        raise RequestTimeout("%s request: %s" % (type, got["error"]))
    return got.get("result")


def etcd(method, **fields):
    """An etcd v3 call (PROTOCOL.md "etcd requests"): etcd("Put", key="k", value="v")."""
    return request("etcd", method=method, **fields)


def prefix_end(prefix):
    """etcd's range end for every key under `prefix` (clientv3.WithPrefix)."""
    b = bytearray(prefix.encode("latin-1"))
    while b:
        if b[-1] < 0xFF:
            b[-1] += 1
            return b.decode("latin-1")
        b.pop()
    return "\x00"


class Watch:
    """An etcd Watch of a key, or of [key, range_end), from `start_revision`
    (0: from now): every put and delete, in revision order, until cancelled
    (PROTOCOL.md "etcd requests")."""

    def __init__(self, key, range_end=None, start_revision=0, node=None):
        msg = {"type": "etcd", "method": "Watch", "key": key, "range_end": range_end or "",
               "start_revision": start_revision}
        if node is not None:
            msg["node"] = node
        self._id = _state.channel().open_stream(msg)
        self.closed = False

    def next(self, timeout=None):
        """The next events (a list of {"type": "PUT"|"DELETE", "kv": …}), or
        None after `timeout` seconds of simulated time without any."""
        got = _state.channel().stream_next(self._id, None if timeout is None else timeout * 1e9)
        return None if got is None else got["events"]

    def cancel(self):
        if not self.closed:
            self.closed = True
            _state.channel().close_stream(self._id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()


def etcd_watch(key, range_end=None, start_revision=0, node=None):
    """Starts a Watch (see Watch)."""
    return Watch(key, range_end, start_revision, node)


def table(op, **fields):
    """A lock-table statement (PROTOCOL.md "Lock-table statements")."""
    return request("table", op=op, **fields)


def queue(op, **fields):
    """A work-queue call (PROTOCOL.md "Queue calls")."""
    return request("queue", op=op, **fields)


class _Resource:
    """The resource (PROTOCOL.md "Resource operations")."""

    @staticmethod
    def read(token=None, node=None):
        return request("resource", op="read", token=token, node=node)

    @staticmethod
    def write(value, token=None, read_value=None, expected_version=None, tag=None, node=None):
        return request("resource", op="write", value=value, token=token, read_value=read_value,
                       expected_version=expected_version, tag=tag, node=node)


resource = _Resource()


def _say(msg):
    _state.channel().send(msg)


def held(value, token=None):
    """From now on the program believes it holds its lock (PROTOCOL.md "Beliefs")."""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    _say({"type": "held", "value": value, "token": token})


def released():
    """The belief ends: the program is releasing the lock."""
    _say({"type": "released"})


def lost(reason=""):
    """The belief ends: the program learned that its lease is gone."""
    _say({"type": "lost", "reason": reason})


def iteration_start():
    _say({"type": "iteration", "event": "start"})


def iteration_acquired():
    _say({"type": "iteration", "event": "acquired"})


def iteration_end(success, outcome=None):
    msg = {"type": "iteration", "event": "end", "success": bool(success)}
    if outcome:
        msg["outcome"] = outcome
    _say(msg)


def note(text):
    """A line on the timeline at the current time."""
    _say({"type": "note", "text": str(text)})


def check(fn):
    """A resource program (``"resource": {"kind": "program"}``): ``fn(request,
    state)`` decides each read and write of the resource and returns
    ``accept(...)`` or ``reject(reason, ...)``. ``request``: op ("read" or
    "write"), client, lock, token (or None), and for a write value,
    value_read, version_read; ``state``: the copy's value, version,
    last_written, last_seen and marks (a dict of integers by name). What the
    check must remember goes in the marks it returns, not in a global
    (PROTOCOL.md "Resource programs"). Use as a decorator."""
    ch = _state.channel()
    if ch.check_fn is not None:
        raise RuntimeError("fencesim.check: a check is registered already; one per program")
    ch.check_fn = fn
    return fn


def accept(marks=None, last_written=None, last_seen=None):
    """A check's answer: accepted. ``marks`` (a dict) replaces the copy's
    marks; ``last_written``/``last_seen`` replace those marks; None: unchanged."""
    return {"accepted": True, "marks": marks, "last_written": last_written, "last_seen": last_seen}


def reject(reason, marks=None, last_written=None, last_seen=None):
    """A check's answer: rejected, with the reason the report shows (a
    non-empty string)."""
    if not isinstance(reason, str) or not reason.strip():
        raise TypeError("fencesim.reject(reason, ...): the reason is visible text, e.g. \"token 3 < 5\"; "
                        "got %r" % (reason,))
    return {"accepted": False, "reason": reason, "marks": marks, "last_written": last_written,
            "last_seen": last_seen}


def spawn(fn, name=None):
    """Starts ``fn`` as a task beside the current one (a renewal loop beside
    the work). Tasks take turns only when one waits (PROTOCOL.md "Lockstep")."""
    return _state.channel().spawn(fn, name)


def redis_pool(node=None, connection=0, **kwargs):
    """A redis-py ConnectionPool on the simulated Redis (``node``: a node of
    init's ``nodes``, default the first)."""
    import os
    if os.environ.get("FENCESIM_BACKEND") == "real":
        import redis as _r
        from . import _real
        host, port = _real.redis_address()
        return _r.ConnectionPool(host=host, port=port, **kwargs)
    from . import _redis
    return _redis.pool(node=node, connection=connection, **kwargs)


def redis(node=None, connection=0, **kwargs):
    """``redis.Redis(connection_pool=redis_pool(...))``."""
    import redis as _r
    return _r.Redis(connection_pool=redis_pool(node=node, connection=connection, **kwargs))


def redis_sentinel(service_name=None, **kwargs):
    """redis-py's own ``redis.sentinel.Sentinel(...).master_for(name,
    **kwargs)`` on the scenario's sentinels: a ``redis.Redis`` on the
    primary they name (SENTINEL masters), found again after a failover;
    ``service_name`` defaults to init's ``lock.sentinel_name``. In the
    simulation its connections are SimConnections; under fencesim-real they
    are sockets on the runner's links."""
    import os
    name = service_name or client()["lock"].get("sentinel_name")
    if name is None:
        raise ValueError("this scenario has no sentinels (lock.sentinels is 0)")
    if os.environ.get("FENCESIM_BACKEND") == "real":
        from . import _real
        return _real.sentinel_master(name, **kwargs)
    from redis.sentinel import Sentinel
    from . import _redis
    _redis.install()
    sentinels = [(s, 26379) for s in client()["nodes"].get("sentinels", [])]
    return Sentinel(sentinels, socket_timeout=kwargs.get("socket_timeout", 1.0)).master_for(name, **kwargs)


class tracked:
    """Wraps a redis-py ``Lock`` so its acquire, release and extend report
    beliefs and name themselves on the timeline and in the counterexample's
    story (notes "redis.lock.Lock.acquire() returned True", …): held after a
    successful acquire (value: the lock's token), released when the release
    is sent, lost when an extend or reacquire is refused
    (LockNotOwnedError). ``token``: a function returning the fencing token
    to report with the belief, or None."""

    def __init__(self, lock, token=None):
        self.lock = lock
        self._token = token

    def __getattr__(self, name):
        return getattr(self.lock, name)

    def _call(self, name, fn, *args, **kwargs):
        from redis.exceptions import LockError
        try:
            result = fn(*args, **kwargs)
        except LockError as e:
            note("redis.lock.Lock.%s() raised %s" % (name, type(e).__name__))
            raise
        note("redis.lock.Lock.%s() returned %r" % (name, result))
        return result

    def acquire(self, *args, **kwargs):
        ok = self._call("acquire", self.lock.acquire, *args, **kwargs)
        if ok:
            held(self.lock.local.token, self._token() if self._token else None)
        return ok

    def release(self):
        released()
        return self._call("release", self.lock.release)

    def extend(self, *args, **kwargs):
        from redis.exceptions import LockNotOwnedError
        try:
            return self._call("extend", self.lock.extend, *args, **kwargs)
        except LockNotOwnedError:
            lost("extend refused: the lock is no longer owned")
            raise

    def reacquire(self):
        from redis.exceptions import LockNotOwnedError
        try:
            return self._call("reacquire", self.lock.reacquire)
        except LockNotOwnedError:
            lost("reacquire refused: the lock is no longer owned")
            raise

    def __enter__(self):
        from redis.exceptions import LockError
        if self.acquire():
            return self
        raise LockError("Unable to acquire lock within the time specified")

    def __exit__(self, *exc):
        self.release()


def run_async(main, reuse=False):
    """Runs the coroutine function ``main`` in asyncio mode (fencesim.aio):
    under ``python3 -m fencesim`` it runs at once; a script run directly
    serves one run per process (``reuse``: stay for the next)."""
    from . import aio
    return run(lambda: aio.run(main), reuse=reuse)


def run(main, reuse=False, script=None):
    """Runs ``main()`` as the program of one client (``reuse``: stay for the
    next run of a sweep, calling ``main`` again for each ``init``)."""
    if _state._channel is not None:
        return main()  # already served (python3 -m fencesim script.py): just the program
    from . import _runner
    return _runner.serve(main, reuse)
