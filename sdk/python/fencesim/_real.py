"""The real backend (``FENCESIM_BACKEND=real``, fencesim-real): the same
program against the runner's real servers, on real time.

No lockstep and no patches: ``time`` is the machine's, ``fencesim.redis()``
is a real redis-py client to the server in ``FENCESIM_REDIS``
(``host:port``), ``fencesim.etcd()`` and ``etcd_watch`` go to the members
in ``FENCESIM_ETCD`` (_real_etcd.py), ``spawn`` starts a real thread. Beliefs, resource
operations, iterations and notes still go to the runner over the protocol
(PROTOCOL.md "The real stack"); a resource operation waits for its reply.
"""
import json
import os
import sys
import threading

from ._core import PROTOCOL, ProtocolError


class RealChannel:
    def __init__(self, stdin, stdout):
        self._in = stdin
        self._out = stdout
        self._lock = threading.Lock()  # one request at a time on the pipe
        self._next_id = 1
        self._streams = {}  # id -> _real_etcd.WatchStream
        self.init = None
        self.ended = False

    @property
    def time(self):
        import time
        return {"wall": time.time_ns(), "monotonic": time.monotonic_ns()}

    def send(self, msg):
        with self._lock:
            self._out.write(json.dumps(msg, separators=(",", ":")) + "\n")
            self._out.flush()

    def flush(self):
        self._out.flush()

    def read(self):
        line = self._in.readline()
        if not line:
            raise SystemExit(0)
        return json.loads(line)

    def request(self, msg):
        if msg.get("type") == "etcd":
            return self._etcd(msg)
        with self._lock:
            msg["id"] = self._next_id
            self._next_id += 1
            self._out.write(json.dumps(msg, separators=(",", ":")) + "\n")
            self._out.flush()
            got = self.read()
            if got.get("type") == "end":
                raise SystemExit(0)  # the run is over while we waited
            if got.get("id") != msg["id"]:
                raise ProtocolError("expected the reply to %d, got %r" % (msg["id"], got))
            return got

    # --- etcd: straight to the runner's real members (_real_etcd) ----------
    def _etcd(self, msg):
        from . import _real_etcd
        i = self.new_id()
        try:
            if msg.get("method") in ("WatchDelete", "Watch"):
                # As request() in the simulation: the first delivery.
                w = _real_etcd.WatchStream(msg)
                got = w.next()
                w.close()
                return dict(got, id=i)
            return {"type": "reply", "id": i, "result": _real_etcd.call(msg)}
        except _real_etcd.Unavailable as e:
            return {"type": "reply", "id": i, "error": "unavailable: %s" % e}

    def new_id(self):
        with self._lock:
            i = self._next_id
            self._next_id += 1
            return i

    def open_stream(self, msg):
        from . import _real_etcd
        i = self.new_id()
        self._streams[i] = _real_etcd.WatchStream(msg)
        return i

    def stream_next(self, i, timeout_ns=None):
        return self._streams[i].next(None if timeout_ns is None else timeout_ns / 1e9)

    def close_stream(self, i):
        w = self._streams.pop(i, None)
        if w is not None:
            w.close()

    def spawn(self, fn, name=None):
        t = threading.Thread(target=fn, name=name, daemon=True)
        t.start()
        return t


def redis_address():
    host, _, port = os.environ.get("FENCESIM_REDIS", "127.0.0.1:6379").split(",")[0].rpartition(":")
    return host or "127.0.0.1", int(port)


def sentinel_addresses():
    """The runner's sentinels, ``FENCESIM_SENTINELS`` (``host:port,…``)."""
    out = []
    for a in os.environ.get("FENCESIM_SENTINELS", "").split(","):
        if a:
            host, _, port = a.rpartition(":")
            out.append((host or "127.0.0.1", int(port)))
    if not out:
        raise ValueError("FENCESIM_SENTINELS is not set: this scenario has no sentinels")
    return out


def sentinel_master(name, **kwargs):
    """redis-py's own Sentinel client on the runner's sentinels; the
    primary's address as Sentinel gives it is mapped to this client's link
    to that server (``FENCESIM_REDIS_PORTS``), so the runner's link faults
    reach the program."""
    from redis.sentinel import Sentinel, SentinelConnectionPool
    ports = {}
    for pair in os.environ.get("FENCESIM_REDIS_PORTS", "").split(","):
        if pair:
            real, _, link = pair.partition(":")
            ports[int(real)] = int(link)

    class LinkedPool(SentinelConnectionPool):
        def get_master_address(self):
            host, port = super().get_master_address()
            return host, ports.get(int(port), int(port))

    timeout = kwargs.get("socket_timeout", 1.0)
    return Sentinel(sentinel_addresses(), socket_timeout=timeout).master_for(
        name, connection_pool_class=LinkedPool, **kwargs)


def serve(main):
    from . import _state
    out = os.fdopen(os.dup(1), "w", buffering=1 << 16, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ch = RealChannel(sys.stdin, out)
    _state.set_channel(ch)
    try:
        import redis  # noqa: F401  (imported before the run starts, as a warm process would have it)
    except ImportError:
        pass
    ch.send({"type": "hello", "protocol": PROTOCOL, "sdk": "fencesim-python 0.1 (real)", "reuse": False})
    ch.init = ch.read()
    try:
        main()
    except SystemExit:
        raise
    except BaseException:
        import traceback
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)
    ch.send({"type": "yield"})
    while True:  # idle until the runner ends the run
        if ch.read().get("type") == "end":
            return 0
