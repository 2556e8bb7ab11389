"""The process's life: hello, then for each run init → the program's tasks
in lockstep → end (PROTOCOL.md "Speed": a reusable process answers ready
and waits for the next init)."""
import sys
import traceback

from . import _patch, _state
from ._core import PROTOCOL, ProtocolError, _RunEnded, open_channel


def serve(main, reuse):
    ch = open_channel()
    _state.set_channel(ch)
    ch.send({"type": "hello", "protocol": PROTOCOL, "sdk": "fencesim-python 0.1", "reuse": bool(reuse)})
    while True:
        try:
            msg = ch.read()
        except _RunEnded:
            return 0  # fencesim closed our stdin: it is done with us
        if msg.get("type") != "init":
            raise ProtocolError("expected init, got %r" % (msg,))
        ch.init = msg
        ch._next_id = 1
        ch.ended = False
        _patch.install(ch, msg["seed"])
        try:
            ch.spawn(main, "main")
            ch.run_until_end()
        except _RunEnded:
            return 0
        except BaseException:
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            import os
            os._exit(1)  # the program failed: fencesim reports it (exit 3)
        finally:
            ch.finish()
            _patch.uninstall()
        if not reuse:
            return 0
        ch.send({"type": "ready"})
