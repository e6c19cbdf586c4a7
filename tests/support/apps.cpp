#include "support/apps.hpp"

#include "support/support.hpp"

namespace coldgate::testing {

namespace fs = std::filesystem;

void clone_example_app(const std::string& name, const fs::path& to) {
  const fs::path from = source_dir() / "tests/apps" / name;
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string file = it->path().filename().string();
    if (file == "__pycache__" || file == "node_modules") {
      it.disable_recursion_pending();
      continue;
    }
    const fs::path target = to / fs::relative(it->path(), from);
    if (it->is_directory()) {
      fs::create_directories(target);
    } else {
      fs::copy_file(it->path(), target);
      fs::permissions(target, fs::status(it->path()).permissions());
    }
  }
  run_git(to, {"init", "-q"});
}

}  // namespace coldgate::testing
