// Replays fuzz inputs without libFuzzer, so every corpus runs under plain ctest (and under
// the sanitizer build): fuzz_X_replay DIR_OR_FILE...
//
// Every case (each whole input and each prefix of it) is copied into a heap buffer of exactly
// its length before the target sees it, so a read one byte past the end is an ASan report
// rather than a silent read of the rest of the file.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Collect(const std::string& path, std::vector<std::string>* files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    files->push_back(path);
    return;
  }
  DIR* d = opendir(path.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    Collect(path + "/" + n, files);
  }
  closedir(d);
}

// Runs the target on the first `size` bytes of `data`, copied to a buffer of exactly `size`
// bytes (an empty case gets a zero-length allocation of its own).
void RunExact(const std::string& data, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size]);
  if (size != 0) std::memcpy(copy.get(), data.data(), size);
  LLVMFuzzerTestOneInput(copy.get(), size);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) Collect(argv[i], &files);
  if (files.empty()) {
    std::fprintf(stderr, "no fuzz inputs found\n");
    return 1;
  }
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string data = ss.str();
    RunExact(data, data.size());
    // Prefixes too: truncated input must never crash. Inputs up to 4 KiB are cut at every
    // offset (a small recording, cut everywhere), larger ones at 32 places.
    if (data.size() <= (1 << 16)) {
      size_t step = data.size() <= (4 << 10) ? 1 : 1 + data.size() / 32;
      for (size_t n = 0; n < data.size(); n += step) {
        RunExact(data, n);
      }
    }
  }
  std::printf("%zu inputs replayed\n", files.size());
  return 0;
}
