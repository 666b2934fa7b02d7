# Turn a text file into a C source that defines `const char SYMBOL[]` (NUL-terminated).
# Usage: cmake -DIN=file.md -DOUT=file.c -DSYMBOL=name -P embed_text.cmake
# HTML comments (the specs of `underfed readme`'s generated figures) are left out: the terminal
# shows the figures, not how they are made.
file(READ "${IN}" text)
string(REGEX REPLACE "<!--[^>]*-->" "" text "${text}")
file(WRITE "${OUT}.md.tmp" "${text}")
file(READ "${OUT}.md.tmp" hex HEX)
file(REMOVE "${OUT}.md.tmp")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by cmake/embed_text.cmake. */\nconst char ${SYMBOL}[] = {\n${bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
