// models/program/channel.hpp — the seam between a program client
// (models/program/program_client.hpp, inside the simulation) and the
// operating-system process that runs the user's program (program/, outside
// it). docs/PROTOCOL.md is the contract spoken over a channel.
//
// Nothing here reads a clock or the OS: the run only writes lines and reads
// the program's answers, in a fixed order (the lockstep), so the run stays a
// pure function of the scenario, the seed and the program. The real-time
// limit on a program's answer (program.yield_timeout) only decides whether
// the run stops with an error; it never changes what a run records.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/program/errors.hpp"
#include "sim/time.hpp"

namespace fencesim::program {

/// What starts one program process (ClientSpec::program, resolved).
struct Launch {
  std::vector<std::string> command;        ///< argv; command[0] looked up in PATH
  std::map<std::string, std::string> env;  ///< added to fencesim's environment
  std::string cwd;                         ///< absolute; the scenario file's folder by default
  sim::Duration yield_timeout{0};          ///< real time allowed for each answer
  std::string client;                      ///< the client's name: FENCESIM_CLIENT
  std::string label;                       ///< "clients[0] (A)": how errors name the client
  /// FENCESIM_BACKEND: "sim" (this simulation) or "real" (fencesim-real).
  std::string backend = "sim";
  /// Extra variables of the real stack (FENCESIM_REDIS, …); empty in the simulation.
  std::map<std::string, std::string> backend_env;
};

/// One program process after its `hello`.
class Channel {
 public:
  virtual ~Channel() = default;  ///< without end(): the process is killed
  /// The hello said `"reuse": true`.
  virtual bool reusable() const = 0;
  /// Writes one line (without its newline). Returns false when the program
  /// has exited with status 0 (it finished its work: the line is dropped);
  /// throws ProgramError kFailure when it died or exited otherwise.
  virtual bool send(const std::string& line) = 0;
  /// The program's next line. nullopt when the program has exited with
  /// status 0; throws ProgramError kFailure when it died, exited otherwise
  /// or sent nothing within yield_timeout (`after` is the delivery quoted
  /// in that message).
  virtual std::optional<std::string> receive(const std::string& after) = 0;
  /// The run is over: sends `end_line`; a reusable program must answer
  /// {"type":"ready"} and goes back to the pool of warm processes for the
  /// next run on this thread; any other program is waited for (at most
  /// yield_timeout) and killed.
  virtual void end(const std::string& end_line) = 0;
  /// The last 16 KiB the program wrote to stderr.
  virtual std::string output() = 0;

  /// Without lockstep (fencesim-real): waits at most `wait` for a line.
  enum class Poll { kLine, kNothing, kExited };
  virtual Poll poll_line(std::chrono::milliseconds wait, std::string& line) = 0;
  /// The process's id (it leads its own process group).
  virtual int pid() const = 0;
};

/// Starts (or takes a warm) process for `l` and reads its hello. Throws
/// ProgramError: kStart when it cannot be started, kProtocol for a bad
/// hello, kFailure when it dies or sends nothing in time. Defined in
/// program/host.cpp.
std::unique_ptr<Channel> launch(const Launch& l);

/// The words of protocol version 1 that both sides use.
inline constexpr int kProtocolVersion = 1;

}  // namespace fencesim::program
