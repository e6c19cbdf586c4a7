#pragma once

#include <cstdint>
#include <string>

#include "canon/document.hpp"

namespace coldgate::canon {

/// Appends the compact canonical text (no whitespace) of the arranged subtree at `node` to `out`.
void write_compact(const Document& document, std::uint32_t node, std::string& out);

}  // namespace coldgate::canon
