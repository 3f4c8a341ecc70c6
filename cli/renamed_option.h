// Options renamed for one vocabulary across commands (docs/cli.md): the new name is the option,
// the old spelling stays accepted so scripts keep working, listed in --help under "Deprecated"
// and answered with one line on standard error:
//   pipeworks run: note: --threads is deprecated; use --intra-op-threads
// Both spellings fill the same variable and take the same checks; giving both is a usage error.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace pipeworks::cli {

// The group --help lists old spellings under.
inline constexpr const char* kDeprecatedGroup = "Deprecated";

// Prints the note once per command line, however many values the old spelling was given.
inline void note_on_use(CLI::App& command, CLI::Option& old_spelling, const std::string& new_name) {
  auto noted = std::make_shared<bool>(false);
  const std::string note =
      "pipeworks " + command.get_name() + ": note: " + old_spelling.get_name() + " is deprecated; use " + new_name;
  old_spelling.each([noted, note](const std::string&) {
    if (*noted) return;
    *noted = true;
    std::cerr << note << "\n";
  });
}

// Adds `name` (e.g. "--intra-op-threads") and its old spelling `old_name` ("--threads") on one
// variable; `configure` attaches the checks and default display to both. Returns the new option.
template <typename T>
CLI::Option* add_renamed_option(CLI::App& command, const std::string& name, const std::string& old_name, T& value,
                                const std::string& help, const std::function<void(CLI::Option&)>& configure) {
  CLI::Option* option = command.add_option(name, value, help);
  configure(*option);
  CLI::Option* old = command.add_option(old_name, value, "old spelling of " + option->get_name());
  configure(*old);
  old->group(kDeprecatedGroup)->excludes(option);
  option->excludes(old);
  note_on_use(command, *old, option->get_name());
  return option;
}

}  // namespace pipeworks::cli
