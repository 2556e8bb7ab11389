#include "models/workloads/register_workload.hpp"

namespace fencesim::workloads {

std::shared_ptr<const resource::OpReply> RegisterWorkload::ask(sim::Process& p, sim::PayloadPtr req) const {
  std::optional<sim::Message> reply = p.call(setup_.copy, std::move(req), setup_.command_timeout);
  if (!reply || reply->as<resource::OpReply>() == nullptr) return nullptr;
  return std::static_pointer_cast<const resource::OpReply>(reply->body);
}

std::optional<RegisterWorkload::Seen> RegisterWorkload::read(const Iteration& it, std::string& failure) const {
  auto req = sim::make_payload<resource::ReadRequest>();
  if (setup_.resource.fence_reads) req->token = it.token;
  req->lease_value = it.lease_value;
  req->iteration = it.index;
  const auto reply = ask(it.process, req);
  if (reply == nullptr) {
    failure = "read timed out";
    return std::nullopt;
  }
  if (!reply->accepted) {
    failure = "read rejected: " + reply->reason;
    return std::nullopt;
  }
  return Seen{reply->value, reply->version, reply->tag};
}

IterationResult RegisterWorkload::write(const Iteration& it, const Seen& seen) const {
  auto req = sim::make_payload<resource::WriteRequest>();
  req->token = it.token;
  req->read_value = seen.value;
  req->value = next_value(seen);
  if (setup_.resource.kind == ResourceKind::kCas) req->expected_version = seen.version;
  req->tag = tag();
  req->lease_value = it.lease_value;
  req->iteration = it.index;
  const std::int64_t written = req->value;
  const auto reply = ask(it.process, req);
  if (reply == nullptr) return {false, "write timed out"};
  if (!reply->accepted) return {false, "write rejected: " + reply->reason};
  return {true, success_text(seen, written)};
}

IterationResult RegisterWorkload::iterate(const Iteration& it) {
  std::string failure;
  const std::optional<Seen> seen = read(it, failure);
  if (!seen) return {false, std::move(failure)};
  it.process.sleep(it.work.value_or(setup_.spec.work));
  return write(it, *seen);
}

}  // namespace fencesim::workloads
