#include "io/input.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"
#include "io/line_reader.h"
#include "io/page_ahead.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Drain(ByteSource& s) {
  std::string out;
  for (std::string_view c = s.Next(); !c.empty(); c = s.Next()) out.append(c);
  return out;
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = data.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

std::string BigText() {
  std::string s;
  for (int i = 0; i < 300000; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

TEST(Input, MemoryIsStableAndWhole) {
  auto src = MemoryInput("abc\n");
  EXPECT_TRUE(src->stable());
  EXPECT_EQ(src->Peek(), "abc\n");
  EXPECT_EQ(Drain(*src), "abc\n");
}

TEST(Input, GzipAndZstdByMagic) {
  std::string text = BigText();
  std::string gz = Gzip(text), zs = Zstd(text);
  EXPECT_EQ(DetectCompression(gz), Compression::kGzip);
  EXPECT_EQ(DetectCompression(zs), Compression::kZstd);
  EXPECT_EQ(DetectCompression(text), Compression::kNone);
  auto g = MemoryInput(gz);
  EXPECT_EQ(g->Peek().substr(0, 7), "line 0\n");
  EXPECT_EQ(Drain(*g), text);
  auto z = MemoryInput(zs);
  EXPECT_EQ(Drain(*z), text);
  // Concatenated gzip members read as one stream, as gunzip does.
  std::string members = Gzip("a\n") + Gzip("b\n");
  auto two = MemoryInput(members);
  EXPECT_EQ(Drain(*two), "a\nb\n");
}

TEST(Input, TruncatedAndCorruptCompressedDataIsAnError) {
  std::string gz = Gzip(BigText());
  std::string cut = gz.substr(0, gz.size() / 2);
  auto g = MemoryInput(cut, "cut.gz");
  EXPECT_THROW(Drain(*g), Error);
  std::string bad = gz;
  for (size_t i = 20; i < 200; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  auto b = MemoryInput(bad, "bad.gz");
  EXPECT_THROW(Drain(*b), Error);
  std::string zs = Zstd(BigText());
  std::string zcut = zs.substr(0, zs.size() - 10);
  auto z = MemoryInput(zcut, "cut.zst");
  EXPECT_THROW(Drain(*z), Error);
}

// A temporary file holding `text`; its path.
std::string TempFile(const std::string& text) {
  char path[] = "/tmp/pf-input-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

TEST(Input, FilesArePipesAreRead) {
  std::string text = BigText();
  const std::string path = TempFile(text);
  auto f = OpenInput(path);
  EXPECT_TRUE(f->stable());
  EXPECT_EQ(Drain(*f), text);
  // A pipe is read in blocks.
  std::string cmd = std::string("cat ") + path;
  FILE* p = popen(cmd.c_str(), "r");
  int saved = dup(0);
  dup2(fileno(p), 0);
  auto s = OpenInput("-");
  EXPECT_FALSE(s->stable());
  EXPECT_EQ(s->name(), "<stdin>");
  EXPECT_EQ(Drain(*s), text);
  dup2(saved, 0);
  pclose(p);
  // Standard input redirected from a file is mapped as the file is, and left at its end;
  // one already read from is read from where it stands.
  int file = open(path.c_str(), O_RDONLY);
  ASSERT_GE(file, 0);
  dup2(file, 0);
  auto redirected = OpenInput("-");
  EXPECT_TRUE(redirected->stable());
  EXPECT_EQ(redirected->name(), "<stdin>");
  EXPECT_EQ(Drain(*redirected), text);
  EXPECT_EQ(lseek(0, 0, SEEK_CUR), static_cast<off_t>(text.size()));
  lseek(0, 10, SEEK_SET);
  auto rest = OpenInput("-");
  EXPECT_FALSE(rest->stable());
  EXPECT_EQ(Drain(*rest), text.substr(10));
  dup2(saved, 0);
  close(saved);
  close(file);
  unlink(path.c_str());
  try {
    OpenInput("/nonexistent/pf-file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.Describe(), "/nonexistent/pf-file: cannot open: No such file or directory");
  }
  EXPECT_THROW(OpenInput("/tmp"), Error);
}

TEST(Input, FilesAreMappedToBeReadAheadInHugeFolios) {
  std::string text = BigText();
  const std::string path = TempFile(text);
  auto f = OpenInput(path);
  unlink(path.c_str());
  std::string_view first = f->Next();
  ASSERT_EQ(first, text);
  // Read ahead in order, and what is read from disk cached in huge folios (where the kernel
  // has transparent huge pages).
  std::string flags = test::VmFlagsAt(first.data());
  ASSERT_NE(flags, "") << "no mapping holds the file's bytes";
  EXPECT_NE(flags.find(" sr "), std::string::npos) << flags;
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0) {
    EXPECT_NE(flags.find(" hg "), std::string::npos) << flags;
  }
}

TEST(LineSplitter, CrlfAndMissingFinalNewline) {
  LineSplitter s("a\r\nb\n\nc");
  std::string_view l;
  std::vector<std::string> got;
  while (s.Next(&l)) got.emplace_back(l);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "", "c"}));
}

TEST(LineSplitter, KeepCrKeepsTheBytes) {
  std::string text = "a\r\nb\r";
  LineSplitter s(text, LineSplitter::kKeepCr);
  std::string_view l;
  std::vector<std::string> got;
  while (s.Next(&l)) got.emplace_back(l);
  EXPECT_EQ(got, (std::vector<std::string>{"a\r", "b\r"}));
  EXPECT_EQ(s.position(), text.data() + text.size());
}

// Lines of every length around the 16-byte steps of the newline search, at every offset of
// the buffer: the same lines as a byte-by-byte split.
TEST(LineSplitter, EveryLengthAndOffset) {
  for (size_t offset = 0; offset < 16; ++offset) {
    std::string text(offset, 'x');
    std::vector<std::string> want;
    for (size_t len = 0; len < 150; ++len) {
      want.emplace_back(len, static_cast<char>('a' + len % 26));
      text += want.back() + "\n";
    }
    text += "tail";
    want.emplace_back("tail");
    LineSplitter s(std::string_view(text).substr(offset));
    std::string_view l;
    std::vector<std::string> got;
    while (s.Next(&l)) got.emplace_back(l);
    EXPECT_EQ(got, want) << "offset " << offset;
  }
}

// Blocks must cover the input exactly, in order, with correct line numbers, and in sample
// mode end after an empty line whenever there is one.
void CheckBlocks(ByteSource& src, const std::string& text, BlockReader::Cut cut, size_t size,
                 int min_blocks) {
  BlockReader r(src, cut, size);
  Block b;
  std::string joined;
  uint64_t line = 1;
  int n = 0;
  while (r.Next(&b)) {
    EXPECT_EQ(b.first_line, line);
    line += std::count(b.data.begin(), b.data.end(), '\n');
    joined.append(b.data);
    if (joined.size() < text.size()) {
      if (cut == BlockReader::kSampleBoundary) {
        EXPECT_TRUE(b.data.size() >= 2 && b.data.substr(b.data.size() - 2) == "\n\n");
      } else {
        EXPECT_EQ(b.data.back(), '\n');
      }
    }
    ++n;
  }
  EXPECT_EQ(joined, text);
  EXPECT_GE(n, min_blocks);
}

TEST(BlockReader, StableAndStreamCoverTheInput) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "comm 1 2.0: 1 cpu-clock:\n\t1 f (x)\n\t2 g (x)\n\n";
  }
  auto m = MemoryInput(text);
  CheckBlocks(*m, text, BlockReader::kSampleBoundary, 64 << 10, 10);
  auto m2 = MemoryInput(text);
  CheckBlocks(*m2, text, BlockReader::kLineBoundary, 64 << 10, 10);
  std::string zs = Zstd(text);
  auto z = MemoryInput(zs);  // a stream
  CheckBlocks(*z, text, BlockReader::kSampleBoundary, 64 << 10, 1);
}

