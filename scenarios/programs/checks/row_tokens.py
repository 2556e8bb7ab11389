"""A resource program (docs/PROTOCOL.md "Resource programs"): a table whose
rows each keep the last fencing token that wrote them, the check a team
writes in SQL as

    UPDATE rows SET value = $2, last_token = $3
     WHERE id = $1 AND last_token < $3        -- 0 rows: a stale holder

Each lock guards its own row (request["lock"]), and each row's tokens come
from that lock's own counter, so the check compares a token only with its
own row's last one. The row's last token is a mark of the copy
(state["marks"][row]): durable through a crash of the copy, carried by
replication, shown in the report. Run by scenarios/programs/
resource-program-row-tokens.json with ``python3 -m fencesim``."""
import fencesim


@fencesim.check
def check(request, state):
    if request["op"] == "read":
        return fencesim.accept()  # reads take no lock on the row
    row = request["lock"]
    token = request["token"]
    last = state["marks"].get(row, 0)
    if token is None:
        return fencesim.reject("%s: a write without a fencing token" % row)
    if token <= last:
        return fencesim.reject("%s: token %d <= the row's last_token %d" % (row, token, last))
    marks = dict(state["marks"])
    marks[row] = token
    return fencesim.accept(marks=marks)
