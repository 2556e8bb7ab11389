"""redis-py (Debian's python3-redis 4.3) talking to the simulated Redis.

``SimConnection`` replaces redis-py's socket connection: ``send_command``
keeps the argv, ``read_response`` sends it as a ``redis`` request
(PROTOCOL.md "Redis commands") and turns the JSON RESP answer back into
what redis-py's own parser returns (bytes, ints, lists, errors through
``BaseParser.parse_error``, so NoScriptError, ReadOnlyError… are redis-py's
own classes). Everything above the connection — ``redis.Redis``, its
response callbacks, ``redis.lock.Lock``, ``Script`` — is redis-py's code,
unchanged.

``install()`` (the runner calls it once in the simulation) makes
SimConnection redis-py's default connection class and routes redis-py's
own Sentinel classes over it: ``redis.Redis(host="redis-1")`` and
``redis.sentinel.Sentinel([("sentinel-0", 26379)]).master_for("fencesim")``
then talk to the simulated nodes of those names, unchanged.
"""
import redis
import redis.sentinel
from redis.connection import BaseParser, Connection
from redis.exceptions import ResponseError, TimeoutError as RedisTimeoutError

from . import _state


def _to_wire(arg, encoder):
    return encoder.encode(arg).decode("latin-1")


def _from_resp(v):
    if v is None or isinstance(v, int):
        return v
    if isinstance(v, str):
        return v.encode("latin-1")
    if isinstance(v, list):
        return [_from_resp(x) for x in v]
    if "status" in v:
        return v["status"].encode("latin-1")
    if "error" in v:
        return BaseParser().parse_error(v["error"])
    raise ValueError("fencesim: not a RESP value: %r" % (v,))


class _Packed(list):
    """Commands redis-py packed for a SimConnection: argv lists, not RESP bytes."""


_LOCAL = (None, "", "localhost", "127.0.0.1", "::1")


class SimConnection(Connection):
    """A redis-py connection to a simulated Redis node: ``node`` (its name),
    else the ``host`` redis-py was given when it names a node (a sentinel's
    answer does), else the service's first node; ``connection``: the
    connection number. Connected (``_sock`` set) from ``connect`` to
    ``disconnect``, as redis-py's own logic expects."""

    def __init__(self, node=None, connection=0, **kwargs):
        super().__init__(**kwargs)
        self.fixed_node = node
        self.connection_number = connection
        self._queue = []  # argvs sent, whose replies are still to be read

    @property
    def node(self):
        return self.fixed_node or (None if self.host in _LOCAL else self.host)

    def repr_pieces(self):
        return [("node", self.node or "(default)"), ("db", self.db)]

    def connect(self):
        self._sock = True  # nothing to open: a simulated node is always reachable to ask

    def disconnect(self, *args):
        self._sock = None
        self._queue = []

    def can_read(self, timeout=0):
        return False

    def check_health(self):
        pass

    def pack_command(self, *args):
        if isinstance(args[0], str):
            args = tuple(args[0].split()) + args[1:]
        return _Packed([[_to_wire(a, self.encoder) for a in args]])

    def pack_commands(self, commands):
        """A pipeline's commands (redis-py packs them, then reads one reply
        per command): each is sent as its own request, in order."""
        packed = _Packed([])
        for args in commands:
            packed.extend(self.pack_command(*args))
        return packed

    def send_packed_command(self, command, check_health=True):
        if not isinstance(command, _Packed):
            raise NotImplementedError("fencesim: raw RESP bytes cannot be sent to the simulated Redis")
        self._queue.extend(command)

    def send_command(self, *args, **kwargs):
        self._queue.extend(self.pack_command(*args))

    def read_response(self, disable_decoding=False):
        argv = self._queue.pop(0)
        msg = {"type": "redis", "args": argv, "connection": self.connection_number}
        if self.node:
            msg["node"] = self.node
        if self.socket_timeout:
            msg["timeout"] = int(self.socket_timeout * 1e9)
        got = _state.channel().request(msg)
        if "error" in got:
            raise RedisTimeoutError("Timeout reading from %s" % (self.node or "redis"))
        response = _from_resp(got["result"])
        if isinstance(response, ResponseError):
            raise response
        if disable_decoding:
            return response
        return _decode(response, self.encoder)


class SimSentinelManagedConnection(redis.sentinel.SentinelManagedConnection, SimConnection):
    """redis-py's own SentinelManagedConnection (its connect asks the
    sentinels through the pool, READONLY becomes a ConnectionError) over
    SimConnection instead of a socket: the MRO puts SimConnection's
    connect, disconnect and read_response under redis-py's."""


def install():
    """SimConnection as redis-py's default connection class, and redis-py's
    Sentinel pools on SimSentinelManagedConnection (see the module's doc)."""
    defaults = redis.connection.ConnectionPool.__init__.__defaults__
    if defaults and defaults[0] is not SimConnection:
        redis.connection.ConnectionPool.__init__.__defaults__ = (SimConnection,) + defaults[1:]
    redis.sentinel.SentinelManagedConnection = SimSentinelManagedConnection


def _decode(v, encoder):
    if isinstance(v, list):
        return [_decode(x, encoder) for x in v]
    return encoder.decode(v)


def pool(node=None, connection=0, **kwargs):
    """A ConnectionPool of SimConnection: ``redis.Redis(connection_pool=pool())``."""
    return redis.ConnectionPool(connection_class=SimConnection, node=node, connection=connection, **kwargs)
