#pragma once
// Helpers shared by the unit tests.
#include <fstream>
#include <sstream>
#include <string>

#include "collapse/collapse.h"
#include "io/output.h"

namespace pf::test {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

/// Folds `text` (perf script or folded) in memory and returns the folded output.
inline std::string Collapse(std::string_view text, const CollapseOptions& opt = {},
                            CollapseReport* report = nullptr) {
  std::vector<std::unique_ptr<ByteSource>> sources;
  sources.push_back(MemoryInput(text, "in.txt"));
  StringSink sink;
  CollapseReport local;
  CollapseSources(std::move(sources), opt, sink, report ? report : &local);
  return sink.data();
}

inline const std::string kCorpus = PF_CORPUS_DIR;

}  // namespace pf::test
