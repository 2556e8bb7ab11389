"""redis-py (Debian's python3-redis 4.3) talking to the simulated Redis.

``SimConnection`` replaces redis-py's socket connection: ``send_command``
keeps the argv, ``read_response`` sends it as a ``redis`` request
(PROTOCOL.md "Redis commands") and turns the JSON RESP answer back into
what redis-py's own parser returns (bytes, ints, lists, errors through
``BaseParser.parse_error``, so NoScriptError, ReadOnlyError… are redis-py's
own classes). Everything above the connection — ``redis.Redis``, its
response callbacks, ``redis.lock.Lock``, ``Script`` — is redis-py's code,
unchanged.
"""
import redis
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


class SimConnection(Connection):
    """A redis-py connection to a simulated Redis node (``node``: its name,
    default the service's first; ``connection``: the connection number)."""

    def __init__(self, node=None, connection=0, **kwargs):
        kwargs.pop("host", None)
        kwargs.pop("port", None)
        super().__init__(**kwargs)
        self.node = node
        self.connection_number = connection
        self._queue = []  # argvs sent, whose replies are still to be read

    def repr_pieces(self):
        return [("node", self.node or "(default)"), ("db", self.db)]

    def connect(self):
        pass

    def disconnect(self, *args):
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


class SentinelSimConnection(SimConnection):
    """A SimConnection to the primary the sentinels name: on connect it asks
    them in turn (``SENTINEL get-master-addr-by-name``, as redis-py's
    ``Sentinel.discover_master``); a READONLY answer or a timeout makes it
    ask again on the next command (as redis-py's
    ``SentinelManagedConnection``, which turns READONLY into a
    ConnectionError)."""

    def __init__(self, service_name=None, sentinels=None, **kwargs):
        super().__init__(**kwargs)
        self.service_name = service_name
        self.sentinels = sentinels

    def connect(self):
        if self.node is None:
            self.node = self._discover()

    def disconnect(self, *args):
        super().disconnect(*args)
        self.node = None

    def _discover(self):
        from redis.exceptions import ConnectionError as RedisConnectionError
        timeout = int((self.socket_timeout or 1.0) * 1e9)
        for s in self.sentinels:
            got = _state.channel().request({"type": "redis", "node": s, "timeout": timeout,
                                            "args": ["SENTINEL", "get-master-addr-by-name", self.service_name]})
            addr = got.get("result")
            if isinstance(addr, list) and len(addr) == 2:
                return addr[0]
        raise RedisConnectionError("No master found for %r: no sentinel answered with one" % self.service_name)

    def read_response(self, disable_decoding=False):
        from redis.exceptions import ConnectionError as RedisConnectionError, ReadOnlyError
        try:
            return super().read_response(disable_decoding)
        except ReadOnlyError:
            self.node = None
            raise RedisConnectionError("The previous master is now a slave")
        except RedisTimeoutError:
            self.node = None
            raise


def _decode(v, encoder):
    if isinstance(v, list):
        return [_decode(x, encoder) for x in v]
    return encoder.decode(v)


def sentinel_pool(service_name, sentinels, connection=0, **kwargs):
    """A ConnectionPool of SentinelSimConnection."""
    return redis.ConnectionPool(connection_class=SentinelSimConnection, service_name=service_name,
                                sentinels=sentinels, node=None, connection=connection, **kwargs)


def pool(node=None, connection=0, **kwargs):
    """A ConnectionPool of SimConnection: ``redis.Redis(connection_pool=pool())``."""
    return redis.ConnectionPool(connection_class=SimConnection, node=node, connection=connection, **kwargs)
