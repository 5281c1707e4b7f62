// Replays fuzz inputs without libFuzzer, so every corpus runs under plain ctest (and under
// the sanitizer build): fuzz_X_replay DIR_OR_FILE...
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
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
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    // Prefixes too: truncated input must never crash. Inputs up to 4 KiB are cut at every
    // offset (a small recording, cut everywhere), larger ones at 32 places.
    if (data.size() <= (1 << 16)) {
      size_t step = data.size() <= (4 << 10) ? 1 : 1 + data.size() / 32;
      for (size_t n = 0; n < data.size(); n += step) {
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), n);
      }
    }
  }
  std::printf("%zu inputs replayed\n", files.size());
  return 0;
}
