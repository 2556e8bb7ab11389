"""asyncio mode (fencesim.aio): a renewal coroutine beside the work, as
two asyncio tasks on simulated time. python3 -m fencesim async_client.py"""
import asyncio
import uuid

import fencesim
from fencesim import aio

me = fencesim.client()
KEY, TTL_MS = me["lock"]["key"], me["lock"]["ttl"] // 1_000_000
log = []


async def renew(value, stop):
    while not stop.is_set():
        await asyncio.sleep(TTL_MS / 3000)
        if stop.is_set():
            return
        r = await aio.redis("EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then "
                            "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0", 1, KEY, value, TTL_MS)
        log.append("renew %s at %d" % (r, fencesim.now()["monotonic"] // 1_000_000))
        if r != 1:
            fencesim.lost("renewal refused")
            return


async def main():
    value = uuid.uuid4().hex
    while (await aio.redis("SET", KEY, value, "NX", "PX", TTL_MS)) is None:
        await asyncio.sleep(0.1)
    fencesim.held(value, None)
    stop = asyncio.Event()
    renewal = asyncio.get_running_loop().create_task(renew(value, stop))
    v = (await aio.resource.read())["value"]
    await asyncio.sleep(TTL_MS / 1000 * 1.5)  # longer than the TTL: the renewals keep it
    w = await aio.resource.write(v + 1, read_value=v)
    stop.set()
    fencesim.released()
    await aio.redis("DEL", KEY)
    await renewal
    log.append("wrote %s at %d" % (w["accepted"], fencesim.now()["monotonic"] // 1_000_000))
    fencesim.note("; ".join(log))


fencesim.run_async(main)
