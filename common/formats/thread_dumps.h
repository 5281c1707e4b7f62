#pragma once
// Thread dumps: the stacks of every thread of a process, printed by a debugger or a VM, one
// dump or many concatenated (the "poor man's profiler": dump every few milliseconds, count
// the stacks). pf folds three, each exactly as FlameGraph's collapser for it does with its
// default options, so `pf-collapse dump.txt` prints what `stackcollapse-X.pl dump.txt` does:
//
//   eu-stack   `eu-stack -p PID` (elfutils; with -i, -s, -m, -a, -b, -d, -r too): `PID n`
//              and `TID n:` lines end a stack, `#N  0xADDR NAME` lines are its frames,
//              leaf first (NAME is the rest of the line, " - MODULE" with -m included;
//              [unknown] without a name). stackcollapse-elfutils.pl.
//   gdb        `gdb -batch -ex "thread apply all bt" -p PID`: a `Thread ...` line starts a
//              stack, `#N  0xADDR in FUNC (args) at file:line` or `#N  FUNC (args) at ...`
//              lines are its frames (the function is the third blank-separated field after
//              the frame number, or the first when that holds no "0x"), any other line ends
//              it. stackcollapse-gdb.pl.
//   jstack     Java thread dumps (`jstack PID`, `jcmd PID Thread.print`, kill -3): a
//              `"NAME" ...` line starts a thread, `at CLASS.METHOD(...)` lines are its
//              frames, a blank line ends it; only RUNNABLE threads are kept (the JVM's
//              compiler, signal, service and attach threads and threads in epoll waits or
//              socket accept/read count as not runnable), under a first frame that is the
//              thread's name without a trailing "-NUMBER". stackcollapse-jstack.pl.
//
// The three share one shape, a stream of lines that start, extend and end a stack, so one
// reader (thread_dumps.cpp) runs each format's line rules over the input. Each stack counts
// one sample. Where pf differs from the scripts: lines ending in "\r\n" are read without the
// '\r' (the scripts keep it, and jstack.pl then sees no blank line in a Windows dump).

#include <string_view>

#include "io/input.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"

namespace pf {

enum class ThreadDumpFormat { kEuStack, kGdb, kJstack };

/// Reads thread dumps of format `format` into a tree of samples. Throws pf::Error when no
/// line of the input is one of the format's; notes in `report` what it left out (jstack's
/// threads that were not RUNNABLE).
StackTree ReadThreadDumps(ThreadDumpFormat format, ByteSource& source, ReadReport* report);

/// The line shapes the sniffer recognises the formats by (formats/sniff.cpp).
/// eu-stack: "PID 123 - process" (or "- core"), "TID 123:".
bool IsEuStackPidLine(std::string_view line);
bool IsEuStackTidLine(std::string_view line);
/// eu-stack: "#0  0x00007f3a5c8e4a3d NAME".
bool IsEuStackFrame(std::string_view line);
/// gdb: "Thread 2 (Thread 0x7f... (LWP 123) "name"):" (and gdb's other thread targets).
bool IsGdbThreadLine(std::string_view line);
/// gdb: "#0  0x... in FUNC (...)" or "#1  FUNC (...) at FILE:LINE".
bool IsGdbFrame(std::string_view line);
/// jstack: "Full thread dump ..." or a thread's (indented) state line.
bool IsJstackLine(std::string_view line);

}  // namespace pf
