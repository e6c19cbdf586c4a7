#pragma once

#include <string>

namespace coldgate::cli {

/// Arguments of `coldgate comment` (and of `coldgate run --comment`).
struct CommentArgs {
  std::string out = "coldgate-out";  // --out: where report.md (and results.json) are
  std::string config;                // -c: report.title for the key; "" = ./coldgate.yaml when present
  std::string mode;                  // always | on-change | never; "" = always
  std::string forge;                 // github | gitlab; "" = detected from the environment
  std::string token_env;             // variable holding the token; "" = the forge's default
  std::string key;                   // marker key; "" = report.md's marker, else the config title
  long pr = 0;                       // pull/merge request number; 0 = from the environment
  long timeout_s = 60;               // total time of each request with its retries, seconds
  bool dry_run = false;              // print the requests instead of sending them
  bool optional = false;             // a missing token/forge/PR number is a warning, exit 0
  bool verbose = false;              // log every request and response (credential masked)
  std::string footer;                // not an option: a last line after the report (coldgate stack's
                                     // place in the stack), kept when the report is cut
};

/// Posts <out>/report.md as the pull/merge request comment with the marker
/// `<!-- coldgate:report:<key> -->`, updating coldgate's earlier comment of that key in place
/// (forge/forge.hpp upsert_comment); cuts the body under report::k_max_report_bytes. Returns 0
/// when posted, updated or skipped, also (with a warning) when the token is read-only on a pull
/// request from a fork. Throws Error(usage) for bad options or a missing report.md,
/// Error(infrastructure) for network and authorization failures and a missing token, forge or
/// PR number (a warning and 0 with `optional`).
int run_comment(const CommentArgs& args);

}  // namespace coldgate::cli
