#pragma once
// A strict, bounded JSON pull reader (RFC 8259), for the profilers' JSON pf reads (Chrome and
// V8 .cpuprofile, formats/cpuprofile.h) and for recognising it (formats/sniff.cpp).
//
// A pull reader rather than a document: the caller walks the text in order (BeginObject /
// NextMember, BeginArray / NextElement, String, Number, Skip) and keeps only what it needs,
// so a profile of hundreds of megabytes costs its stack tree, not a tree of JSON values.
// Strict: no comments, no trailing commas, no leading zeros, no control characters in
// strings, \u escapes (with surrogate pairs) decoded to UTF-8, one value and only whitespace
// after it (a UTF-8 byte-order mark is allowed first). Bounded: nesting deeper than
// kMaxDepth is refused, and Skip walks without recursion. Errors are pf::Error naming the
// input and the line and column of the byte that is wrong.

#include <cstdint>
#include <string>
#include <string_view>

namespace pf {

class JsonReader {
 public:
  enum class Type { kObject, kArray, kString, kNumber, kTrue, kFalse, kNull };
  static constexpr int kMaxDepth = 512;

  /// Reads `text` (which must outlive the reader); `name` is the input's, for errors.
  JsonReader(std::string_view text, std::string name);

  /// The type of the next value (whitespace skipped). Throws at the end of the text or at
  /// a byte that starts no value.
  Type Peek();
  /// Enters an object; NextMember then gives its keys one by one (false after the last,
  /// having consumed the '}'); after each key the caller reads or skips its value.
  void BeginObject();
  bool NextMember(std::string* key);
  /// Enters an array; NextElement is true before each element (which the caller reads or
  /// skips) and false after the last, having consumed the ']'.
  void BeginArray();
  bool NextElement();
  /// A string value, unescaped.
  std::string String();
  /// A number value, as a double (integers above 2^53 lose precision).
  double Number();
  /// A number value that must be an integer in int64_t's range (no fraction or exponent).
  int64_t Int();
  /// true or false.
  bool Bool();
  /// Consumes null.
  void Null();
  /// Skips one value of any type, however deep (within kMaxDepth).
  void Skip();
  /// Checks that only whitespace remains.
  void End();

  /// Where the next byte is, "LINE:COLUMN" (1-based), for messages.
  std::string Position() const;
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  bool NextIn(char open, char close, const char* not_in);
  void SkipSpace();
  char Expect(char c);
  void ScanString(std::string* out);
  std::string_view ScanNumber();
  void Literal(std::string_view word);
  void Enter();

  std::string_view text_;
  std::string name_;
  size_t pos_ = 0;
  // The containers entered, innermost last: '{' or '[', and whether each has had no
  // element yet (so NextMember/NextElement know whether a comma comes first).
  std::string kinds_;
  std::string first_;
};

}  // namespace pf
