// The JSON pull reader (formats/json.h). Containers are a stack of kinds ('{' or '[') with,
// per level, whether an element has been read, so NextMember/NextElement know whether a
// comma or the first element comes; Skip drives the same calls in a loop, so no input can
// recurse the reader deeper than kMaxDepth levels of that stack.

#include "formats/json.h"

#include <charconv>
#include <cstring>

#include "base/error.h"
#include "base/hex.h"

namespace pf {

JsonReader::JsonReader(std::string_view text, std::string name)
    : text_(text), name_(std::move(name)) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 byte-order mark
}

// The line of the next byte, and its column (1-based), for messages.
std::string JsonReader::Position() const {
  size_t line = 1, start = 0;
  for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(pos_ - start + 1);
}

void JsonReader::Fail(const std::string& what) const {
  std::string at = Position();
  size_t colon = at.find(':');
  throw Error(Where(name_, std::stoull(at.substr(0, colon))),
              "JSON: " + what + " (column " + at.substr(colon + 1) + ")");
}

void JsonReader::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    ++pos_;
  }
}

char JsonReader::Expect(char c) {
  SkipSpace();
  if (pos_ >= text_.size()) Fail(std::string("the text ends where '") + c + "' was expected");
  if (text_[pos_] != c) Fail(std::string("'") + c + "' expected");
  return text_[pos_++];
}

JsonReader::Type JsonReader::Peek() {
  SkipSpace();
  if (pos_ >= text_.size()) Fail("the text ends where a value was expected");
  switch (text_[pos_]) {
    case '{':
      return Type::kObject;
    case '[':
      return Type::kArray;
    case '"':
      return Type::kString;
    case 't':
      return Type::kTrue;
    case 'f':
      return Type::kFalse;
    case 'n':
      return Type::kNull;
    default:
      break;
  }
  char c = text_[pos_];
  if (c == '-' || (c >= '0' && c <= '9')) return Type::kNumber;
  Fail("a value expected");
}

void JsonReader::Enter() {
  if (kinds_.size() >= static_cast<size_t>(kMaxDepth)) {
    Fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
}

void JsonReader::BeginObject() {
  Enter();
  Expect('{');
  kinds_.push_back('{');
  first_.push_back(1);
}

void JsonReader::BeginArray() {
  Enter();
  Expect('[');
  kinds_.push_back('[');
  first_.push_back(1);
}

// Steps into the next member or element of the innermost container, which `open` must have
// opened: false at its end (`close`), which it leaves.
bool JsonReader::NextIn(char open, char close, const char* not_in) {
  if (kinds_.empty() || kinds_.back() != open) Fail(not_in);
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    kinds_.pop_back();
    first_.pop_back();
    return false;
  }
  if (!first_.back()) Expect(',');
  first_.back() = 0;
  return true;
}

bool JsonReader::NextMember(std::string* key) {
  if (!NextIn('{', '}', "not in an object")) return false;
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"') Fail("a member name expected");
  ScanString(key);
  Expect(':');
  return true;
}

bool JsonReader::NextElement() { return NextIn('[', ']', "not in an array"); }

namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

// At the opening quote; leaves pos_ after the closing one. `out` (cleared) may be null.
void JsonReader::ScanString(std::string* out) {
  if (out) out->clear();
  ++pos_;
  auto hex4 = [&](uint32_t* v) {
    if (text_.size() - pos_ < 4) Fail("a \\u escape cut short");
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      int d = HexDigit(text_[pos_ + i]);
      if (d < 0) Fail("a \\u escape with a non-hex digit");
      *v = *v * 16 + static_cast<uint32_t>(d);
    }
    pos_ += 4;
  };
  while (true) {
    size_t start = pos_;
    while (pos_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"' || c == '\\' || c < 0x20) break;
      ++pos_;
    }
    if (out) out->append(text_.data() + start, pos_ - start);
    if (pos_ >= text_.size()) Fail("a string is not closed");
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return;
    }
    if (c != '\\') Fail("a control character in a string");
    if (++pos_ >= text_.size()) Fail("a string is not closed");
    char e = text_[pos_++];
    char plain = 0;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': {
        uint32_t cp;
        hex4(&cp);
        if (cp >= 0xDC00 && cp <= 0xDFFF) Fail("a lone low surrogate in a \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (text_.substr(pos_, 2) != "\\u") Fail("a high surrogate without its low half");
          pos_ += 2;
          hex4(&lo);
          if (lo < 0xDC00 || lo > 0xDFFF) Fail("a high surrogate without its low half");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (out) AppendUtf8(cp, out);
        continue;
      }
      default:
        --pos_;
        Fail("an unknown escape in a string");
    }
    if (out) out->push_back(plain);
  }
}

std::string JsonReader::String() {
  if (Peek() != Type::kString) Fail("a string expected");
  std::string s;
  ScanString(&s);
  return s;
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
std::string_view JsonReader::ScanNumber() {
  if (Peek() != Type::kNumber) Fail("a number expected");
  size_t start = pos_;
  auto digits = [&]() {
    size_t from = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ - from;
  };
  if (text_[pos_] == '-') ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
  } else if (digits() == 0) {
    Fail("a number without digits");
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) Fail("a number without digits after its point");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (digits() == 0) Fail("a number without digits in its exponent");
  }
  return text_.substr(start, pos_ - start);
}

double JsonReader::Number() {
  std::string_view s = ScanNumber();
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc()) Fail("a number out of range");
  return v;
}

int64_t JsonReader::Int() {
  std::string_view s = ScanNumber();
  if (s.find_first_of(".eE") != std::string_view::npos) Fail("an integer expected");
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc()) Fail("an integer out of range");
  return v;
}

void JsonReader::Literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) Fail("a value expected");
  pos_ += word.size();
}

bool JsonReader::Bool() {
  Type t = Peek();
  if (t == Type::kTrue) {
    Literal("true");
    return true;
  }
  if (t != Type::kFalse) Fail("true or false expected");
  Literal("false");
  return false;
}

void JsonReader::Null() {
  if (Peek() != Type::kNull) Fail("null expected");
  Literal("null");
}

void JsonReader::Skip() {
  const size_t base = kinds_.size();
  do {
    if (kinds_.size() > base) {
      bool more = kinds_.back() == '{' ? NextMember(nullptr) : NextElement();
      if (!more) continue;
    }
    switch (Peek()) {
      case Type::kObject:
        BeginObject();
        break;
      case Type::kArray:
        BeginArray();
        break;
      case Type::kString:
        ScanString(nullptr);
        break;
      case Type::kNumber:
        ScanNumber();
        break;
      case Type::kTrue:
      case Type::kFalse:
        Bool();
        break;
      case Type::kNull:
        Null();
        break;
    }
  } while (kinds_.size() > base);
}

void JsonReader::End() {
  SkipSpace();
  if (!kinds_.empty()) Fail("an object or array is not closed");
  if (pos_ != text_.size()) Fail("more after the value");
}

}  // namespace pf
