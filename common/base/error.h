#pragma once
// The errors of the library. Library code never prints and never exits: it throws pf::Error
// for bad data or a failed operation, pf::UsageError for a bad option or argument, and
// writers throw pf::PipeClosed when the reader of the output went away. The tool boundary
// (cli::Tool::Run, cli/cli.h) turns them into `pf-x: error: WHERE: what` and exit status 1,
// one line plus a hint and exit status 2, and a quiet exit status 0.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pf {

class Error : public std::runtime_error {
 public:
  /// An error with no location (environment, options).
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  /// An error at `where`, usually "FILE:LINE" or "FILE" (see Where()).
  Error(std::string where, const std::string& what)
      : std::runtime_error(what), where_(std::move(where)) {}

  const std::string& where() const { return where_; }
  /// "where: what", or "what" when there is no location.
  std::string Describe() const;

 private:
  std::string where_;
};

/// A usage error: bad option or argument. Exit status 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

/// Thrown by writers when the reader of our output went away (EPIPE). Tools end quietly.
class PipeClosed : public std::exception {
 public:
  const char* what() const noexcept override { return "output pipe closed"; }
};

/// "FILE:LINE" for messages.
std::string Where(std::string_view file, uint64_t line);

}  // namespace pf
