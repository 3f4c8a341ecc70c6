// Why `pipeworks` does not load LibTorch for the commands that do not need it: loading it takes
// about 0.5 s and 500 MB before main runs, more than a small plan or simulation takes. Where the
// build has LibTorch, `pipeworks` holds the commands of PIPEWORKS_CLI_COMMANDS and hands every
// other command line (run, profile, launch, the top-level help and version) to its sibling
// executable `pipeworks-torch`, which holds all of them, by exec: the same process, arguments,
// streams and exit code.
#pragma once

#include <string_view>

namespace pipeworks::cli {

// Whether `pipeworks` runs this command line itself: its first argument names a command of
// PIPEWORKS_CLI_COMMANDS.
bool runs_without_torch(int argc, char** argv);

// Replaces this process with `sibling`, found next to this executable, given `argv` unchanged;
// returns only when that fails, after naming the file and the reason on stderr (exit code 1).
int exec_sibling(std::string_view sibling, char** argv);

}  // namespace pipeworks::cli
