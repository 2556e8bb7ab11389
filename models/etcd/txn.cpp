// models/etcd/txn.cpp — etcd's general transaction (models/etcd/txn.hpp):
// the txn itself, and the member's apply of it (EtcdMember::apply_txn).
#include "models/etcd/txn.hpp"

#include <algorithm>
#include <charconv>

#include "models/etcd/etcd.hpp"
#include "sim/basics.hpp"

namespace fencesim::etcd {

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

bool key_in_range(std::string_view key, std::string_view from, std::string_view range_end) {
  if (range_end.empty()) return key == from;
  if (key < from) return false;
  return range_end == std::string_view("\0", 1) || key < range_end;
}

namespace {

bool overlaps(const TxnOp& del, const TxnOp& put) { return key_in_range(put.key, del.key, del.range_end); }

std::string check_branch(const std::vector<TxnOp>& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != TxnOp::Kind::kPut) continue;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (k == i) continue;
      const bool twice = ops[k].kind == TxnOp::Kind::kPut && ops[k].key == ops[i].key;
      const bool deleted = ops[k].kind == TxnOp::Kind::kDelete && overlaps(ops[k], ops[i]);
      if (twice || deleted) return "duplicate key given in txn request";
    }
  }
  return "";
}

// serialize / parse: each field is "<decimal length>:<bytes>".
void put_field(std::string& out, std::string_view f) {
  out += std::to_string(f.size());
  out += ':';
  out += f;
}
void put_number(std::string& out, std::int64_t v) { put_field(out, std::to_string(v)); }

struct Reader {
  std::string_view text;
  std::string_view field() {
    const std::size_t colon = text.find(':');
    std::size_t n = 0;
    if (colon == std::string_view::npos ||
        std::from_chars(text.data(), text.data() + colon, n).ptr != text.data() + colon ||
        n > text.size() - colon - 1) {
      throw sim::ModelBug("etcd: a malformed txn command");
    }
    std::string_view f = text.substr(colon + 1, n);
    text.remove_prefix(colon + 1 + n);
    return f;
  }
  std::int64_t number() {
    const std::string_view f = field();
    std::int64_t v = 0;
    std::from_chars(f.data(), f.data() + f.size(), v);
    return v;
  }
};

void put_ops(std::string& out, const std::vector<TxnOp>& ops) {
  put_number(out, static_cast<std::int64_t>(ops.size()));
  for (const TxnOp& op : ops) {
    put_number(out, static_cast<int>(op.kind));
    put_field(out, op.key);
    put_field(out, op.range_end);
    put_field(out, op.value);
    put_number(out, op.lease);
    put_number(out, op.limit);
  }
}

std::vector<TxnOp> read_ops(Reader& r) {
  std::vector<TxnOp> ops(static_cast<std::size_t>(r.number()));
  for (TxnOp& op : ops) {
    op.kind = static_cast<TxnOp::Kind>(r.number());
    op.key = r.field();
    op.range_end = r.field();
    op.value = r.field();
    op.lease = r.number();
    op.limit = r.number();
  }
  return ops;
}

/// compareKV: the compare's outcome for one key's values.
bool compare_kv(const TxnCompare& c, const KeyValue& kv) {
  int result = 0;
  if (c.target == TxnCompare::Target::kValue) {
    const int cmp = kv.value.compare(c.value);
    result = cmp < 0 ? -1 : (cmp > 0 ? 1 : 0);
  } else {
    std::int64_t have = 0;
    switch (c.target) {
      case TxnCompare::Target::kVersion: have = kv.version; break;
      case TxnCompare::Target::kCreate: have = kv.create_revision; break;
      case TxnCompare::Target::kMod: have = kv.mod_revision; break;
      case TxnCompare::Target::kLease: have = kv.lease; break;
      case TxnCompare::Target::kValue: break;
    }
    result = have < c.number ? -1 : (have > c.number ? 1 : 0);
  }
  switch (c.result) {
    case TxnCompare::Result::kEqual: return result == 0;
    case TxnCompare::Result::kGreater: return result > 0;
    case TxnCompare::Result::kLess: return result < 0;
    case TxnCompare::Result::kNotEqual: return result != 0;
  }
  return false;
}

}  // namespace

