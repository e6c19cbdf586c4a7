// Placeholder until the store lands: every call fails loudly.
#include "history/store.hpp"

#include "util/error.hpp"

namespace coldgate::history {

StoreSpec parse_store(std::string_view, const std::filesystem::path&, const std::string& where) {
  throw Error(ExitCode::infrastructure, where, "history stores are not built yet");
}

std::vector<StoredFile> read_files(const StoreSpec& spec, const std::filesystem::path&,
                                   const std::string&, std::vector<std::string>&) {
  throw Error(ExitCode::infrastructure, spec.text, "history stores are not built yet");
}

std::string write_file(const StoreSpec& spec, const std::filesystem::path&, const std::string&,
                       const std::string&, const WriteOptions&) {
  throw Error(ExitCode::infrastructure, spec.text, "history stores are not built yet");
}

}  // namespace coldgate::history
