"""The process's one channel to fencesim (set by the runner)."""
_channel = None


def channel():
    if _channel is None:
        raise RuntimeError("fencesim: not running under fencesim (start the program from a scenario's "
                           "clients[].program, or with fencesim.run(main))")
    return _channel


def set_channel(ch):
    global _channel
    _channel = ch
