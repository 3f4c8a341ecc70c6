// What a LibTorch exception says, for one line of a pipeworks error: without the C++ backtrace
// LibTorch appends, and for an error raised inside TorchScript code (a user's model) the
// interpreter's final line ("RuntimeError: mat1 and mat2 shapes cannot be multiplied ...")
// rather than its traceback of the scripted source.
#pragma once

#include <exception>
#include <string>

namespace pipeworks::hw {

std::string torch_error_message(const std::exception& e);

}  // namespace pipeworks::hw
