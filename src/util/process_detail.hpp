#pragma once

// What process.cpp (waiting, records) and spawn.cpp (starting) share; internal to util.

#include <sys/types.h>

#include <string>

namespace coldgate::util::detail {

/// Counts `pid` among the children live Process objects own and writes its record when
/// recording (record_children_in).
void track(pid_t pid);

/// Undoes track(): `pid` was reaped.
void untrack(pid_t pid);

/// "COLDGATE_RECORDED_IN=<records folder>" while recording, else "".
std::string recorded_in_entry();

/// Closes `fd` when it is open and sets it to -1.
void close_fd(int& fd);

}  // namespace coldgate::util::detail
