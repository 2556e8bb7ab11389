"""etcd calls under fencesim-real (``FENCESIM_BACKEND=real``): the runner's
real etcd members, through etcd's JSON gateway (HTTP, etcd v3.4
api/etcdserverpb/gw), answered in the shape the simulation gives
(PROTOCOL.md "etcd requests"): the same program reads the same fields.

``FENCESIM_ETCD`` is ``host:port,host:port,…`` of etcd-0, etcd-1, … (the
runner's links to them, so its link faults reach the program); a request's
``node`` picks one (default etcd-0). The gateway speaks base64 for bytes,
strings for int64 and leaves out zero values; all three are undone here.
Standard library only.
"""
import base64
import http.client
import json
import os
import queue
import socket
import threading
import urllib.error
import urllib.request


class Unavailable(Exception):
    """The member did not answer (refused, reset, or no answer in time)."""


def _endpoints():
    eps = [e for e in os.environ.get("FENCESIM_ETCD", "").split(",") if e]
    if not eps:
        raise Unavailable("FENCESIM_ETCD is not set: this scenario's service is not etcd")
    return eps


def _endpoint(node):
    eps = _endpoints()
    if node is None:
        return eps[0]
    if not node.startswith("etcd-") or not node[5:].isdigit() or int(node[5:]) >= len(eps):
        raise ValueError("node %r: the etcd members are etcd-0 … etcd-%d" % (node, len(eps) - 1))
    return eps[int(node[5:])]


def _b64(text):
    return base64.b64encode(text.encode("latin-1")).decode("ascii")


def _text(b64):
    return base64.b64decode(b64 or "").decode("latin-1")


def _int(v):
    return int(v) if v is not None else 0


