# Embeds a file as a C++ byte array: cmake -DIN=file -DOUT=file.cpp -DNAME=kName -P embed.cmake
# (used for share/flamegraph.js and .css, so binaries are self-contained).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/embed.cmake; do not edit.\n#include <cstddef>\nnamespace pf {\nextern const char ${NAME}[];\nextern const size_t ${NAME}Size;\nconst char ${NAME}[] = {\n${bytes}0};\nconst size_t ${NAME}Size = ${size};\n}  // namespace pf\n")
file(RENAME "${OUT}.tmp" "${OUT}")
