// A resource program (docs/PROTOCOL.md "Resource programs"): an object
// store's conditional PUT, S3-style. The client sends the ETag of the
// object it read in If-Match; the store answers 412 Precondition Failed
// when the object's ETag is another one now. S3's ETag of a single-part
// upload is the MD5 of the body, so it is computed from the content: the
// value the client read (request.value_read) against the value stored
// (state.value). Nothing is remembered between checks: the object is the
// state. Run by scenarios/programs/resource-program-s3-if-match.json with
// sdk/node/run.js.
const crypto = require("crypto");
const fencesim = require("fencesim");

const etag = (value) => `"${crypto.createHash("md5").update(String(value)).digest("hex")}"`;

fencesim.check((request, state) => {
  if (request.op === "read") return fencesim.accept(); // GET: no precondition
  const ifMatch = etag(request.value_read);
  const current = etag(state.value);
  if (ifMatch !== current) return fencesim.reject(`412 Precondition Failed (If-Match ${ifMatch}, ETag ${current})`);
  return fencesim.accept();
});
