// real/run.cpp — what real/run.hpp declares out of line.
#include "real/run.hpp"

#include <fstream>

namespace fencesim::real {

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted = true; }

std::string tail_of(const fs::path& p, int lines) {
  std::ifstream in(p);
  std::deque<std::string> q;
  std::string l;
  while (std::getline(in, l)) {
    q.push_back(l);
    if (static_cast<int>(q.size()) > lines) q.pop_front();
  }
  std::string out;
  for (auto& x : q) out += "    " + x + "\n";
  return out;
}

}  // namespace fencesim::real
