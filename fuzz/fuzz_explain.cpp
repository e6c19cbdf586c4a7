// libFuzzer target: the EXPLAIN (FORMAT JSON) readers — parse_explain and plan_text yield an
// Explain or the plan's text, or a coldgate::Error(infrastructure) carrying the given `where`;
// plan_relations never throws and returns sorted unique names.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "measure/explain.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace measure = coldgate::measure;
  try {
    measure::parse_explain(text, "stage fuzz");
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::infrastructure) std::abort();
    if (e.where() != "stage fuzz") std::abort();
  }
  try {
    measure::plan_text(text, "stage fuzz");
  } catch (const coldgate::Error& e) {
    if (e.code() != coldgate::ExitCode::infrastructure) std::abort();
    if (e.where() != "stage fuzz") std::abort();
  }
  const auto relations = measure::plan_relations(text);
  if (!std::is_sorted(relations.begin(), relations.end())) std::abort();
  if (std::adjacent_find(relations.begin(), relations.end()) != relations.end()) std::abort();
  return 0;
}
