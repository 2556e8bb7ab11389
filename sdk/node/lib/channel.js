"use strict";
// The protocol's pipes (docs/PROTOCOL.md, version 1): JSON lines on fd 0
// (fencesim → program) and fd 1 (program → fencesim), read and written
// synchronously so that nothing of the program runs while the SDK waits for
// a delivery. Request ids, and the handler each id's delivery goes to.
const fs = require("fs");

const PROTOCOL = 1;
// FENCESIM_SDK_TRACE=1: every line in and out, on stderr (it reaches the
// report's "Program output").
const TRACE = Boolean(process.env.FENCESIM_SDK_TRACE);

class ProtocolError extends Error {}

class Channel {
  constructor(inFd = 0, outFd = 1) {
    this.inFd = inFd;
    this.outFd = outFd;
    this.pending = []; // lines waiting for flush()
    this.buffer = Buffer.alloc(0);
    this.chunk = Buffer.alloc(1 << 16);
    this.handlers = new Map(); // id -> {fn, stream}
    this.nextId = 1;
    this.time = { wall: 0, monotonic: 0 };
  }

  /** Queues one message; lines go out together at the next flush(). */
  send(msg) {
    this.pending.push(JSON.stringify(msg));
  }

  flush() {
    if (this.pending.length === 0) return;
    const text = this.pending.join("\n") + "\n";
    if (TRACE) process.stderr.write(text.replace(/^(?=.)/gm, "> "));
    const data = Buffer.from(text, "utf8");
    this.pending = [];
    let off = 0;
    while (off < data.length) {
      try {
        off += fs.writeSync(this.outFd, data, off, data.length - off);
      } catch (e) {
        if (e.code !== "EAGAIN") throw e;
      }
    }
  }

  /** The next message from fencesim; exits quietly when fencesim closed stdin. */
  read() {
    for (;;) {
      const nl = this.buffer.indexOf(10);
      if (nl >= 0) {
        const line = this.buffer.subarray(0, nl).toString("utf8");
        if (TRACE) process.stderr.write(`< ${line}\n`);
        this.buffer = this.buffer.subarray(nl + 1);
        let msg;
        try {
          msg = JSON.parse(line);
        } catch (e) {
          throw new ProtocolError("fencesim sent a line that is not JSON: " + line.slice(0, 200));
        }
        if (msg.time) this.time = msg.time;
        return msg;
      }
      let n;
      try {
        n = fs.readSync(this.inFd, this.chunk, 0, this.chunk.length, null);
      } catch (e) {
        if (e.code === "EAGAIN") continue;
        if (e.code === "EOF") n = 0;
        else throw e;
      }
      if (n === 0) process.exit(0); // fencesim is done with this process
      this.buffer = Buffer.concat([this.buffer, this.chunk.subarray(0, n)]);
    }
  }

  /** Sends `msg` with a fresh id; `fn(delivery)` gets its delivery (every
   * one of them when `stream`: an etcd Watch). Returns the id. */
  request(msg, fn, stream = false) {
    const id = this.nextId++;
    msg.id = id;
    this.handlers.set(id, { fn, stream });
    this.send(msg);
    return id;
  }

  /** Cancels a timer, abandons a request or ends a stream. */
  cancel(id) {
    if (this.handlers.delete(id)) this.send({ type: "cancel", id });
  }

  /** Hands a reply, timer or watch delivery to its handler. */
  deliver(msg) {
    const h = this.handlers.get(msg.id);
    if (h === undefined) return; // cancelled
    if (!h.stream) this.handlers.delete(msg.id);
    h.fn(msg);
  }

  reset() {
    this.handlers.clear();
    this.nextId = 1;
    this.pending = [];
  }
}

module.exports = { Channel, ProtocolError, PROTOCOL };
