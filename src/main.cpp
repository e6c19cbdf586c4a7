// coldgate: parse, call the library, print the error, return (all logic lives in coldgate_core).
#include <exception>
#include <iostream>

#include "cli/cli.hpp"
#include "util/error.hpp"
#include "util/secrets.hpp"

int main(int argc, char** argv) {
  try {
    return coldgate::cli::main(argc, argv);
  } catch (const coldgate::Error& e) {
    std::cerr << "coldgate: error: " << coldgate::util::mask_secrets(e.message()) << '\n';
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "coldgate: error: " << coldgate::util::mask_secrets(e.what()) << '\n';
    return static_cast<int>(coldgate::ExitCode::infrastructure);
  }
}
