"""The process's life: hello, then for each run init → the program's tasks
in lockstep → end (PROTOCOL.md "Speed": a reusable process answers ready
and waits for the next init)."""
import sys
import traceback

from . import _patch, _state
from ._core import PROTOCOL, ProtocolError, _RunEnded, open_channel


def serve(main, reuse):
    import os
    if os.environ.get("FENCESIM_BACKEND") == "real":
        from . import _real
        return _real.serve(main)
    ch = open_channel()
    _state.set_channel(ch)
    try:
        from . import _redis  # redis-py on simulated nodes, if redis-py is installed
        _redis.install()
    except ImportError:
        pass
    ch.send({"type": "hello", "protocol": PROTOCOL, "sdk": "fencesim-python 0.1", "reuse": bool(reuse)})
    ch.flush()
    while True:
        msg = ch.read()
        if msg.get("type") != "init":
            raise ProtocolError("expected init, got %r" % (msg,))
        ch.init = msg
        ch._next_id = 1
        ch.ended = False
        _patch.install(ch, msg["seed"])
        try:
            ch.run_main(main)
        except _RunEnded:
            pass
        except BaseException as e:
            ch.fail(e)
        finally:
            ch.finish()
            _patch.uninstall()
        if not reuse:
            return 0
        ch.send({"type": "ready"})
        ch.flush()
