// OpenOutput never destroys what is at the path: devices, FIFOs and descriptors are written
// through, symlinks followed, hard-linked files rewritten in place, replaced files keep their
// mode and owner, and the partial files of killed runs are cleaned up.
#include "io/output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/intern.h"
#include "test_util.h"

namespace pf {
namespace {

namespace fs = std::filesystem;

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pf-output-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  static void Write(const std::string& path, std::string_view text,
                    const OutputOptions& o = {}) {
    std::unique_ptr<ByteSink> sink = OpenOutput(path, o);
    sink->WriteAll(text);
    sink->Commit();
  }
  /// The names in the directory, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir_;
};

// A padded append writes what Append writes, whatever the name's length and wherever the
// buffer stands (short names copied as 64 bytes, long ones and a nearly full buffer not).
TEST(BufferedWriter, AppendPaddedWritesWhatAppendWrites) {
  Interner names;
  std::vector<StrId> ids;
  for (size_t n = 0; n <= 150; ++n) ids.push_back(names.Intern(std::string(n, 'a' + n % 26)));
  for (size_t capacity : {size_t{1}, size_t{63}, size_t{64}, size_t{100}, size_t{1} << 20}) {
    SCOPED_TRACE(capacity);
    StringSink padded, plain;
    BufferedWriter a(padded, capacity), b(plain, capacity);
    for (int round = 0; round < 3; ++round) {
      for (StrId id : ids) {
        a.AppendPadded(names.Name(id));
        a.Append(';');
        b.Append(names.Name(id));
        b.Append(';');
      }
    }
    a.Flush();
    b.Flush();
    EXPECT_EQ(padded.data(), plain.data());
  }
}

TEST_F(OutputTest, NewFileIsWrittenWithNoPartialLeft) {
  Write(Path("out.txt"), "hello\n");
  EXPECT_EQ(test::ReadFile(Path("out.txt")), "hello\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"out.txt"});
}

TEST_F(OutputTest, FailedRunKeepsTheOldFile) {
  Write(Path("out.txt"), "old\n");
  {
    std::unique_ptr<ByteSink> sink = OpenOutput(Path("out.txt"));
    sink->WriteAll("half");
  }  // no Commit: the run failed
  EXPECT_EQ(test::ReadFile(Path("out.txt")), "old\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"out.txt"});
}

TEST_F(OutputTest, DeviceNodeIsWrittenThrough) {
  std::string dev = Path("null");
  if (mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod refused: " << std::strerror(errno);
  }
  Write(dev, "into the void\n");
  struct stat st;
  ASSERT_EQ(lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(Names(), std::vector<std::string>{"null"});
}

TEST_F(OutputTest, FifoIsWrittenThroughToItsReader) {
  std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = test::ReadFile(fifo); });
  Write(fifo, "through the pipe\n");
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(OutputTest, UnixSocketIsConnectedTo) {
  std::string path = Path("sock");
  int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  std::string got;
  std::thread reader([&] {
    int c = accept(listener, nullptr, nullptr);
    char buf[64];
    ssize_t n;
    while ((n = read(c, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
    close(c);
  });
  Write(path, "over a socket\n");
  reader.join();
  close(listener);
  EXPECT_EQ(got, "over a socket\n");
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
}

TEST_F(OutputTest, SymlinkIsFollowedToItsTarget) {
  Write(Path("target.txt"), "old\n");
  ASSERT_EQ(symlink("target.txt", Path("link").c_str()), 0);
  Write(Path("link"), "new\n");
  struct stat st;
  ASSERT_EQ(lstat(Path("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(test::ReadFile(Path("target.txt")), "new\n");
  // A dangling link creates its target, as the shell's > does.
  ASSERT_EQ(symlink("sub-target.txt", Path("dangling").c_str()), 0);
  Write(Path("dangling"), "made\n");
  ASSERT_EQ(lstat(Path("dangling").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(test::ReadFile(Path("sub-target.txt")), "made\n");
}

// pf-record's default ./perf.data: the old one becomes perf.data.old, a symbolic link as
// perf moves it (the link itself), so the file it names is never written over.
TEST_F(OutputTest, KeepAsOldMovesAFileOrALinkNeverItsTarget) {
  Write(Path("perf.data"), "first\n");
  EXPECT_TRUE(KeepAsOld(Path("perf.data")));
  EXPECT_EQ(test::ReadFile(Path("perf.data.old")), "first\n");
  EXPECT_FALSE(KeepAsOld(Path("perf.data")));  // nothing there any more
  Write(Path("real.txt"), "keep me\n");
  ASSERT_EQ(symlink("real.txt", Path("perf.data").c_str()), 0);
  EXPECT_TRUE(KeepAsOld(Path("perf.data")));
  struct stat st;
  ASSERT_EQ(lstat(Path("perf.data.old").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(lstat(Path("perf.data").c_str(), &st), 0);
  Write(Path("perf.data"), "new\n");
  EXPECT_EQ(test::ReadFile(Path("real.txt")), "keep me\n");
}

TEST_F(OutputTest, DescriptorPathsAreWrittenThrough) {
  // /dev/stdout with standard output appended to a file: the bytes land after what is there.
  std::string file = Path("stdout.txt");
  Write(file, "first\n");
  int saved = dup(1);
  int fd = open(file.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  fflush(stdout);
  dup2(fd, 1);
  close(fd);
  std::string error;
  try {
    Write("/dev/stdout", "second\n");
  } catch (const Error& e) {
    error = e.what();
  }
  dup2(saved, 1);
  close(saved);
  EXPECT_EQ(error, "");
  EXPECT_EQ(test::ReadFile(file), "first\nsecond\n");
  struct stat st;
  ASSERT_EQ(lstat("/dev/stdout", &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));

  // /proc/self/fd/N and a link to /dev/fd/N, for a pipe.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  Write("/proc/self/fd/" + std::to_string(p[1]), "a");
  ASSERT_EQ(symlink(("/dev/fd/" + std::to_string(p[1])).c_str(), Path("fd-link").c_str()), 0);
  Write(Path("fd-link"), "b");
  close(p[1]);
  char buf[8] = {};
  EXPECT_EQ(read(p[0], buf, sizeof buf), 2);
  EXPECT_EQ(std::string(buf), "ab");
  close(p[0]);
  ASSERT_EQ(lstat(Path("fd-link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(OutputTest, HardLinkedFileIsRewrittenInPlace) {
  std::string a = Path("a.txt"), b = Path("b.txt");
  Write(a, "old old old\n");
  ASSERT_EQ(chmod(a.c_str(), 0600), 0);
  ASSERT_EQ(link(a.c_str(), b.c_str()), 0);
  struct stat before, after;
  ASSERT_EQ(stat(a.c_str(), &before), 0);
  Write(a, "new\n");
  ASSERT_EQ(stat(a.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_nlink, 2u);
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_EQ(test::ReadFile(b), "new\n");
}

TEST_F(OutputTest, ReplacedFileKeepsModeAndOwner) {
  std::string a = Path("a.txt");
  Write(a, "old\n");
  ASSERT_EQ(chmod(a.c_str(), 0600), 0);
  bool chowned = geteuid() == 0 && chown(a.c_str(), 4321, 4322) == 0;
  Write(a, "new\n");
  struct stat st;
  ASSERT_EQ(stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  if (chowned) {
    EXPECT_EQ(st.st_uid, 4321u);
    EXPECT_EQ(st.st_gid, 4322u);
  }
  EXPECT_EQ(test::ReadFile(a), "new\n");
}

TEST_F(OutputTest, PartialFilesOfKilledRunsAreRemoved) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // a process that is gone
  std::string stale = Path("out.svg") + std::string(kPartialSuffix) + std::to_string(child);
  std::string live = Path("out.svg") + std::string(kPartialSuffix) + "1";  // init
  Write(stale, "cut");
  Write(live, "running");
  Write(Path("out.svg.pf-partial.x"), "not ours");
  Write(Path("out.svg"), "whole\n");
  EXPECT_FALSE(test::FileExists(stale));
  EXPECT_TRUE(test::FileExists(live));
  EXPECT_TRUE(test::FileExists(Path("out.svg.pf-partial.x")));
  EXPECT_EQ(test::ReadFile(Path("out.svg")), "whole\n");
}

TEST_F(OutputTest, NewFileInPlaceIsThereWhileWritten) {
  OutputOptions in_place{.new_file_in_place = true};
  std::string rec = Path("run.pfs");
  {
    std::unique_ptr<ByteSink> sink = OpenOutput(rec, in_place);
    sink->WriteAll("records");
    EXPECT_EQ(test::ReadFile(rec), "records");
  }  // killed or failed after writing: what was written stays
  EXPECT_EQ(test::ReadFile(rec), "records");
  std::string empty = Path("empty.pfs");
  { std::unique_ptr<ByteSink> sink = OpenOutput(empty, in_place); }  // failed before writing
  EXPECT_FALSE(test::FileExists(empty));
  // An existing file is still replaced only at the end.
  {
    std::unique_ptr<ByteSink> sink = OpenOutput(rec, in_place);
    sink->WriteAll("other");
  }
  EXPECT_EQ(test::ReadFile(rec), "records");
}

TEST_F(OutputTest, DescriptorPathOnATerminalIsATerminal) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) GTEST_SKIP() << "no pty";
  int tty = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(tty, 0);
  EXPECT_TRUE(OutputIsTerminal("/dev/fd/" + std::to_string(tty)));
  EXPECT_TRUE(OutputIsTerminal("/proc/self/fd/" + std::to_string(tty)));
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_FALSE(OutputIsTerminal("/dev/fd/" + std::to_string(p[1])));
  EXPECT_FALSE(OutputIsTerminal(Path("file")));
  for (int fd : {tty, master, p[0], p[1]}) close(fd);
}

TEST_F(OutputTest, DirectoryIsRefused) {
  EXPECT_THROW(OpenOutput(dir_), Error);
}

}  // namespace
}  // namespace pf
