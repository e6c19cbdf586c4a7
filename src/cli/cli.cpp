#include "cli/cli.hpp"

#include <iostream>

namespace coldgate::cli {

int main(int, char**) {
  std::cout << "coldgate " << COLDGATE_VERSION << '\n';
  return 0;
}

}  // namespace coldgate::cli