std::string TxnSpec::check() const {
  std::string why = check_branch(success);
  return why.empty() ? check_branch(failure) : why;
}

std::string TxnSpec::serialize() const {
  std::string out;
  put_number(out, static_cast<std::int64_t>(compare.size()));
  for (const TxnCompare& c : compare) {
    put_field(out, c.key);
    put_field(out, c.range_end);
    put_number(out, static_cast<int>(c.target));
    put_number(out, static_cast<int>(c.result));
    put_number(out, c.number);
    put_field(out, c.value);
  }
  put_ops(out, success);
  put_ops(out, failure);
  return out;
}

TxnSpec TxnSpec::parse(std::string_view text) {
  Reader r{text};
  TxnSpec t;
  t.compare.resize(static_cast<std::size_t>(r.number()));
  for (TxnCompare& c : t.compare) {
    c.key = r.field();
    c.range_end = r.field();
    c.target = static_cast<TxnCompare::Target>(r.number());
    c.result = static_cast<TxnCompare::Result>(r.number());
    c.number = r.number();
    c.value = r.field();
  }
  t.success = read_ops(r);
  t.failure = read_ops(r);
  if (!r.text.empty()) throw sim::ModelBug("etcd: a malformed txn command (trailing bytes)");
  return t;
}

// ------------------------------------------------------ EtcdMember::apply_txn

bool EtcdMember::compare_holds(const TxnCompare& c) const {
  bool any = false;
  for (auto it = keys_.lower_bound(c.key); it != keys_.end() && key_in_range(it->first, c.key, c.range_end); ++it) {
    any = true;
    if (!compare_kv(c, it->second)) return false;
  }
  // No key: a VALUE compare fails; the others compare a zero KeyValue.
  if (!any) return c.target != TxnCompare::Target::kValue && compare_kv(c, KeyValue{});
  return true;
}

void EtcdMember::apply_txn(const TxnSpec& txn, Response& resp,
                           std::vector<std::pair<std::string, std::int64_t>>& deleted) {
  resp.succeeded =
      std::all_of(txn.compare.begin(), txn.compare.end(), [this](const TxnCompare& c) { return compare_holds(c); });
  const std::vector<TxnOp>& ops = resp.succeeded ? txn.success : txn.failure;
  // checkRequestPut: an unknown lease fails the txn before anything applies.
  for (const TxnOp& op : ops) {
    if (op.kind == TxnOp::Kind::kPut && op.lease != 0 && leases_.count(op.lease) == 0) {
      resp.error = "lease not found";
      resp.succeeded = false;
      return;
    }
  }
  const std::int64_t rev = revision_ + 1;
  bool changed = false;
  for (const TxnOp& op : ops) {
    TxnOpResult out;
    out.kind = op.kind;
    if (op.kind == TxnOp::Kind::kPut) {
      put_key(op.key, op.value, op.lease, rev);
      changed = true;
    } else if (op.kind == TxnOp::Kind::kRange) {
      range_into(op.key, op.range_end, op.limit, out);
    } else {
      std::vector<std::string> doomed;
      for (auto it = keys_.lower_bound(op.key); it != keys_.end() && key_in_range(it->first, op.key, op.range_end);
           ++it) {
        doomed.push_back(it->first);
      }
      for (const std::string& k : doomed) {
        record_event(false, KeyValue{k, "", 0, rev, 0, 0});
        delete_key(k, deleted);
      }
      out.deleted = static_cast<std::int64_t>(doomed.size());
      changed = changed || !doomed.empty();
    }
    resp.responses.push_back(std::move(out));
  }
  if (changed) revision_ = rev;
}

void EtcdMember::range_into(const std::string& key, const std::string& range_end, std::int64_t limit,
                            TxnOpResult& out) const {
  for (auto it = keys_.lower_bound(key); it != keys_.end() && key_in_range(it->first, key, range_end); ++it) {
    ++out.count;
    if (limit > 0 && static_cast<std::int64_t>(out.kvs.size()) == limit) {
      out.more = true;
      continue;
    }
    out.kvs.push_back(it->second);
  }
}

}  // namespace fencesim::etcd
