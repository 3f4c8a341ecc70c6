// One line out of a LibTorch exception (see torch_errors.h).
#include "hw/model/torch_errors.h"

#include <c10/util/Exception.h>

namespace pipeworks::hw {
namespace {

// The TorchScript interpreter's message: a header, the traceback of the scripted code, then
// the error itself on the last non-empty line.
std::string interpreter_error(const std::string& text) {
  const std::size_t end = text.find_last_not_of(" \n");
  if (end == std::string::npos) return text;
  const std::size_t newline = text.rfind('\n', end);
  const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(begin, end + 1 - begin);
}

}  // namespace

std::string torch_error_message(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  const std::size_t stack = text.find("\nException raised from ");
  if (stack != std::string::npos) text.resize(stack);
  if (text.find("The following operation failed in the TorchScript interpreter") != std::string::npos) {
    return interpreter_error(text);
  }
  return text;
}

}  // namespace pipeworks::hw
