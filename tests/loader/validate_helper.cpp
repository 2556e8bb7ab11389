// tests/loader/validate_helper.cpp — `fencesim_validate_helper FILE...`: loads
// each file with the scenario loader; prints "ok FILE" or the error line.
// Exit 0 when every file loads, 2 when one does not (the CLI's "invalid
// scenario" code). Used by schema_check.py to compare loader and schema.
#include <iostream>

#include "loader/loader.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: fencesim_validate_helper FILE...\n";
    return 64;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    const fencesim::LoadResult r = fencesim::load_scenario_file(argv[i]);
    if (r.error) {
      std::cout << r.error->to_string() << "\n";
      rc = 2;
    } else {
      std::cout << "ok " << argv[i] << "\n";
    }
  }
  return rc;
}