def _post(node, path, body, timeout=5.0):
    """The gateway's JSON answer; {"error": text} for etcd's own errors."""
    req = urllib.request.Request("http://%s%s" % (_endpoint(node), path), data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        try:
            return {"error": json.loads(e.read().decode()).get("error", "HTTP %d" % e.code)}
        except ValueError:
            return {"error": "HTTP %d" % e.code}
    except (OSError, urllib.error.URLError) as e:
        raise Unavailable(str(e))
    # A streaming call (keepalive) answers {"result": …} lines.
    first = text.strip().split("\n", 1)[0] if text.strip() else "{}"
    got = json.loads(first)
    return got.get("result", got)


def _kv(kv):
    return {"key": _text(kv.get("key")), "value": _text(kv.get("value")),
            "create_revision": _int(kv.get("create_revision")), "mod_revision": _int(kv.get("mod_revision")),
            "version": _int(kv.get("version")), "lease": _int(kv.get("lease"))}


def _result(j, kvs=None):
    out = {"header": {"revision": _int(j.get("header", {}).get("revision"))},
           "succeeded": bool(j.get("succeeded", False)),
           "kvs": kvs if kvs is not None else [_kv(kv) for kv in j.get("kvs", [])],
           "count": _int(j.get("count")), "more": bool(j.get("more", False)),
           "deleted": _int(j.get("deleted"))}
    out["count"] = max(out["count"], len(out["kvs"]))
    if "error" in j:
        out["error"] = j["error"]
    return out


def _range_body(key, range_end="", limit=0, **extra):
    body = {"key": _b64(key)}
    if range_end:
        body["range_end"] = _b64(range_end)
    if limit:
        body["limit"] = limit
    body.update(extra)
    return body


def _op(op):
    """A txn operation of PROTOCOL.md → the gateway's."""
    (kind, f), = op.items()
    if kind == "request_put":
        body = {"key": _b64(f["key"]), "value": _b64(f.get("value", ""))}
        if f.get("lease"):
            body["lease"] = f["lease"]
        return {kind: body}
    if kind == "request_range":
        return {kind: _range_body(f["key"], f.get("range_end", ""), f.get("limit", 0))}
    if kind == "request_delete_range":
        return {kind: _range_body(f["key"], f.get("range_end", ""))}
    raise ValueError("a txn operation must be request_put, request_range or request_delete_range: %r" % (op,))


def _compare(c):
    body = {"key": _b64(c["key"]), "target": c["target"], "result": c["result"]}
    if c.get("range_end"):
        body["range_end"] = _b64(c["range_end"])
    field = {"VERSION": "version", "CREATE": "create_revision", "MOD": "mod_revision", "VALUE": "value",
             "LEASE": "lease"}[c["target"]]
    body[field] = _b64(c[field]) if field == "value" else c[field]
    return body


def _txn_result(j):
    out = _result(j)
    responses = []
    for r in j.get("responses", []):
        (kind, f), = r.items()
        if kind == "response_put":
            responses.append({"response_put": {}})
        elif kind == "response_range":
            kvs = [_kv(kv) for kv in f.get("kvs", [])]
            responses.append({"response_range": {"kvs": kvs, "count": max(_int(f.get("count")), len(kvs)),
                                                 "more": bool(f.get("more", False))}})
        else:
            responses.append({"response_delete_range": {"deleted": _int(f.get("deleted"))}})
            out["deleted"] += _int(f.get("deleted"))
    out["responses"] = responses
    return out


def _prefix_end(prefix):
    from . import prefix_end
    return prefix_end(prefix)


def _txn(node, compare, success, failure):
    return _txn_result(_post(node, "/v3/kv/txn", {"compare": [_compare(c) for c in compare],
                                                  "success": [_op(o) for o in success],
                                                  "failure": [_op(o) for o in failure]}))


def call(msg):
    """One etcd request of PROTOCOL.md against the real members; its result."""
    m = msg.get("method")
    node = msg.get("node")
    if m == "LeaseGrant":
        j = _post(node, "/v3/lease/grant", {"TTL": msg["TTL"]})
        return dict(_result(j), ID=_int(j.get("ID")), TTL=_int(j.get("TTL")))
    if m == "LeaseKeepAlive":
        j = _post(node, "/v3/lease/keepalive", {"ID": msg["ID"]})
        return dict(_result(j), ID=_int(j.get("ID")), TTL=_int(j.get("TTL")))
    if m == "LeaseRevoke":
        return _result(_post(node, "/v3/lease/revoke", {"ID": msg["ID"]}))
    if m == "LeaseTimeToLive":
        j = _post(node, "/v3/lease/timetolive", {"ID": msg["ID"]})
        out = dict(_result(j), ID=_int(j.get("ID")), TTL=_int(j.get("TTL")))
        if _int(j.get("grantedTTL")):
            out["grantedTTL"] = _int(j.get("grantedTTL"))
        return out
    if m == "Put":
        # The simulation answers a put with the key after it: one txn here.
        put = {"request_put": {"key": msg["key"], "value": msg.get("value", ""), "lease": msg.get("lease", 0)}}
        r = _txn(node, [], [put, {"request_range": {"key": msg["key"]}}], [])
        if "error" in r:
            return r
        kvs = r["responses"][1]["response_range"]["kvs"]
        out = dict(r, kvs=kvs, count=len(kvs), succeeded=False)
        del out["responses"]
        return out
    if m in ("Range", "RangePrefix"):
        if m == "RangePrefix":
            body = _range_body(msg["prefix"], _prefix_end(msg["prefix"]), msg.get("limit", 0))
        else:
            body = _range_body(msg["key"], msg.get("range_end", ""), msg.get("limit", 0))
        return _result(_post(node, "/v3/kv/range", body))
    if m == "DeleteRange":
        return _result(_post(node, "/v3/kv/deleterange", _range_body(msg["key"], msg.get("range_end", ""))))
    if m == "Txn":
        return _txn(node, msg.get("compare", []), msg.get("success", []), msg.get("failure", []))
    if m == "RangeLastCreated":
        pfx = msg["prefix"]
        return _result(_post(node, "/v3/kv/range", _range_body(
            pfx, _prefix_end(pfx), 1, sort_order="DESCEND", sort_target="CREATE",
            max_create_revision=msg["max_create_revision"])))
    if m == "MutexTxn":
        # concurrency.Mutex tryAcquire (client/v3/concurrency/mutex.go).
        key, pfx = msg["key"], msg["prefix"]
        j = _post(node, "/v3/kv/txn", {
            "compare": [_compare({"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": 0})],
            "success": [_op({"request_put": {"key": key, "value": "", "lease": msg["lease"]}}),
                        _op({"request_range": {"key": key}}), _owner_op(pfx)],
            "failure": [_op({"request_range": {"key": key}}), _owner_op(pfx)]})
        r = _txn_result(j)
        if "error" in r:
            return r
        ranges = [x["response_range"] for x in r["responses"] if "response_range" in x]
        out = dict(r, kvs=ranges[0]["kvs"], count=len(ranges[0]["kvs"]))
        del out["responses"]
        if ranges[1]["kvs"]:
            out["owner"] = ranges[1]["kvs"][0]
        return out
    raise ValueError("etcd method %r is not available under fencesim-real" % m)


def _owner_op(pfx):
    """getOwner: the first-created key under the prefix."""
    return {"request_range": dict(_range_body(pfx, _prefix_end(pfx), 1), sort_order="ASCEND",
                                  sort_target="CREATE")}


class WatchStream:
    """A Watch (or WatchDelete) on the gateway's streaming /v3/watch: a
    thread reads its lines into a queue of deliveries."""

    def __init__(self, msg):
        self.deliveries = queue.Queue()
        self.closed = False
        self._once = msg.get("method") == "WatchDelete"
        body = _range_body(msg["key"], msg.get("range_end", ""))
        if msg.get("start_revision"):
            body["start_revision"] = msg["start_revision"]
        host, _, port = _endpoint(msg.get("node")).rpartition(":")
        # http.client, not urllib: close() must be able to cut the stream
        # while the reader thread waits in it (a socket shutdown does).
        self._conn = http.client.HTTPConnection(host, int(port), timeout=5)
        try:
            self._conn.request("POST", "/v3/watch", body=json.dumps({"create_request": body}),
                               headers={"Content-Type": "application/json"})
            self._resp = self._conn.getresponse()
            self._conn.sock.settimeout(None)  # a watch waits as long as it must
        except OSError as e:
            raise Unavailable(str(e))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self._resp:
                if self.closed:
                    return
                j = json.loads(line).get("result", {})
                events = []
                for e in j.get("events", []):
                    kv = e.get("kv", {})
                    if e.get("type") == "DELETE":
                        events.append({"type": "DELETE", "kv": {"key": _text(kv.get("key")),
                                                                "mod_revision": _int(kv.get("mod_revision"))}})
                    elif not self._once:
                        events.append({"type": "PUT", "kv": _kv(kv)})
                if events:
                    self.deliveries.put({"type": "watch", "header": {
                        "revision": _int(j.get("header", {}).get("revision"))}, "events": events})
                    if self._once:
                        return
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return  # cut by close(), or the member went away

    def next(self, timeout=None):
        try:
            return self.deliveries.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self):
        self.closed = True
        try:
            self._conn.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
