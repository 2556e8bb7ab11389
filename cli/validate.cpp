// cli/validate.cpp — `fencesim validate FILE...`: load and check, run nothing.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/run.hpp"

namespace fencesim::cli {

namespace {

int cmd_validate(const std::vector<std::string>& files) {
  int code = kExitOk;
  for (const std::string& f : files) {
    const fencesim::LoadResult r = fencesim::load_scenario_file(f);
    if (!r.ok()) {
      std::cerr << "fencesim: " << r.error->to_string() << "\n";
      code = kExitInput;
    } else {
      std::cout << "ok " << f << " (" << r.scenario->name << ")\n";
      for (const std::string& n : r.scenario->notes) std::cerr << "fencesim: " << f << ": note: " << n << "\n";
    }
  }
  return code;
}

}  // namespace

void add_validate_command(CLI::App& app, ValidateArgs& a) {
  CLI::App* validate = app.add_subcommand("validate", "Check scenario files without running them");
  validate->add_option("files", a.files, "Scenario files (JSON)")->required();
  a.command = validate;
}

int start_validate(const ValidateArgs& a) { return cmd_validate(a.files); }

}  // namespace fencesim::cli
