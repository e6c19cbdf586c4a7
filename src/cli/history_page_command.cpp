// `coldgate history page`: every record of the store, oldest first, as the dashboard page.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/history_command.hpp"
#include "config/config.hpp"
#include "history/page.hpp"
#include "history/record.hpp"
#include "history/store.hpp"
#include "measure/environment.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

namespace coldgate::cli {
namespace {

namespace fs = std::filesystem;

// The config when there is one: -c FILE must exist when it is not the default; the default
// ./coldgate.yaml is optional (a page of a folder store needs no config).
std::optional<config::Config> page_config(const std::string& path) {
  std::error_code ec;
  if (path == HistoryArgs{}.config && !fs::exists(path, ec)) return std::nullopt;
  if (!fs::exists(path, ec)) {
    throw usage_error(path, "config file not found; pass -c FILE, or leave -c out to read only "
                            "--store");
  }
  return config::load(path);
}

// The remote's web address, for commit links; "" when git, the repository or the remote is
// not there (the page then has no links).
std::string remote_web_url(const fs::path& repo, const std::string& remote) {
  if (!util::find_program("git")) return "";
  util::SpawnOptions options;
  options.argv = {"git", "remote", "get-url", "--", remote};
  options.cwd = repo;
  try {
    util::RunOutput out = util::run(options, std::chrono::seconds(10));
    return out.status.ok() ? history::repository_web_url(out.out) : "";
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted) throw;
    return "";
  }
}

}  // namespace

int run_history_page(const HistoryArgs& args) {
  if (args.out.empty()) {
    throw usage_error("history page", "-o DIR is required: the folder to write index.html into");
  }
  std::optional<config::Config> cfg = page_config(args.config);
  fs::path base_dir = cfg ? cfg->base_dir : fs::current_path();

  std::string chart_path = history::chart_js_path();
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

  // TODO(integrator): the config's history.store between --store and the built-in default.
  std::string store_text = !args.store.empty() ? args.store : "git:coldgate-history";
  history::StoreSpec spec = history::parse_store(store_text, base_dir, "--store");
  std::vector<std::string> warnings;
  std::vector<history::StoredFile> files = history::read_files(spec, base_dir, args.remote, warnings);
  std::vector<history::Record> records;
  for (const auto& file : files) {
    try {
      history::Record record = history::from_json(file.contents, file.where);
      if (args.branch.empty() || record.branch == args.branch) records.push_back(std::move(record));
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;
      warnings.push_back("skipped " + file.where + ": " + e.what());
    }
  }
  for (const auto& w : warnings) std::cerr << "coldgate: warning: history page: " << w << '\n';
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.date != b.date ? a.date < b.date : a.recorded_at < b.recorded_at;
  });

  if (cfg) options.title = cfg->report.title;
  options.repo_url = !args.repo_url.empty() ? args.repo_url : remote_web_url(base_dir, args.remote);
  options.generated_at = measure::utc_now();
  fs::path page = fs::path(args.out) / "index.html";
  util::write_file_atomic(page, history::page_html(records, options));
  std::cerr << "coldgate: history page: " << records.size() << " record"
            << (records.size() == 1 ? "" : "s") << " from " << spec.text << '\n';
  std::cout << page.string() << '\n';
  return 0;
}

}  // namespace coldgate::cli
