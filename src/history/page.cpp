// Placeholder until the page lands: every call fails loudly.
#include "history/page.hpp"

#include "util/error.hpp"

namespace coldgate::history {

std::string chart_js_path() { return "/usr/share/javascript/chart.js/chart.min.js"; }

std::string page_html(const std::vector<Record>&, const PageOptions&) {
  throw Error(ExitCode::infrastructure, "history page", "the page is not built yet");
}

}  // namespace coldgate::history
