#include "config/config.hpp"

namespace coldgate::config {

const std::map<std::string, std::vector<std::string>>& known_keys() {
  static const std::vector<std::string> k_gate = {"max_ratio", "warn_ratio",
                                                  "min_delta", "min_delta_bytes",
                                                  "metrics",   "require_same_environment",
                                                  "max_query_ratio", "min_query_delta",
                                                  "max_blocks_ratio", "min_blocks_delta",
                                                  "statements", "max_extra_runs", "growth"};
  static const std::vector<std::string> k_top_gate = [] {
    std::vector<std::string> keys = k_gate;
    keys.push_back("migration");
    return keys;
  }();
  static const std::map<std::string, std::vector<std::string>> k_keys = {
      {"", {"version", "database", "setup", "build", "defaults", "stages", "gate", "report",
            "history", "env", "scales", "production_scale", "migrate"}},
      {"migrate", {"command", "sql_dir"}},
      {"database",
       {"provider", "version", "bindir", "image", "engine", "run_args", "url", "restart_command", "name",
        "settings", "profile", "plans"}},
      {"setup[]", {"sql", "psql", "restore", "command", "analyze"}},
      {"setup[].psql", {"file", "database", "variables"}},
      {"defaults", {"runs", "warm", "cold", "isolation", "timeout", "max_result_bytes",
                    "repeated_threshold", "try_runs"}},
      {"stages[]",
       {"name", "sql", "query", "command", "params", "settings", "settings_via", "decode", "runs",
        "warm", "cold", "isolation", "timeout", "max_result_bytes", "snapshot", "gate", "profile",
        "repeated_threshold", "requests", "try_runs", "remedies", "env", "scales"}},
      {"stages[].snapshot",
       {"path", "from", "ordered", "identity", "redact", "redact_ids", "max_depth"}},
      {"stages[].gate", k_gate},
      {"stages[].remedies[]", {"name", "settings"}},
      {"gate", k_top_gate},
      {"gate.migration", {"max_rewrite_rows", "max_stall", "max_lock_wait", "lock_timeout"}},
      {"report", {"title", "comment"}},
      {"history", {"store"}},
  };
  return k_keys;
}

}  // namespace coldgate::config
