#include "db/pqxx_compat.hpp"

#include <memory>

// libpqxx 6.4 through 7.x in one code base: each branch uses only what its version keeps
// undeprecated, so -Werror builds pass on Debian 12 (6.4), Ubuntu 24.04 (7.8) and Debian 13
// (7.10).
#if PQXX_VERSION_MAJOR > 7 || (PQXX_VERSION_MAJOR == 7 && PQXX_VERSION_MINOR >= 10)
#define COLDGATE_PQXX_EXEC_PARAMS 1  // tx.exec(query, params), notice handlers
#elif PQXX_VERSION_MAJOR == 7 && PQXX_VERSION_MINOR >= 6
#define COLDGATE_PQXX_PARAMS_CLASS 1  // pqxx::params with exec_params
#endif

namespace coldgate::db {

namespace {

#if defined(COLDGATE_PQXX_EXEC_PARAMS) || defined(COLDGATE_PQXX_PARAMS_CLASS)
pqxx::params to_params(const Params& params) {
  pqxx::params out;
  for (const auto& p : params) {
    if (p) {
      out.append(*p);
    } else {
      out.append();
    }
  }
  return out;
}
#else
std::vector<const char*> to_pointers(const Params& params) {
  std::vector<const char*> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(p ? p->c_str() : nullptr);
  return out;
}
#endif

#if !defined(COLDGATE_PQXX_EXEC_PARAMS)
// Swallows every notice; libpqxx calls it instead of printing to stderr.
class QuietHandler : public pqxx::errorhandler {
 public:
  explicit QuietHandler(pqxx::connection& c) : pqxx::errorhandler(c) {}
  bool operator()(const char[]) noexcept override { return false; }
};
#endif

}  // namespace

pqxx::result exec_params(pqxx::transaction_base& tx, const std::string& sql, const Params& params) {
#if defined(COLDGATE_PQXX_EXEC_PARAMS)
  return tx.exec(sql, to_params(params));
#elif defined(COLDGATE_PQXX_PARAMS_CLASS)
  return tx.exec_params(sql, to_params(params));
#else
  auto values = to_pointers(params);
  return tx.exec_params(sql, pqxx::prepare::make_dynamic_params(values.begin(), values.end()));
#endif
}

pqxx::result exec_prepared(pqxx::transaction_base& tx, const std::string& name,
                           const Params& params) {
#if defined(COLDGATE_PQXX_EXEC_PARAMS)
  return tx.exec(pqxx::prepped{name}, to_params(params));
#elif defined(COLDGATE_PQXX_PARAMS_CLASS)
  return tx.exec_prepared(name, to_params(params));
#else
  auto values = to_pointers(params);
  return tx.exec_prepared(name, pqxx::prepare::make_dynamic_params(values.begin(), values.end()));
#endif
}

std::shared_ptr<void> silence_notices(pqxx::connection& conn) {
#if defined(COLDGATE_PQXX_EXEC_PARAMS)
  conn.set_notice_handler([](pqxx::zview) noexcept {});
  return nullptr;
#else
  return std::make_shared<QuietHandler>(conn);
#endif
}

}  // namespace coldgate::db
