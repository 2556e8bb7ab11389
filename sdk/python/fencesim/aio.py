"""asyncio mode: your program as coroutines on simulated time.

    import asyncio, fencesim
    from fencesim import aio

    async def main():
        await aio.redis("SET", "lock", "v", "NX", "PX", 10000)
        await asyncio.sleep(0.5)            # simulated
        ...
    fencesim.run_async(main)                 # or python3 -m fencesim client.py with fencesim.run_async(main) in it

The event loop is asyncio's own (a SelectorEventLoop) with two changes:
``loop.time()`` is the client's simulated monotonic clock, and its selector
waits for fencesim's next delivery instead of sockets. When every task
waits, ``select`` asks for a timer at the loop's next deadline (if any),
sends ``yield`` and reads one delivery: a reply completes its request's
future, a timer returns so that asyncio runs what fell due. Tasks run in
asyncio's own FIFO order, so a deterministic program stays deterministic
(PROTOCOL.md "Lockstep"). Inside it, use these coroutines, not the blocking
calls of the sync mode (``fencesim.redis()``, ``resource.read()``).
"""
import asyncio
import math
import selectors

from . import _state
from ._core import _RunEnded
from . import RequestTimeout


class _SimSelector(selectors.BaseSelector):
    def __init__(self):
        self._keys = {}
        self.futures = {}

    def register(self, fileobj, events, data=None):
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        key = selectors.SelectorKey(fileobj, fd, events, data)
        self._keys[fd] = key
        return key

    def unregister(self, fileobj):
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        return self._keys.pop(fd)

    def modify(self, fileobj, events, data=None):
        self.unregister(fileobj)
        return self.register(fileobj, events, data)

    def get_map(self):
        return self._keys

    def close(self):
        self._keys.clear()

    def select(self, timeout=None):
        if timeout == 0:
            return []
        ch = _state.channel()
        timer = None
        if timeout is not None:
            timer = ch.new_id()
            ch.send({"type": "timer", "id": timer, "after": max(1, math.ceil(timeout * 1e9))})
        ch.send({"type": "yield"})
        ch.flush()
        msg = ch.read()
        if msg.get("type") == "end":
            ch.end_message = msg
            raise _RunEnded()
        if timer is not None and msg.get("id") != timer:
            ch.send({"type": "cancel", "id": timer})  # goes out with the next lines
        fut = self.futures.pop(msg.get("id"), None)
        if fut is not None and not fut.done():
            fut.set_result(msg)
        return []


class SimEventLoop(asyncio.SelectorEventLoop):
    """asyncio's loop on the client's simulated monotonic clock."""

    def __init__(self):
        super().__init__(selector=_SimSelector())

    def time(self):
        return _state.channel().time["monotonic"] / 1e9


async def request(type, **fields):
    """Any request of PROTOCOL.md that crosses the simulated network; its result."""
    loop = asyncio.get_running_loop()
    ch = _state.channel()
    msg = {"type": type}
    msg.update({k: v for k, v in fields.items() if v is not None})
    msg["id"] = ch.new_id()
    fut = loop.create_future()
    loop._selector.futures[msg["id"]] = fut
    ch.send(msg)
    got = await fut
    if "error" in got:
        raise RequestTimeout("%s request: %s" % (type, got["error"]))
    return got.get("result")


async def redis(*args, node=None, connection=0):
    """A Redis command; its RESP reply as PROTOCOL.md's JSON (errors as {"error": …})."""
    return await request("redis", args=[a if isinstance(a, (int, str)) else str(a) for a in args], node=node,
                         connection=connection)


async def etcd(method, **fields):
    return await request("etcd", method=method, **fields)


class resource:
    @staticmethod
    async def read(token=None):
        return await request("resource", op="read", token=token)

    @staticmethod
    async def write(value, token=None, read_value=None, expected_version=None, tag=None):
        return await request("resource", op="write", value=value, token=token, read_value=read_value,
                             expected_version=expected_version, tag=tag)


def run(main):
    """Runs the coroutine function ``main`` on a SimEventLoop (a fresh loop per run)."""
    loop = SimEventLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
