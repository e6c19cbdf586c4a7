// Placeholder until the record format lands.
#include "history/record.hpp"

#include "util/error.hpp"

namespace coldgate::history {

const results::Metric* StagePoint::find(std::string_view name) const {
  for (const auto& [n, m] : metrics) {
    if (n == name) return &m;
  }
  return nullptr;
}

const StagePoint* Record::find(std::string_view name) const {
  for (const auto& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Record reduce(const results::Results&, const CommitFacts&, std::string, std::string, std::string) {
  throw Error(ExitCode::usage, "history", "not built yet");
}

std::string file_name(const Record& record) { return record.commit + ".json"; }

std::string to_json(const Record&) { throw Error(ExitCode::usage, "history", "not built yet"); }

Record from_json(std::string_view, const std::string& name) {
  throw Error(ExitCode::usage, name, "not built yet");
}

}  // namespace coldgate::history
