// `coldgate history page`: every record of the store, oldest first, as the dashboard page.
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "ab/git.hpp"
#include "cli/history_command.hpp"
#include "history/history.hpp"
#include "history/page.hpp"
#include "measure/environment.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::cli {
namespace {

namespace fs = std::filesystem;

// The remote's web address, for commit links; "" when git, the repository or the remote is
// not there (the page then has no links).
std::string remote_web_url(const fs::path& repo, const std::string& remote) {
  if (!util::find_program("git")) return "";
  std::optional<std::string> url = ab::git(repo, {"remote", "get-url", "--", remote});
  return url ? history::repository_web_url(*url) : "";
}

}  // namespace

int run_history_page(const HistoryArgs& args) {
  util::install_interrupt_handlers();
  if (args.push) {
    throw usage_error("--push", "only `history record` pushes; `history page` reads the store");
  }
  if (args.out.empty()) {
    throw usage_error("history page", "-o DIR is required: the folder to write index.html into");
  }
  const std::string chart_path = history::chart_js_path();
  std::error_code ec;
  if (!fs::is_regular_file(chart_path, ec)) {
    throw Error(ExitCode::infrastructure, chart_path,
                "Chart.js is not there: install libjs-chart.js (apt-get install libjs-chart.js), "
                "or point COLDGATE_CHART_JS at a Chart.js 3 UMD bundle");
  }
  history::PageOptions options;
  try {
    options.chart_js = util::read_file(chart_path);
  } catch (const Error& e) {
    throw Error(ExitCode::infrastructure, chart_path, e.what());
  }

  auto cfg = history_config(args.config, args.store.empty());
  const history::StoreSpec spec = store_spec(args.store, cfg ? &*cfg : nullptr);
  const fs::path repo = cfg ? cfg->base_dir : fs::current_path();
  history::Loaded loaded = history::read_records(spec, repo, args.remote);
  if (!loaded.absent.empty()) loaded.warnings.insert(loaded.warnings.begin(), loaded.absent);
  for (const auto& w : loaded.warnings)
    std::cerr << "coldgate: warning: history page: " << w << '\n';
  std::vector<history::Record> records;  // read_records' order: oldest first
  std::set<std::string> branches;
  for (auto& r : loaded.records) {
    branches.insert(r.branch);
    if (args.branch.empty() || r.branch == args.branch) records.push_back(std::move(r));
  }
  if (!args.branch.empty() && records.empty() && !branches.empty()) {
    std::string names;
    for (const auto& b : branches) names += (names.empty() ? "" : ", ") + b;
    std::cerr << "coldgate: warning: history page: no record of branch " << args.branch << " in "
              << spec.text << " (its records are of " << names << ")\n";
  }

  if (cfg) options.title = cfg->report.title;
  options.repo_url = !args.repo_url.empty() ? args.repo_url : remote_web_url(repo, args.remote);
  options.generated_at = measure::utc_now();
  const fs::path page = fs::path(args.out) / "index.html";
  util::write_file_atomic(page, history::page_html(records, options));
  std::cerr << "coldgate: history page: " << records.size() << " record"
            << (records.size() == 1 ? "" : "s") << " from " << spec.text << '\n';
  std::cout << page.string() << '\n';
  return 0;
}

}  // namespace coldgate::cli