// Blocks of 16 bytes, 64 to 256 bytes ahead of the reader, over 1 KiB aligned on 16.
TEST(PageAhead, MapsTheBlocksBetweenGapAndReachAheadOfTheReader) {
  alignas(16) static char input[1024];
  PageAhead ahead(std::string_view(input, sizeof input), 16, 64, 256);
  EXPECT_EQ(ahead.MapOne(), nullptr);  // the reader has not said where it is
  ahead.ReaderAt(input + 8);
  std::vector<const char*> touched;
  while (const void* p = ahead.MapOne()) touched.push_back(static_cast<const char*>(p));
  ASSERT_EQ(touched.size(), 13u);  // 8 + 64 rounded down to 64, then each below 8 + 256
  for (size_t i = 0; i < touched.size(); ++i) EXPECT_EQ(touched[i], input + 64 + 16 * i);
  // Done up to the reach: the reader moving on a little opens one more block.
  ahead.ReaderAt(input + 24);
  EXPECT_EQ(ahead.MapOne(), input + 272);
  EXPECT_EQ(ahead.MapOne(), nullptr);
  // Far on: the next block is the gap ahead again, not the one after the last.
  ahead.ReaderAt(input + 600);
  EXPECT_EQ(ahead.MapOne(), input + 656);
  // Nothing at or past the end.
  ahead.ReaderAt(input + 1000);
  EXPECT_EQ(ahead.MapOne(), nullptr);
  ahead.ReaderAt(input + 1024);
  EXPECT_EQ(ahead.MapOne(), nullptr);
}

TEST(PageAhead, TouchesNothingForAReaderOutsideTheInputOrNoInput) {
  alignas(16) static char input[1024];
  static char elsewhere[16];
  PageAhead ahead(std::string_view(input, sizeof input), 16, 64, 256);
  ahead.ReaderAt(elsewhere);  // an aligned copy of a record, a compressed record's contents
  EXPECT_EQ(ahead.MapOne(), nullptr);
  PageAhead none{std::string_view()};
  none.ReaderAt(input);
  EXPECT_EQ(none.MapOne(), nullptr);
}

}  // namespace
}  // namespace pf
